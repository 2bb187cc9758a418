package partition

import (
	"errors"
	"testing"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/storage"
)

// openWhole opens a partition over the whole EPK space on a fresh store, closed when the test
// ends.
func openWhole(t testing.TB) *Partition {
	t.Helper()
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p, err := Open(Config{DB: db, Container: 1, ID: 0, Range: epk.All, MaxLogicalBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// createA creates the item {"id":"a","pk":"p"} in p and returns its EPK.
func createA(t *testing.T, p *Partition) epk.EPK {
	t.Helper()
	item, key, err := document.Parse([]byte(`{"id":"a","pk":"p"}`), [][]string{{"pk"}})
	if err != nil {
		t.Fatal(err)
	}
	e := epk.SchemeV2.Hash(key)
	if _, err := p.Execute(Operation{Kind: Create, EPK: e, ID: "a", Item: item}); err != nil {
		t.Fatal(err)
	}
	return e
}

// A Mutate that panics or makes nothing fails its own operation; the writer goes on serving.
func TestBrokenMutateFailsOnlyItsOperation(t *testing.T) {
	p := openWhole(t)
	e := createA(t, p)
	for name, fn := range map[string]func([]byte) (*document.Item, epk.EPK, [][]byte, error){
		"panics":        func([]byte) (*document.Item, epk.EPK, [][]byte, error) { panic("bug") },
		"makes no item": func([]byte) (*document.Item, epk.EPK, [][]byte, error) { return nil, e, nil, nil },
	} {
		if _, err := p.Execute(Operation{Kind: Mutate, EPK: e, ID: "a", Mutate: fn}); !errors.Is(err, fault.Internal) {
			t.Errorf("a mutation that %s: %v, want an internal error", name, err)
		}
	}
	if _, err := p.Execute(Operation{Kind: Read, EPK: e, ID: "a"}); err != nil {
		t.Fatalf("the partition stopped serving after a broken mutation: %v", err)
	}
	if _, err := p.Execute(make([]Operation, MaxOperations+1)...); !errors.Is(err, fault.BadRequest) {
		t.Fatalf("a command of %d operations: %v", MaxOperations+1, err)
	}
}

// A command that starts with Unchanged commits only if the partition applied no write since
// the LSN it names; otherwise nothing of it is applied.
func TestUnchangedGuardsACommand(t *testing.T) {
	p := openWhole(t)
	create := func(id string) Operation {
		item, key, err := document.Parse([]byte(`{"id":"`+id+`","pk":"p"}`), [][]string{{"pk"}})
		if err != nil {
			t.Fatal(err)
		}
		return Operation{Kind: Create, EPK: epk.SchemeV2.Hash(key), ID: id, Item: item}
	}
	read := p.Stats().LSN
	if _, err := p.Execute(Operation{Kind: Unchanged, LSN: read}, create("a")); err != nil {
		t.Fatalf("nothing changed since the read: %v", err)
	}
	// The read is now one write behind.
	_, err := p.Execute(Operation{Kind: Unchanged, LSN: read}, create("b"))
	var be *BatchError
	if !errors.As(err, &be) || be.Index != 0 || !errors.Is(err, fault.PreconditionFailed) {
		t.Fatalf("a command after a write since its read: %v", err)
	}
	if _, err := p.Execute(Operation{Kind: Read, EPK: create("b").EPK, ID: "b"}); !errors.Is(err, fault.NotFound) {
		t.Fatalf("the refused command wrote: %v", err)
	}
}
