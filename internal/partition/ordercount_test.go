package partition

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/storage"
)

// Every ORDER BY read in this package's tests that takes a count from memory checks it
// against storage (and panics when they differ).
func init() { VerifyOrderCounts(true) }

// The counts' bookkeeping: a count read from a snapshot takes the writes noted after the
// snapshot's LSN and not those before; a write that was not noted, or a drop, forgets it.
func TestOrderCountsBookkeeping(t *testing.T) {
	prefix := storage.IndexPathPrefix("/a")
	term := func(v byte) []byte { return append(append([]byte(nil), prefix...), v, 1) }
	write := func(lsn uint64, del, add [][]byte) *Command {
		return &Command{LSN: lsn, Changes: []Change{{IndexDel: del, IndexAdd: add}}}
	}
	value, array := term(0x04), term(0x06)
	other := storage.IndexPathPrefix("/ab") // another path that starts alike
	other = append(other, 0x04, 1)
	lookup := func(c *orderCounts, lsn uint64) string {
		v, o, ok := c.lookup(prefix, lsn)
		if !ok {
			return "-"
		}
		return fmt.Sprintf("%d/%d", v, o)
	}

	var c orderCounts
	k := c.begin(prefix)
	if c.begin(prefix) != nil {
		t.Fatal("a path being counted was begun again")
	}
	c.note(write(4, nil, [][]byte{value}))             // in the snapshot below
	c.note(write(5, nil, [][]byte{value, array}))      // after it
	c.note(write(6, [][]byte{value}, [][]byte{other})) // after it; other is not /a's
	if got := lookup(&c, 5); got != "-" {
		t.Fatalf("a count being read answered %s", got)
	}
	c.finish(k, 4, 10, 0)
	for lsn, want := range map[uint64]string{3: "-", 4: "10/0", 5: "11/1", 6: "10/1", 7: "-"} {
		if got := lookup(&c, lsn); got != want {
			t.Errorf("as of LSN %d: %s, want %s", lsn, got, want)
		}
	}
	c.note(write(7, nil, nil))
	if got := lookup(&c, 7); got != "10/1" {
		t.Errorf("after a write that does not change the path: %s", got)
	}
	c.note(write(9, nil, [][]byte{value})) // 8 was not noted
	if got := lookup(&c, 7); got != "-" {
		t.Errorf("after a write missed: %s", got)
	}

	// A snapshot ahead of the writes noted (their effects had not run): they are in it.
	k = c.begin(prefix)
	c.note(write(10, nil, [][]byte{value}))
	c.finish(k, 11, 3, 0)
	c.note(write(11, nil, [][]byte{value}))
	c.note(write(12, nil, [][]byte{value}))
	if got := lookup(&c, 11) + " " + lookup(&c, 12); got != "3/0 4/0" {
		t.Errorf("after a snapshot ahead of the writes noted: %s", got)
	}

	// A drop forgets the counts, and a count being read when it came.
	c.drop()
	if got := lookup(&c, 12); got != "-" {
		t.Errorf("after a drop: %s", got)
	}
	k = c.begin(prefix)
	c.drop()
	c.finish(k, 12, 3, 0)
	if got := lookup(&c, 12); got != "-" || c.on.Load() {
		t.Errorf("a count begun before a drop was kept: %s", got)
	}

	// The history is bounded; the paths counted too, the least recently used going first.
	k = c.begin(prefix)
	c.finish(k, 12, 0, 0)
	for lsn := uint64(13); lsn < 13+2*countHistory; lsn++ {
		c.note(write(lsn, nil, [][]byte{value}))
	}
	if got := lookup(&c, 12+countHistory) + " " + lookup(&c, 13+countHistory); got != fmt.Sprintf("- %d/0", countHistory+1) {
		t.Errorf("the history kept: %s", got)
	}
	for i := range maxCountedPaths {
		c.finish(c.begin(storage.IndexPathPrefix(fmt.Sprintf("/p%d", i))), 100, 0, 0)
	}
	if len(c.paths) != maxCountedPaths || c.find(prefix) != nil {
		t.Errorf("%d paths counted; /a among them: %v", len(c.paths), c.find(prefix) != nil)
	}
}

// Counts kept while writers create, replace and delete items with every kind of value at the
// path, and while the policy changes and the index is rebuilt, agree with storage at every
// read (VerifyOrderCounts), and an idle partition answers from them.
func TestOrderCountsFollowWrites(t *testing.T) {
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	all, _ := indexing.Parse(json.RawMessage(`{"includedPaths":[{"path":"/*"}]}`))
	noA, _ := indexing.Parse(json.RawMessage(`{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/a/?"}]}`))
	p, err := Open(Config{DB: db, Container: 1, ID: 0, Range: epk.All, MaxLogicalBytes: 1 << 30, Index: all})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	values := []string{`1`, `"s"`, `null`, `true`, `[1,2]`, `{"x":1}`}
	write := func(kind OpKind, i int, a string) {
		body := fmt.Sprintf(`{"id":"i%d","pk":"p%d","b":%d}`, i, i%5, i)
		if a != "" {
			body = fmt.Sprintf(`{"id":"i%d","pk":"p%d","b":%d,"a":%s}`, i, i%5, i, a)
		}
		item, key, err := document.Parse([]byte(body), [][]string{{"pk"}})
		if err != nil {
			t.Error(err)
			return
		}
		op := Operation{Kind: kind, EPK: epk.SchemeV2.Hash(key), ID: item.ID, Item: item}
		if kind == Delete {
			op.Item = nil
		}
		if _, err := p.Execute(op); err != nil && kind != Delete {
			t.Error(err)
		}
	}
	ordered := func(path string) bool {
		ok, err := p.IndexOrdered(OrderedRead{Path: path, Range: epk.All}, func(Doc, []byte) bool { return false })
		if err != nil {
			t.Error(err)
		}
		return ok
	}
	for i := range 200 {
		write(Upsert, i, "1")
	}
	if !ordered("/a") || !ordered("/b") {
		t.Fatal("the index does not give the order of a path every item has a number at")
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 3 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for n := 0; n < 600; n++ {
				i := r.IntN(300)
				switch r.IntN(4) {
				case 0:
					write(Delete, i, "")
				case 1:
					write(Upsert, i, "")
				default:
					write(Upsert, i, values[r.IntN(len(values))])
				}
			}
		})
	}
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				ordered("/a")
				ordered("/b")
			}
		}
	})
	for _, pol := range []*indexing.Policy{noA, all} {
		if err := p.ChangePolicy(pol); err != nil {
			t.Fatal(err)
		}
		for done := false; !done; {
			if done, _, err = p.ReindexStep(40, 1<<20); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(stop)
	wg.Wait()
	if err := p.CheckIndex(); err != nil {
		t.Fatal(err)
	}

	// Idle: every item gets a number at /a, and the order is complete; the count is kept.
	for i := range 300 {
		write(Upsert, i, fmt.Sprint(i))
	}
	prefix := storage.IndexPathPrefix("/a")
	ordered("/a")
	lsn := p.applied.Load()
	if !ordered("/a") {
		t.Fatal("with a number at /a in every item, the index does not give the order")
	}
	if v, o, ok := p.counts.lookup(prefix, lsn); !ok || v != 300 || o != 0 {
		t.Fatalf("the count of /a as of LSN %d: %d and %d (kept: %v)", lsn, v, o, ok)
	}
	// An item without a value at /a, then one with an array there, then neither: each write
	// changes the count, which answers without a read of the entries.
	for _, step := range []struct {
		i        int
		a        string
		complete bool
		v, o     int64
	}{{300, "", false, 300, 0}, {7, "[1]", false, 299, 1}, {7, "7", false, 300, 0}, {300, "300", true, 301, 0}} {
		write(Upsert, step.i, step.a)
		lsn := p.applied.Load()
		if v, o, ok := p.counts.lookup(prefix, lsn); !ok || v != step.v || o != step.o {
			t.Fatalf("after item %d with a=%q: the count %d and %d (kept: %v), want %d and %d", step.i, step.a, v, o, ok, step.v, step.o)
		}
		if got := ordered("/a"); got != step.complete {
			t.Fatalf("after item %d with a=%q: the index gives the order: %v", step.i, step.a, got)
		}
	}
}
