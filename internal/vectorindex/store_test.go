package vectorindex

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func TestNodeRecordRoundTrip(t *testing.T) {
	n := Node{ID: 42, Code: []byte{codeRaw, 1, 2, 3, 4}, Neighbors: []uint64{900, 3, 1 << 63, 3, 77}, Deleted: true}
	data := MarshalNode(n)
	got, err := UnmarshalNode(42, data)
	if err != nil {
		t.Fatal(err)
	}
	want := n
	want.Neighbors = []uint64{3, 77, 900, 1 << 63} // sorted, deduplicated
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip gave %+v, want %+v", got, want)
	}
	if !slices.Equal(n.Neighbors, []uint64{900, 3, 1 << 63, 3, 77}) {
		t.Fatal("MarshalNode changed its argument")
	}
	for i := range data {
		if _, err := UnmarshalNode(42, data[:i]); err == nil {
			t.Fatalf("a record cut at %d bytes decoded", i)
		}
	}
	if _, err := UnmarshalNode(42, append(slices.Clone(data), 0)); err == nil {
		t.Fatal("a record with trailing bytes decoded")
	}
	empty, err := UnmarshalNode(1, MarshalNode(Node{ID: 1}))
	if err != nil || len(empty.Neighbors) != 0 || len(empty.Code) != 0 || empty.Deleted {
		t.Fatalf("empty node round trip: %+v, %v", empty, err)
	}
}

func TestMetaRoundTrip(t *testing.T) {
	for _, m := range []Meta{{}, {Entry: 1 << 60, HasEntry: true, Live: 12345, Deleted: 6, Inserts: 99}} {
		data, _ := m.MarshalBinary()
		var got Meta
		if err := got.UnmarshalBinary(data); err != nil || got != m {
			t.Fatalf("meta round trip: %+v, %v; want %+v", got, err, m)
		}
	}
	var m Meta
	for _, bad := range [][]byte{{9}, {metaVersion, 1, 5, 6}, {metaVersion, 1, 5, 6, 7, 8, 9}, {metaVersion, 1, 0x80}} {
		if err := m.UnmarshalBinary(bad); err == nil {
			t.Fatalf("decoded a bad meta record %v", bad)
		}
	}
	// A record from before the Inserts count reads with Inserts 0.
	if err := m.UnmarshalBinary([]byte{metaVersion, 1, 5, 6, 7}); err != nil || m != (Meta{Entry: 5, HasEntry: true, Live: 6, Deleted: 7}) {
		t.Fatalf("three-field meta: %+v, %v", m, err)
	}
}

func TestOverlay(t *testing.T) {
	base := NewMemStore()
	base.Apply(Changes{Put: []Node{{ID: 1}, {ID: 2}, {ID: 3}}, Meta: &Meta{Entry: 1, HasEntry: true, Live: 3}})
	o := NewOverlay(base)
	o.Apply(Changes{Put: []Node{{ID: 4}, {ID: 2, Deleted: true}}, Delete: []uint64{3}, Meta: &Meta{Entry: 4, HasEntry: true, Live: 2, Deleted: 1}})
	o.Apply(Changes{Put: []Node{{ID: 3, Neighbors: []uint64{4}}}})
	if n, ok, _ := o.Node(2); !ok || !n.Deleted {
		t.Error("the overlay does not show its own write")
	}
	if n, ok, _ := o.Node(3); !ok || !slices.Equal(n.Neighbors, []uint64{4}) {
		t.Error("a record deleted then written again is not the new one")
	}
	if _, ok, _ := o.Node(1); !ok {
		t.Error("the overlay hides the base")
	}
	if m, _ := o.Meta(); m.Entry != 4 {
		t.Error("the overlay does not show its meta")
	}
	var ids []uint64
	_ = o.Scan(func(n Node) bool { ids = append(ids, n.ID); return true })
	slices.Sort(ids)
	if !slices.Equal(ids, []uint64{1, 2, 3, 4}) {
		t.Errorf("overlay scan saw %v", ids)
	}
	ch := o.Changes()
	if len(ch.Put) != 3 || ch.Put[0].ID != 2 || ch.Put[1].ID != 3 || ch.Put[2].ID != 4 || len(ch.Delete) != 0 || ch.Meta == nil {
		t.Errorf("merged changes: %+v", ch)
	}
	base.Apply(ch)
	if n, _, _ := base.Node(2); !n.Deleted || base.Len() != 4 {
		t.Error("applying the merged changes did not give the overlay's state")
	}
}

func TestShouldConsolidate(t *testing.T) {
	for _, c := range []struct {
		m    Meta
		want bool
	}{
		{Meta{}, false},
		{Meta{Live: 90, Deleted: 10}, true},
		{Meta{Live: 91, Deleted: 9}, false},
		{Meta{Live: 5000, Inserts: 500}, false}, // a tenth, but fewer than a thousand
		{Meta{Live: 20000, Inserts: 2000}, true},
		{Meta{Live: 20000, Inserts: 1999}, false},
	} {
		if got := c.m.ShouldConsolidate(); got != c.want {
			t.Errorf("%+v.ShouldConsolidate() = %v, want %v", c.m, got, c.want)
		}
	}
	if f := (Meta{Live: 3, Deleted: 1}).TombstoneFraction(); f != 0.25 {
		t.Errorf("TombstoneFraction = %v", f)
	}
}

// TestMutationsAreDeterministic replays the same inserts, deletes and maintenance into two
// stores and compares every record: a replicated partition applies the same writes on every
// replica, and each must end with the same bytes.
func TestMutationsAreDeterministic(t *testing.T) {
	build := func() *MemStore {
		ix, err := New(Config{Metric: Cosine, Dimensions: 8, TrainSize: 200})
		if err != nil {
			t.Fatal(err)
		}
		s := NewMemStore()
		rng := rand.New(rand.NewPCG(5, 6))
		for i := range 600 {
			v := make([]float32, 8)
			for d := range v {
				v[d] = float32(rng.NormFloat64())
			}
			ch, err := ix.Insert(s, uint64(i%450+1), v) // some ids inserted twice: replaced
			if err != nil {
				t.Fatal(err)
			}
			s.Apply(ch)
			if i%7 == 3 {
				if ch, err = ix.Delete(s, uint64(rng.IntN(i+1)+1)); err != nil {
					t.Fatal(err)
				}
				s.Apply(ch)
			}
			if m, _ := s.Meta(); m.ShouldConsolidate() {
				if ch, err = ix.Consolidate(s); err != nil {
					t.Fatal(err)
				}
				s.Apply(ch)
			}
		}
		return s
	}
	a, b := build(), build()
	ma, _ := a.Meta()
	mb, _ := b.Meta()
	if ma != mb || a.Len() != b.Len() {
		t.Fatalf("meta %+v and %+v, %d and %d records", ma, mb, a.Len(), b.Len())
	}
	qa, _ := a.Quantizer()
	qb, _ := b.Quantizer()
	ba, _ := qa.MarshalBinary()
	bb, _ := qb.MarshalBinary()
	if !bytes.Equal(ba, bb) {
		t.Fatal("the quantizers differ")
	}
	a.Scan(func(n Node) bool {
		m, ok, _ := b.Node(n.ID)
		if !ok || !bytes.Equal(MarshalNode(n), MarshalNode(m)) {
			t.Fatalf("node %d: %+v and %+v", n.ID, n, m)
		}
		return true
	})
}
