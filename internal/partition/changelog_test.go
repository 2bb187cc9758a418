package partition

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/storage"
)

// ReadLog passes every change with its own id, EPK and version, read after read. What it keeps
// of an entry must be copied before its iterator moves on: the iterator's Key and Value are
// only valid until then, and Pebble built with the race detector (its invariants) sometimes
// hands out buffers that it overwrites later, which once made whole reads come back empty.
// Concurrent writers make commands share batches, which is where that showed.
func TestReadLogPassesEveryChangeIntact(t *testing.T) {
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := Open(Config{DB: db, Container: 1, ID: 0, Range: epk.All, MaxLogicalBytes: 1 << 30, KeepImages: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	type change struct {
		op   LogOp
		epk  string
		json string // the version written; "" for a delete
	}
	const writers, perWriter = 8, 50
	want := make([]map[string][]change, writers) // per writer: item id -> its changes in order
	live := make([]map[string]string, writers)   // per writer: item id -> its current JSON
	var wg sync.WaitGroup
	for w := range writers {
		want[w], live[w] = map[string][]change{}, map[string]string{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				id := fmt.Sprintf("w%d-%d", w, i)
				for v, kind := range []OpKind{Create, Replace, Delete} {
					if kind == Delete && i%3 != 0 {
						break
					}
					item, key, err := document.Parse(fmt.Appendf(nil, `{"id":%q,"pk":"k%d","v":%d}`, id, i%7, v), [][]string{{"pk"}})
					if err != nil {
						t.Error(err)
						return
					}
					e := epk.SchemeV2.Hash(key)
					op := Operation{Kind: kind, EPK: e, ID: id, Item: item}
					ch := change{op: LogCreate, epk: string(e)}
					switch kind {
					case Replace:
						ch.op = LogReplace
					case Delete:
						op.Item, ch.op = nil, LogDelete
					}
					res, err := p.Execute(op)
					if err != nil {
						t.Error(err)
						return
					}
					ch.json = string(res[0].Doc.JSON)
					want[w][id] = append(want[w][id], ch)
					live[w][id] = ch.json
					if kind == Delete {
						delete(live[w], id)
					}
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	for read := range 20 {
		got := map[string][]change{}
		if _, err := p.ReadLog(LogRead{Range: epk.All, AllVersions: true}, func(c *LogChange) bool {
			got[string(c.ID)] = append(got[string(c.ID)], change{c.Op, string(c.EPK), string(c.JSON)})
			return true
		}); err != nil {
			t.Fatal(err)
		}
		latest := map[string]string{}
		if _, err := p.ReadLog(LogRead{Range: epk.All}, func(c *LogChange) bool {
			latest[string(c.ID)] = string(c.JSON)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		bad := 0
		for w := range writers {
			for id, chs := range want[w] {
				if fmt.Sprint(got[id]) != fmt.Sprint(chs) {
					bad++
					t.Errorf("read %d: the all-versions log holds %q as %v, want %v", read, id, got[id], chs)
				}
				delete(got, id)
				if latest[id] != live[w][id] {
					bad++
					t.Errorf("read %d: the latest-version log holds %q as %q, want %q", read, id, latest[id], live[w][id])
				}
				delete(latest, id)
				if bad > 5 {
					t.FailNow()
				}
			}
		}
		if len(got) > 0 || len(latest) > 0 {
			t.Fatalf("read %d: the log holds items no one wrote: %v %v", read, got, latest)
		}
	}
}

// A read never passes a change past the LSN it says it read through: the next read starts
// after that LSN and would pass the change again. A read's snapshot may hold a command whose
// batch is committed while the writer has not yet stored its LSN as applied; the test holds
// the partition in that moment by putting the applied LSN back. (The soak test saw the feed
// answer a page of changes with the etag it was asked to read after, so that the next page
// repeated them.)
func TestReadLogReadsThroughWhatItPassed(t *testing.T) {
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := Open(Config{DB: db, Container: 1, ID: 0, Range: epk.All, MaxLogicalBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	create := func(id string) {
		item, key, err := document.Parse(fmt.Appendf(nil, `{"id":%q,"pk":"k"}`, id), [][]string{{"pk"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Execute(Operation{Kind: Create, EPK: epk.SchemeV2.Hash(key), ID: id, Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(after uint64) string {
		var out []string
		for _, all := range []bool{false, true} {
			var ids []string
			through, err := p.ReadLog(LogRead{After: after, Range: epk.All, AllVersions: all}, func(c *LogChange) bool {
				ids = append(ids, fmt.Sprintf("%s@%d", c.ID, c.LSN))
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%v through %d", ids, through))
		}
		return strings.Join(out, "; ")
	}
	create("a")
	create("b")
	p.applied.Store(1) // b's command (LSN 2) is committed and visible, its LSN not yet stored
	if got, want := read(0), "[a@1 b@2] through 2; [a@1 b@2] through 2"; got != want {
		t.Fatalf("while LSN 2 is not applied: %s, want %s", got, want)
	}
	if got, want := read(2), "[] through 2; [] through 2"; got != want {
		t.Fatalf("the next read: %s, want %s", got, want)
	}
	p.applied.Store(2)
}
