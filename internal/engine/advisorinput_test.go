package engine

import (
	"fmt"
	"testing"
)

// The query log keeps the most recently run distinct texts with their counts, evicting the
// least recently run past its size, and ignores texts too long to keep.
func TestQueryLog(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	c.RecordQuery("SELECT * FROM c WHERE c.pk = 'a'")
	for i := range queryLogSize {
		c.RecordQuery(fmt.Sprintf("SELECT * FROM c WHERE c.n = %d", i))
	}
	c.RecordQuery("SELECT * FROM c WHERE c.n = 1")
	c.RecordQuery(string(make([]byte, maxLoggedQuery+1)))
	qs := c.RecentQueries()
	if len(qs) != queryLogSize || qs[0] != (QueryCount{"SELECT * FROM c WHERE c.n = 1", 2}) {
		t.Fatalf("%d texts, first %+v", len(qs), qs[0])
	}
	for _, q := range qs {
		if q.Text == "SELECT * FROM c WHERE c.pk = 'a'" {
			t.Fatal("the least recently run text was kept")
		}
	}
}

// A sample is at most n distinct items, drawn from every partition, the same each time.
func TestSample(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{Throughput: &Throughput{Manual: 24000}})
	for i := range 400 {
		if _, err := c.CreateItem([]byte(fmt.Sprintf(`{"id":"%d","pk":"k%d"}`, i, i)), ItemOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	a, err := c.Sample(100, 10000)
	if err != nil || len(a) != 100 {
		t.Fatalf("sample: %d items, %v", len(a), err)
	}
	b, _ := c.Sample(100, 10000)
	seen := map[string]bool{}
	for i := range a {
		if string(a[i]) != string(b[i]) {
			t.Fatal("two samples differ")
		}
		seen[string(a[i])] = true
	}
	if len(seen) != 100 {
		t.Fatalf("%d distinct items in a sample of 100", len(seen))
	}
	all, _ := c.Sample(1000, 10000)
	if len(all) != 400 {
		t.Fatalf("a sample larger than the container has %d of its 400 items", len(all))
	}
	// A scan of 40 reads 10 from each of the 4 partitions.
	if few, _ := c.Sample(1000, 40); len(few) != 40 {
		t.Fatalf("a scan of 40 gave %d items", len(few))
	}
}

func BenchmarkRecordQuery(b *testing.B) {
	_, c := newContainer(b, Options{}, ContainerSpec{})
	texts := make([]string, 300) // more than the log holds: some records evict
	for i := range texts {
		texts[i] = fmt.Sprintf("SELECT * FROM c WHERE c.pk = @pk AND c.n > %d", i)
	}
	b.Run("hit", func(b *testing.B) {
		for b.Loop() {
			c.RecordQuery(texts[0])
		}
	})
	b.Run("mixed-with-evictions", func(b *testing.B) {
		i := 0
		for b.Loop() {
			c.RecordQuery(texts[i%len(texts)])
			i++
		}
	})
}
