package partition

import (
	"fmt"
	"testing"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/storage"
)

// FindExpired reads what has expired, not the partition: after the one read of every item
// that builds the index, a call reads only the versions that are due (and the stale hints of
// versions written again since), and an item that never expires is never read again.
func TestFindExpiredReadsWhatIsDue(t *testing.T) {
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := int64(1_000_000)
	p, err := Open(Config{DB: db, Container: 1, ID: 0, Range: epk.All, MaxLogicalBytes: 1 << 30, Now: func() int64 { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.SetDefaultTTL(100)
	write := func(kind OpKind, id, extra string) {
		t.Helper()
		item, key, err := document.Parse(fmt.Appendf(nil, `{"id":%q,"pk":"k"%s}`, id, extra), [][]string{{"pk"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Execute(Operation{Kind: kind, EPK: epk.SchemeV2.Hash(key), ID: id, Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	// reap finds and deletes what has expired, call by call, and returns how many items it
	// deleted and how many documents it read.
	reap := func() (deleted, read int) {
		t.Helper()
		for {
			found, scan, err := p.FindExpired(100)
			if err != nil {
				t.Fatal(err)
			}
			read += scan.Read
			for _, x := range found {
				if _, err := p.Execute(Operation{Kind: Expire, EPK: x.EPK, ID: x.ID}); err != nil {
					t.Fatal(err)
				}
			}
			deleted += len(found)
			if scan.Done {
				return deleted, read
			}
		}
	}
	for i := range 1000 {
		write(Create, fmt.Sprint("d", i), "")
	}
	for i := range 10 {
		write(Create, fmt.Sprint("own", i), `,"ttl":5`)
		write(Create, fmt.Sprint("never", i), `,"ttl":-1`)
	}
	check := func(what string, deleted, read, wantDeleted, wantRead int) {
		t.Helper()
		if deleted != wantDeleted || read != wantRead {
			t.Fatalf("%s: deleted %d and read %d, want %d and %d", what, deleted, read, wantDeleted, wantRead)
		}
	}
	d, r := reap()
	check("building", d, r, 0, 1020)
	d, r = reap()
	check("nothing due", d, r, 0, 0)
	now += 5
	d, r = reap()
	check("own ttl 5", d, r, 10, 10)
	now += 45
	for i := range 100 {
		write(Replace, fmt.Sprint("d", i), `,"v":2`) // due 50 s later than the rest
	}
	now += 50
	d, r = reap()
	check("the default's 900", d, r, 900, 1000) // and the 100 hints of replaced versions
	now += 50
	d, r = reap()
	check("the replaced 100", d, r, 100, 100)
	p.SetDefaultTTL(1)
	now += 1 << 20
	d, r = reap()
	check("ttl -1", d, r, 0, 0)
	// Turned off and on again, the index is built again: writes while it was off added nothing.
	p.SetDefaultTTL(TTLOff)
	write(Create, "late", "")
	p.SetDefaultTTL(10)
	now += 10
	d, r = reap()
	check("rebuilt", d, r, 1, 11+1) // the build, then the one due
}
