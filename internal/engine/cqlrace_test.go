package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/cqlexec"
	"github.com/partita-db/partita/internal/engine"
)

// TestClusterCQLSchemaRace: two ALTER TABLEs of one table through two nodes of a cluster, the
// second node's committed while the first node's is decided. Both apply, one after the other:
// the first node's change, made from the schema it read, is refused, and its statement runs
// again against the newer schema instead of writing over the other's column.
func TestClusterCQLSchemaRace(t *testing.T) {
	nodes := engine.StartTestCluster(t, 3)
	x1, x2 := cqlexec.New(nodes[0], nil), cqlexec.New(nodes[1], nil)
	run := func(x *cqlexec.Executor, text string) error {
		p, err := x.Prepare(&cqlexec.Session{}, text)
		if err == nil {
			_, err = x.Execute(&cqlexec.Session{}, p, cqlexec.Options{})
		}
		return err
	}
	for _, st := range []string{
		"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE ks.t (k int PRIMARY KEY, a int)",
	} {
		if err := run(x1, st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	engine.RaceCommits(nodes[0], 1, func() {
		if err := run(x2, "ALTER TABLE ks.t ADD c int"); err != nil {
			t.Errorf("the racing ALTER through node 2: %v", err)
		}
	})
	if err := run(x1, "ALTER TABLE ks.t ADD b int"); err != nil {
		t.Fatalf("an ALTER raced by another node's: %v", err)
	}
	for i, x := range []*cqlexec.Executor{x1, x2} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := run(x, "SELECT k, a, b, c FROM ks.t")
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d after both ALTERs: %v", i+1, fmt.Sprint(err))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
