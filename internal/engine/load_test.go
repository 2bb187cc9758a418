package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
)

// A partition holding most of the cluster's bytes weighs more than one replica: with one
// replica per partition on three nodes, six partitions are two to a node by count, but the
// balancer moves the other partition off the node that holds the large one, and leaves it
// there alone.
func TestClusterBalancesByBytes(t *testing.T) {
	tc := newTestCluster(t, 3)
	tc.replicas = 1
	for id := 1; id <= 3; id++ {
		tc.start(id)
	}
	if _, err := tc.node(1).CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	// Each container has two partitions (MinPartitions), placed on the node that creates it.
	for i, id := range []string{"large", "s1", "s2"} {
		eventually(t, "create "+id, func() error {
			_, err := tc.node(i+1).CreateContainer("db", ContainerSpec{ID: id, PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}})
			return err
		})
	}
	large, err := tc.node(1).Container("db", "large")
	if err != nil {
		t.Fatal(err)
	}
	pad := fmt.Sprintf(`,"pad":%q`, strings.Repeat("x", 100<<10))
	for i := range 40 { // 4 MiB, all in one logical partition
		mustCreate(t, large, item(fmt.Sprint(i), "one", pad))
	}
	var big replication.GroupID
	for _, p := range large.routes.Load().parts {
		if p.Stats().Items > 0 {
			big = replica.Group(large.num, p.ID())
		}
	}

	// Every container's groups, as node 1 knows them.
	var groups []replication.GroupID
	for _, id := range []string{"large", "s1", "s2"} {
		eventually(t, "node 1 knows "+id, func() error {
			c, err := tc.node(1).Container("db", id)
			if err != nil {
				return err
			}
			for _, r := range c.rec.Ranges {
				groups = append(groups, replica.Group(c.num, r.ID))
			}
			return nil
		})
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		recs, err := tc.groups.All(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		where := map[replication.NodeID]int{}
		var alone bool
		for _, g := range groups {
			if r := recs[g]; len(r.Voters) == 1 && len(r.Learners) == 0 {
				where[r.Voters[0]]++
			}
		}
		if r := recs[big]; len(r.Voters) == 1 {
			alone = where[r.Voters[0]] == 1
		}
		if alone && where[1]+where[2]+where[3] == len(groups) {
			t.Logf("replicas per node: %v; the large partition's on node %d", where, recs[big].Voters[0])
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the large partition does not stand alone: replicas per node %v, its record %+v", where, recs[big])
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Figures weigh a group by its bytes (the largest replica's) and its RU (all replicas'), each
// over the mean group's, never less than the floors: idle, empty groups weigh one.
func TestLoadFiguresWeight(t *testing.T) {
	f := newLoadFigures(time.Now(), []nodecall.ReplicaFigure{
		{Group: 1, Bytes: 6 << 20, RU: 300}, {Group: 1, Bytes: 5 << 20, RU: 300},
		{Group: 2, Bytes: 0}, {Group: 3, Bytes: 0, RU: 0},
	})
	for g, want := range map[replication.GroupID]float64{1: 1 + 3 + 3, 2: 1, 3: 1, 4: 1} {
		if got := f.weight(g); got != want {
			t.Errorf("group %d weighs %v, want %v", g, got, want)
		}
	}
	var none *loadFigures
	if none.weight(1) != 1 {
		t.Error("without figures a replica weighs other than one")
	}
}
