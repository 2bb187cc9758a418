package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/query"
)

// Reads at each consistency level through a follower cut off from its group: Eventual and
// Consistent Prefix serve what it holds (an older version, never a gap); Session serves a
// token it has reached, and for one it has not, the point read is served by another replica
// while a query is refused (404/1002 on the wire); once it is back, a Session read with the
// newest token waits for the replica to catch up. Strong and Bounded Staleness reads cost
// twice as much.
func TestClusterReadConsistency(t *testing.T) {
	tc := newTestCluster(t, 3)
	tc.staleness = Staleness{Versions: 1000, Interval: time.Second}
	for id := 1; id <= 3; id++ {
		tc.start(id)
	}
	tc.createContainer(nil)
	k := key("k")
	var w1 ItemResult
	eventually(t, "create through node 1", func() error {
		var err error
		w1, err = tc.containerOn(1).CreateItem(item("a", "k", `,"v":1`), ItemOptions{})
		return err
	})
	// A follower of the item's partition, and its leader.
	follower, leader := 0, 0
	eventually(t, "the partition has a leader", func() error {
		follower, leader = 0, 0
		for id := 1; id <= 3; id++ {
			c := tc.containerOn(id)
			e, err := c.EPK(k)
			if err != nil {
				return err
			}
			p := c.routes.Load().lookup(e)
			switch {
			case p == nil:
				return fmt.Errorf("node %d holds no replica yet", id)
			case p.Leading():
				leader = id
			default:
				follower = id
			}
		}
		if leader == 0 || follower == 0 {
			return errors.New("no leader yet")
		}
		return nil
	})
	cf := tc.containerOn(follower)
	session := func(r ItemResult) ReadConsistency {
		return ReadConsistency{Level: Session, Session: map[uint32]uint64{r.PartitionID: r.LSN}}
	}
	value := func(r ItemResult) string {
		i := strings.Index(string(r.Doc), `"v":`)
		return string(r.Doc[i+4 : i+5])
	}
	r, err := cf.ReadItemAt(context.Background(), nil, k, "a", session(w1))
	if err != nil || value(r) != "1" {
		t.Fatalf("a session read through the follower: %s, %v", r.Doc, err)
	}
	// A bounded read confirms the follower fresh: for the next second it serves what it holds.
	confirmed := time.Now()
	if r, err := cf.ReadItemAt(context.Background(), nil, k, "a", ReadConsistency{Level: BoundedStaleness}); err != nil || value(r) != "1" {
		t.Fatalf("a bounded read through the follower: %s, %v", r.Doc, err)
	}

	tc.mu.Lock()
	tc.isolated[follower] = true
	tc.mu.Unlock()
	var w2 ItemResult
	eventually(t, "replace through the leader", func() error {
		var err error
		w2, err = tc.containerOn(leader).UpsertItem(item("a", "k", `,"v":2`), ItemOptions{})
		return err
	})
	levels := []Level{Eventual, ConsistentPrefix}
	if time.Since(confirmed) < tc.staleness.Interval/2 {
		levels = append(levels, BoundedStaleness) // within its bound
	} else {
		t.Logf("the write took %v: the bounded read within its bound is not checked", time.Since(confirmed))
	}
	for _, l := range levels {
		r, err := cf.ReadItemAt(context.Background(), nil, k, "a", ReadConsistency{Level: l})
		if err != nil || value(r) != "1" {
			t.Fatalf("%v through the cut-off follower: %s, %v; want its own, older version", l, r.Doc, err)
		}
	}
	if r, err := cf.ReadItemAt(context.Background(), nil, k, "a", session(w1)); err != nil || value(r) != "1" {
		t.Fatalf("a session read the follower has reached: %s, %v", r.Doc, err)
	}
	start := time.Now()
	if r, err := cf.ReadItemAt(context.Background(), nil, k, "a", session(w2)); err != nil || value(r) != "2" {
		t.Fatalf("a session read the follower has not reached: %s, %v; want it served by another replica", r.Doc, err)
	}
	t.Logf("a point read past the cut-off follower's LSN was served elsewhere in %v", time.Since(start).Round(time.Millisecond))
	p, err := query.Prepare(`SELECT VALUE c.v FROM c WHERE c.pk = "k"`)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cf.QueryAt(context.Background(), session(w2), p, epk.All, query.Options{}); err != nil || len(res.Results) != 1 || res.Results[0].Num() != 2 {
		t.Fatalf("a query past the cut-off follower's LSN: %v, %v; want it served by another replica", res.Results, err)
	}
	if page, err := cf.ReadFeedAt(context.Background(), session(w2), epk.All, "", 10); err != nil || !slices.ContainsFunc(page.Docs, func(d []byte) bool {
		return strings.Contains(string(d), `"v":2`)
	}) {
		t.Fatalf("a read feed page past the cut-off follower's LSN: %q, %v; want it served by another replica", page.Docs, err)
	}
	pr, err := cf.PartitionRange(w2.PartitionID)
	if err != nil {
		t.Fatal(err)
	}
	if page, err := cf.ChangeFeed(FeedQuery{Range: pr, Consistency: session(w2)}); err != nil ||
		!slices.ContainsFunc(page.Changes, func(ch FeedChange) bool { return ch.LSN == w2.LSN }) {
		t.Fatalf("a change feed page past the cut-off follower's LSN: %+v, %v; want it served by another replica", page.Changes, err)
	}
	// A token from no write the group made: no replica can serve it.
	future := session(w2)
	future.Session[w2.PartitionID] += 1000
	if _, err := cf.ReadItemAt(context.Background(), nil, k, "a", future); !errors.Is(err, partition.ErrSessionNotAvailable) {
		t.Fatalf("a session read past every replica's LSN: %v; want the session refused", err)
	}
	if res, err := cf.QueryAt(context.Background(), ReadConsistency{Level: Eventual}, p, epk.All, query.Options{}); err != nil || len(res.Results) != 1 || res.Results[0].Num() != 1 {
		t.Fatalf("an eventual query through the cut-off follower: %v, %v", res.Results, err)
	}

	// Past the bound, the follower must confirm with its leader, which it cannot reach.
	time.Sleep(time.Until(confirmed.Add(tc.staleness.Interval)))
	if r, err := cf.ReadItemAt(context.Background(), nil, k, "a", ReadConsistency{Level: BoundedStaleness}); err == nil {
		t.Fatalf("a bounded read through the follower cut off for longer than the bound: %s; want it refused", r.Doc)
	}

	tc.mu.Lock()
	delete(tc.isolated, follower)
	tc.mu.Unlock()
	eventually(t, "a session query once the follower is back", func() error {
		res, err := cf.QueryAt(context.Background(), session(w2), p, epk.All, query.Options{})
		if err != nil {
			return err
		}
		if len(res.Results) != 1 || res.Results[0].Num() != 2 {
			return fmt.Errorf("%v", res.Results)
		}
		return nil
	})

	weak, err := cf.ReadItemAt(context.Background(), nil, k, "a", ReadConsistency{Level: Session})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []Level{Strong, BoundedStaleness} {
		r, err := cf.ReadItemAt(context.Background(), nil, k, "a", ReadConsistency{Level: l})
		if err != nil || r.Charge != 2*weak.Charge {
			t.Fatalf("%v read: %v RU, %v; want twice a session read's %v", l, r.Charge, err, weak.Charge)
		}
	}
	if errors.Is(partition.ErrSessionNotAvailable, fault.NotFound) {
		t.Fatal("a session refusal reads as a missing item")
	}
}
