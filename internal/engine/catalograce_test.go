package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/fault"
)

// racedCatalog is a node's catalog that runs race before each of the node's next races
// commits: a change another node commits first, so that the node's own commit finds the
// catalog moved since it decided (catalog.ErrStale). Its node's lock guards races.
type racedCatalog struct {
	catalog.Backend
	races int
	race  func()
	fail  error // when not nil, what a raced commit returns instead of committing
}

func (s *racedCatalog) Commit(ch catalog.Change) (int64, error) {
	if s.races > 0 {
		s.races--
		s.race()
		if s.fail != nil {
			return 0, s.fail
		}
	}
	return s.Backend.Commit(ch)
}

// raceCommits has e's next n catalog commits each preceded by race, which runs under e's lock.
func raceCommits(e *Engine, n int, race func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	store := e.catalog
	if r, ok := store.(*racedCatalog); ok {
		store = r.Backend
	}
	e.catalog = &racedCatalog{Backend: store, races: n, race: race}
}

// TestClusterCatalogRace: a change of the catalog that another node's change beats to the
// commit is decided again against the newer catalog, so the client sees the answer it would
// have had one after the other: success for changes that do not conflict, 409 or 412 for
// those that do; and only when the races never end, 503, with nothing changed.
func TestClusterCatalogRace(t *testing.T) {
	tc := startTestCluster(t, 3)
	tc.createContainer(nil)
	one, two := tc.node(1), tc.node(2)
	others := 0
	otherDB := func() { // a change that conflicts with none of node 1's
		others++
		if _, err := two.CreateDatabase(fmt.Sprint("other", others), nil); err != nil {
			t.Errorf("the racing change: %v", err)
		}
	}

	offer := func(e *Engine) OfferInfo {
		t.Helper()
		c, err := e.Container("db", "c")
		if err != nil {
			t.Fatal(err)
		}
		e.mu.RLock()
		defer e.mu.RUnlock()
		return c.offer()
	}
	t.Run("offer", func(t *testing.T) {
		raceCommits(one, 1, otherDB)
		o, err := one.ReplaceOffer(offer(one).ID, OfferReplace{Throughput: Throughput{Manual: 500}, IfMatch: offer(one).ETag()})
		if err != nil {
			t.Fatalf("an offer replace raced by another database's creation: %v", err)
		}
		if o.Throughput.Manual != 500 {
			t.Fatalf("the offer answered has %+v", o.Throughput)
		}
		eventually(t, "node 2 sees the new throughput", func() error {
			if got := offer(two).Throughput.Manual; got != 500 {
				return fmt.Errorf("node 2 has %d RU/s", got)
			}
			return nil
		})
		if _, err := one.Database("other1"); err != nil {
			t.Fatalf("node 1 lost the database of the race: %v", err)
		}
	})
	t.Run("offer conflict", func(t *testing.T) {
		read := offer(one)
		raceCommits(one, 1, func() {
			if _, err := two.ReplaceOffer(read.ID, OfferReplace{Throughput: Throughput{Manual: 600}, IfMatch: read.ETag()}); err != nil {
				t.Errorf("the racing replace: %v", err)
			}
		})
		_, err := one.ReplaceOffer(read.ID, OfferReplace{Throughput: Throughput{Manual: 700}, IfMatch: read.ETag()})
		if !errors.Is(err, fault.PreconditionFailed) {
			t.Fatalf("a replace of an offer another node replaced first answered %v, not 412", err)
		}
		if got := offer(one).Throughput.Manual; got != 600 {
			t.Fatalf("node 1 has %d RU/s, not the racing replace's 600", got)
		}
	})
	t.Run("create conflict", func(t *testing.T) {
		raceCommits(one, 1, func() {
			if _, err := two.CreateDatabase("same", nil); err != nil {
				t.Errorf("the racing create: %v", err)
			}
		})
		if _, err := one.CreateDatabase("same", nil); !errors.Is(err, fault.Conflict) {
			t.Fatalf("a database another node created first answered %v, not 409", err)
		}
	})
	t.Run("failed commit", func(t *testing.T) {
		// A commit the catalog does not take (etcd answered an error) leaves node 1 with the
		// catalog's counters: its catalog version is node 2's, not one the catalog never held.
		raceCommits(one, 1, func() {})
		one.mu.Lock()
		one.catalog.(*racedCatalog).fail = errors.New("etcd did not answer")
		one.mu.Unlock()
		if _, err := one.ReplaceOffer(offer(one).ID, OfferReplace{Throughput: Throughput{Manual: 800}}); !errors.Is(err, fault.Unavailable) {
			t.Fatalf("an offer replace whose commit failed answered %v", err)
		}
		if err := two.Fresh(); err != nil {
			t.Fatal(err)
		}
		if v1, v2 := one.CatalogVersion(), two.CatalogVersion(); v1 != v2 {
			t.Fatalf("after a commit that failed, node 1's catalog version is %d, node 2's %d", v1, v2)
		}
	})
	t.Run("delete", func(t *testing.T) {
		c, err := one.Container("db", "c")
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "a write through node 1", func() error {
			_, err := c.UpsertItem(item("a", "k", ""), ItemOptions{})
			return err
		})
		raceCommits(one, maxCatalogAttempts, otherDB)
		if err := one.DeleteContainer("db", "c", ""); !errors.Is(err, errCatalogMoved) {
			t.Fatalf("a delete raced on every attempt answered %v", err)
		}
		// Node 1's partitions were left open: they serve at once, as before.
		if c, err = one.Container("db", "c"); err != nil {
			t.Fatalf("the container is gone on node 1 after its deletion failed: %v", err)
		}
		if _, err := c.UpsertItem(item("b", "k", ""), ItemOptions{}); err != nil {
			t.Fatalf("a write through node 1 after the failed deletion: %v", err)
		}
		if _, err := c.ReadItem(key("k"), "a"); err != nil {
			t.Fatalf("a read through node 1 after the failed deletion: %v", err)
		}
		raceCommits(one, 1, otherDB)
		if err := one.DeleteContainer("db", "c", ""); err != nil {
			t.Fatalf("a delete raced once: %v", err)
		}
		eventually(t, "node 2 sees the deletion", func() error {
			if _, err := two.Container("db", "c"); !errors.Is(err, fault.NotFound) {
				return fmt.Errorf("node 2 reads the container: %v", err)
			}
			return nil
		})
	})
}
