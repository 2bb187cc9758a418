package catalog

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/controlplane/controlplanetest"
	"github.com/partita-db/partita/internal/storage"
)

// stores runs fn against each store on an empty catalog.
func stores(t *testing.T, fn func(t *testing.T, s Backend)) {
	t.Run("local", func(t *testing.T) { fn(t, NewLocal(openDB(t))) })
	t.Run("etcd", func(t *testing.T) { fn(t, NewEtcd(controlplanetest.Start(t).Client(), "/test/catalog/")) })
}

func openDB(t *testing.T) *storage.DB {
	t.Helper()
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func rec(kind Kind, num uint32, v string) Record {
	return Record{Key: Key{Kind: kind, Num: num}, Value: []byte(v)}
}

func load(t *testing.T, s Backend) Contents {
	t.Helper()
	c, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func commit(t *testing.T, s Backend, ch Change) int64 {
	t.Helper()
	rev, err := s.Commit(ch)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// Both stores keep what is committed, give it back by kind and number, and refuse changes
// that cannot be written without writing any of them.
func TestStore(t *testing.T) {
	stores(t, func(t *testing.T, s Backend) {
		if c := load(t, s); c.Counters != nil || len(c.Records) != 0 || c.Revision != 0 {
			t.Fatalf("an empty catalog loads as %+v", c)
		}
		rev := commit(t, s, Change{Counters: []byte(`{"v":1}`), Put: []Record{
			rec(Users, 1, "u1"), rec(Containers, 256, "c256"), rec(Containers, 2, "c2"), rec(Databases, 1, "d1"),
		}})
		want := []Record{rec(Databases, 1, "d1"), rec(Containers, 2, "c2"), rec(Containers, 256, "c256"), rec(Users, 1, "u1")}
		c := load(t, s)
		if !reflect.DeepEqual(c.Records, want) || string(c.Counters) != `{"v":1}` || c.Revision != rev {
			t.Fatalf("loaded %+v (revision %d), want %+v (revision %d)", c, c.Revision, want, rev)
		}
		for _, bad := range []Change{
			{After: rev, Put: []Record{rec(Databases, 9, "x")}},                           // no counters
			{After: rev, Counters: []byte(`{}`), Put: []Record{rec('X', 9, "x")}},         // no such kind
			{After: rev, Counters: []byte(`{}`), Put: []Record{{Key: Key{Databases, 9}}}}, // no value
			{After: rev, Counters: []byte(`{}`), Delete: []Key{{Kind: 0, Num: 1}}},        // no such kind
		} {
			if _, err := s.Commit(bad); err == nil {
				t.Fatalf("%+v was committed", bad)
			}
		}
		if c := load(t, s); !reflect.DeepEqual(c.Records, want) || string(c.Counters) != `{"v":1}` {
			t.Fatalf("refused changes wrote: %+v", c)
		}
		rev2 := commit(t, s, Change{After: rev, Counters: []byte(`{"v":2}`), Put: []Record{rec(Containers, 2, "c2'")},
			Delete: []Key{{Containers, 256}, {Users, 1}}})
		c = load(t, s)
		want = []Record{rec(Databases, 1, "d1"), rec(Containers, 2, "c2'")}
		if !reflect.DeepEqual(c.Records, want) || string(c.Counters) != `{"v":2}` || c.Revision != rev2 {
			t.Fatalf("loaded %+v, want %+v", c, want)
		}
	})
}

// A change decided against a catalog that has changed since is refused and writes nothing; of
// two nodes that decide against the same revision, exactly one commits.
func TestEtcdStale(t *testing.T) {
	cp := controlplanetest.Start(t)
	a, b := NewEtcd(cp.Client(), "/c/"), NewEtcd(cp.Client(), "/c/")
	rev := commit(t, a, Change{Counters: []byte(`1`), Put: []Record{rec(Databases, 1, "d1")}})
	if _, err := b.Commit(Change{After: rev - 1, Counters: []byte(`x`), Put: []Record{rec(Databases, 2, "x")}}); !errors.Is(err, ErrStale) {
		t.Fatalf("a stale change: %v", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = a.Commit(Change{After: rev, Counters: fmt.Appendf(nil, "%d", i), Put: []Record{rec(Databases, 2, fmt.Sprint(i))}})
		}()
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("changes %d and %d both committed", won, i)
		case err == nil:
			won = i
		case !errors.Is(err, ErrStale):
			t.Fatal(err)
		}
	}
	c := load(t, b)
	if won < 0 || string(c.Counters) != fmt.Sprint(won) || !reflect.DeepEqual(c.Records, []Record{rec(Databases, 1, "d1"), rec(Databases, 2, fmt.Sprint(won))}) {
		t.Fatalf("winner %d, catalog %+v", won, c)
	}
}

// Watch sends every change after a revision, one event each, in order, with what it wrote;
// a watch from a compacted revision ends with ErrCompacted.
func TestEtcdWatch(t *testing.T) {
	cp := controlplanetest.Start(t)
	s := NewEtcd(cp.Client(), "/w/")
	other := NewEtcd(cp.Client(), "/w2/") // a neighbour prefix, which the watch must not see
	commit(t, other, Change{Counters: []byte(`n`), Put: []Record{rec(Databases, 1, "other")}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := []Change{
		{Counters: []byte(`1`), Put: []Record{rec(Databases, 1, "d1"), rec(Containers, 1, "c1")}},
		{Counters: []byte(`2`), Put: []Record{rec(Users, 3, "u3")}},
		{Counters: []byte(`3`), Delete: []Key{{Containers, 1}}},
	}
	var revs []int64
	for _, ch := range changes {
		ch.After = load(t, s).Revision
		revs = append(revs, commit(t, s, ch))
	}
	got := collect(t, s.Watch(ctx, 0), 3)
	for i, ev := range got {
		ch := changes[i]
		if ev.Revision != revs[i] || string(ev.Counters) != string(ch.Counters) || !sameRecords(ev.Put, ch.Put) || !reflect.DeepEqual(ev.Delete, ch.Delete) {
			t.Fatalf("event %d: %+v, want %+v at %d", i, ev, ch, revs[i])
		}
	}
	if tail := collect(t, s.Watch(ctx, revs[1]), 1); tail[0].Revision != revs[2] {
		t.Fatalf("a watch after %d starts at %d, want %d", revs[1], tail[0].Revision, revs[2])
	}
	// Later changes arrive on a watch already open.
	w := s.Watch(ctx, revs[2])
	rev := commit(t, s, Change{After: revs[2], Counters: []byte(`4`), Put: []Record{rec(Databases, 5, "d5")}})
	if ev := collect(t, w, 1)[0]; ev.Revision != rev || string(ev.Put[0].Value) != "d5" {
		t.Fatalf("a live event %+v", ev)
	}
	if _, err := cp.Client().Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-s.Watch(ctx, revs[0]):
		if !errors.Is(ev.Err, ErrCompacted) {
			t.Fatalf("a watch from a compacted revision: %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a watch from a compacted revision did not end")
	}
}

func collect(t *testing.T, w <-chan Event, n int) []Event {
	t.Helper()
	var out []Event
	for len(out) < n {
		select {
		case ev := <-w:
			if ev.Err != nil {
				t.Fatal(ev.Err)
			}
			out = append(out, ev)
		case <-time.After(10 * time.Second):
			t.Fatalf("%d events of %d", len(out), n)
		}
	}
	return out
}

// sameRecords compares records as sets: one change's events come in key order, not in the
// order of the change.
func sameRecords(a, b []Record) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[Key]string{}
	for _, r := range a {
		m[r.Key] = string(r.Value)
	}
	for _, r := range b {
		if v, ok := m[r.Key]; !ok || v != string(r.Value) {
			return false
		}
	}
	return true
}

// Local's Stage joins a change to a batch of the node's other writes: nothing shows until the
// batch commits, and then all of it.
func TestLocalStage(t *testing.T) {
	db := openDB(t)
	s := NewLocal(db)
	b := db.NewBatch()
	defer b.Close()
	if err := b.Set([]byte("zz-other"), []byte("data")); err != nil {
		t.Fatal(err)
	}
	if err := s.Stage(b, Change{Counters: []byte(`1`), Put: []Record{rec(Databases, 1, "d1")}}); err != nil {
		t.Fatal(err)
	}
	if c := load(t, s); c.Counters != nil || len(c.Records) != 0 {
		t.Fatalf("a staged change shows before its batch commits: %+v", c)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if c := load(t, s); string(c.Counters) != "1" || !reflect.DeepEqual(c.Records, []Record{rec(Databases, 1, "d1")}) {
		t.Fatalf("after the batch: %+v", c)
	}
}
