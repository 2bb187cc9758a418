package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/fault"
)

// Once the cluster's version shares budgets, a partition's replicas divide its rate between
// them: reads through a follower are refused once it has spent its part, well before the
// partition's whole rate, and every node describes every partition with the same figures.
// The shares travel as JSON at the version that brought them, and as typed messages at this
// release's.
func TestClusterSharesBudgetsAndFigures(t *testing.T) {
	for _, v := range []clusterversion.Version{clusterversion.PartitionBudgets, clusterversion.NodeMessages} {
		t.Run(v.String(), func(t *testing.T) { testSharesBudgetsAndFigures(t, v) })
	}
}

func testSharesBudgetsAndFigures(t *testing.T, v clusterversion.Version) {
	tc := newTestCluster(t, 3)
	tc.active, tc.rateLimit = v, true
	for i := range 3 {
		tc.start(i + 1)
	}
	tc.createContainer(nil) // 400 RU/s over two partitions
	c1 := tc.containerOn(1)
	for i := range 6 {
		body := item(fmt.Sprint(i), fmt.Sprint("k", i), "")
		eventually(t, "a write", func() error {
			_, err := c1.CreateItem(body, ItemOptions{})
			return err // a 429 too, while the budget's parts settle
		})
	}

	// Every node lists both partitions with the same figures: six items in all.
	want := ""
	for n := 1; n <= 3; n++ {
		eventually(t, fmt.Sprintf("node %d's figures", n), func() error {
			ms, err := tc.node(n).ContainerMetrics("db", "c", 0)
			if err != nil {
				return err
			}
			got, items := "", int64(0)
			for _, m := range ms {
				got += fmt.Sprintf("%d: %d items, %d bytes, lsn %d, %.2f RU; ", m.ID, m.Items, m.Bytes, m.LSN, m.Total)
				items += m.Items
			}
			if len(ms) != 2 || items != 6 {
				return fmt.Errorf("%d partitions, %d items: %s", len(ms), items, got)
			}
			if u := tc.containerOn(n).Usage(); u.Items != 6 {
				return fmt.Errorf("usage %+v", u)
			}
			if want == "" {
				want = got
			} else if got != want {
				return fmt.Errorf("node %d: %s; node 1: %s", n, got, want)
			}
			return nil
		})
	}

	_, follower := tc.leaderOf(0)
	c := tc.containerOn(follower)
	p := c.routes.Load().byID(0)
	rate := p.Budget().Rate()
	eventually(t, "the follower's budget shared", func() error {
		if l := p.Budget().Limit(time.Now()); l >= rate {
			return fmt.Errorf("it may spend %v of %v", l, rate)
		}
		return nil
	})
	k := ""
	for i := range 6 {
		if e, _ := c.EPK(key(fmt.Sprint("k", i))); p.Range().Contains(e) {
			k = fmt.Sprint("k", i)
		}
	}
	if k == "" {
		t.Fatal("none of the items is in partition 0")
	}
	id := k[1:]
	for i := range 100000 {
		_, err := c.ReadItemAt(context.Background(), nil, key(k), id, ReadConsistency{Level: Eventual})
		if err != nil && fault.KindOf(err) == fault.Throttled {
			secs := p.Budget().Seconds(time.Now())
			spent := secs[len(secs)-1].RU
			if spent >= 0.9*rate {
				t.Fatalf("the follower spent %v of the partition's %v RU/s before it was refused", spent, rate)
			}
			t.Logf("the follower was refused after %d reads, having spent %.0f of %.0f RU/s", i, spent, rate)
			if typed := tc.typed.Load(); (v >= clusterversion.NodeMessages) != (typed > 0) {
				t.Fatalf("at %s, %d typed requests (and %d JSON)", v, typed, tc.untyped.Load())
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal(errors.New("100,000 reads through a follower were never refused"))
}
