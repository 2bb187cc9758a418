package partition

import (
	"errors"
	"testing"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
)

// A replica's reads that look at storage once it was discarded (its state about to be deleted:
// the replica was removed) refuse with errClosed, which the engine reads elsewhere, rather
// than answer from a state deleted under them: a point read would say NotFound, a scan would
// find nothing.
func TestDiscardedPartitionRefusesReads(t *testing.T) {
	p := openWhole(t)
	e := createA(t, p)
	// The first read fills the row cache; the cache's copy, from before the discard, is still
	// what the replica applied, but a read that goes to storage may find it deleted.
	if _, err := p.Read(e, "a", nil); err != nil {
		t.Fatal(err)
	}
	p.Discard()
	b := p.db.NewBatch()
	for _, s := range p.Spans() {
		if err := b.DeleteRange(s.Start, s.End); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	p.db.Rows.Forget(p.Spans())
	if _, err := p.Read(e, "a", nil); !Closed(err) {
		t.Errorf("a point read of a discarded partition: %v, want it refused as closed", err)
	}
	if _, err := p.Read(e, "b", nil); !Closed(err) || errors.Is(err, fault.NotFound) {
		t.Errorf("a point read of a missing item of a discarded partition: %v, want it refused as closed", err)
	}
	seen := 0
	if err := p.Scan([]epk.Range{epk.All}, 0, func(Doc) bool { seen++; return true }); !Closed(err) {
		t.Errorf("a scan of a discarded partition: %v (%d items), want it refused as closed", err, seen)
	}
	if err := p.ScanItems(ItemPos{}, ItemPos{EPK: epk.All.Max}, false, func(Doc) bool { seen++; return true }); !Closed(err) {
		t.Errorf("a scan of a discarded partition's items: %v (%d items), want it refused as closed", err, seen)
	}
}
