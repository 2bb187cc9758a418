package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// readyOf is GET /ready of s: its status code and body.
func readyOf(s *server) (int, string, error) {
	resp, err := http.Get(strings.TrimSuffix(s.Endpoint, "/") + "/ready")
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// Status tells the truth about a node that is down: GET /_partita/cluster on the others lists
// it as down, its replicas are still among their groups' members (marked down), and every
// partition is "at risk" (one failure from losing its quorum), as `partita cluster status`
// shows too; once it is back, GET /ready on it answers 200 only after its replicas caught up
// with what was written while it was away, and every partition is healthy again.
func TestClusterStatusOfADownNode(t *testing.T) {
	nodes := startClusterOf(t, 3, func(int) []string { return []string{"--consistency", "Strong"} })
	cx := ctx(t)
	createDBAndContainer(t, nodes[0].sdk(t), nodes[0].sdk(t), 12000) // two partitions, led by node 1
	c := containersOn(t, nodes[:1])[0]
	write := func(i int) {
		body, _ := json.Marshal(map[string]any{"id": fmt.Sprint("item", i), "pk": fmt.Sprint("k", i%5)})
		retrying(t, "a write", func() error {
			_, err := c.UpsertItem(cx, azcosmos.NewPartitionKeyString(fmt.Sprint("k", i%5)), body, nil)
			return err
		})
	}
	for i := range 20 {
		write(i)
	}
	for _, n := range nodes {
		retrying(t, "every node ready", func() error {
			code, body, err := readyOf(n.server)
			if err == nil && code != 200 {
				err = fmt.Errorf("GET /ready: %d %s", code, body)
			}
			return err
		})
	}
	third := clusterStatusOf(t, nodes[2].server).Node
	nodes[2].kill()
	// leaders are the partitions as their leaders among the nodes left describe them.
	leaders := func() map[uint32]explorerPartition {
		out := map[uint32]explorerPartition{}
		for _, n := range nodes[:2] {
			for _, r := range clusterStatusOf(t, n.server).Replicas {
				if r.Leading {
					out[r.Partition] = r
				}
			}
		}
		return out
	}
	retrying(t, "node 3 shown down, its partitions at risk", func() error {
		st := clusterStatusOf(t, nodes[0].server)
		down := 0
		for _, n := range st.Nodes {
			if n.Down {
				if n.ID != third {
					return fmt.Errorf("node %x is down, not node 3 (%x)", n.ID, third)
				}
				down++
			}
		}
		if down != 1 || len(st.Nodes) != 3 {
			return fmt.Errorf("nodes %+v: want node 3 listed, down", st.Nodes)
		}
		led := leaders()
		if len(led) != 2 {
			return fmt.Errorf("%d partitions led", len(led))
		}
		for _, r := range led {
			if r.Quorum != "at risk" {
				return fmt.Errorf("partition %d: quorum %q", r.Partition, r.Quorum)
			}
			if len(r.Members) != 3 {
				return fmt.Errorf("partition %d: members %+v", r.Partition, r.Members)
			}
			for _, m := range r.Members {
				if (m.Node == third) != m.Down {
					return fmt.Errorf("partition %d: members %+v", r.Partition, r.Members)
				}
			}
		}
		return nil
	})
	for i := 20; i < 220; i++ {
		write(i)
	}
	out, err := exec.Command(partitaBin, "cluster", "status", "--endpoint", nodes[0].Endpoint).CombinedOutput()
	if err != nil {
		t.Fatalf("cluster status: %v\n%s", err, out)
	}
	for _, want := range []string{"down (not live in the control plane)", "at risk", "(down, "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("cluster status lacks %q:\n%s", want, out)
		}
	}
	// Back: not ready before its replicas have what was written meanwhile; then ready, and
	// serving it at Eventual (from its own replica).
	nodes[2].restart(t)
	var sawNotReady bool
	retrying(t, "node 3 ready again", func() error {
		code, body, err := readyOf(nodes[2].server)
		if err == nil && code != 200 {
			sawNotReady = true
			err = fmt.Errorf("GET /ready: %d %s", code, body)
		}
		return err
	})
	t.Logf("node 3 said it was not ready at least once: %v", sawNotReady)
	eventual := azcosmos.ConsistencyLevelEventual
	c3 := containersOn(t, nodes[2:])[0]
	for i := range 220 {
		if _, err := c3.ReadItem(cx, azcosmos.NewPartitionKeyString(fmt.Sprint("k", i%5)), fmt.Sprint("item", i), &azcosmos.ItemOptions{ConsistencyLevel: &eventual}); err != nil {
			t.Fatalf("node 3, ready, misses item%d at Eventual: %v", i, err)
		}
	}
	retrying(t, "every partition healthy again", func() error {
		led := map[uint32]explorerPartition{}
		for _, n := range nodes {
			for _, r := range clusterStatusOf(t, n.server).Replicas {
				if r.Leading {
					led[r.Partition] = r
				}
			}
		}
		if len(led) != 2 {
			return fmt.Errorf("%d partitions led", len(led))
		}
		for _, r := range led {
			if r.Quorum != "healthy" {
				return fmt.Errorf("partition %d: %q", r.Partition, r.Quorum)
			}
		}
		return nil
	})
}

// Catch-up after an outage, for docs/benchmarks.md: a node of three is killed while a writer
// upserts through another, restarted after PARTITA_CATCHUP (a comma-separated list of
// durations, e.g. 10s,60s,5m; the test is skipped without it), and timed until GET /ready
// answers 200, until every partition's leader finds it caught up (lag 0), and until it serves
// every item written meanwhile at Eventual (from its own replicas).
func TestClusterCatchUpTimes(t *testing.T) {
	spec := os.Getenv("PARTITA_CATCHUP")
	if spec == "" {
		t.Skip("set PARTITA_CATCHUP to the outages to measure, e.g. 10s,60s,5m")
	}
	for _, d := range strings.Split(spec, ",") {
		down, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(d, func(t *testing.T) { catchUpAfter(t, down) })
	}
}

func catchUpAfter(t *testing.T, down time.Duration) {
	// --dead-after 20s: a node down for longer comes back to replicas that were removed
	// meanwhile, and is given new ones (a snapshot each) rather than the entries it missed.
	nodes := startClusterOf(t, 3, func(int) []string { return []string{"--consistency", "Strong", "--dead-after", "20s"} })
	cx, cancel := context.WithCancel(context.Background())
	defer cancel()
	createDBAndContainer(t, nodes[0].sdk(t), nodes[0].sdk(t), 12000)
	c := containersOn(t, nodes[:1])[0]
	var written atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				pk := fmt.Sprint("k", i%50)
				body, _ := json.Marshal(map[string]any{"id": fmt.Sprint("w", w, "-", i), "pk": pk, "pad": strings.Repeat("x", 512)})
				if _, err := c.UpsertItem(cx, azcosmos.NewPartitionKeyString(pk), body, nil); err == nil {
					written.Add(1)
				}
			}
		})
	}
	time.Sleep(2 * time.Second)
	third := clusterStatusOf(t, nodes[2].server).Node
	nodes[2].kill()
	before := written.Load()
	time.Sleep(down)
	stop.Store(true)
	wg.Wait()
	missed := written.Load() - before
	began := time.Now()
	nodes[2].restart(t)
	listening := time.Since(began)
	var ready time.Duration
	for ready == 0 {
		if code, _, err := readyOf(nodes[2].server); err == nil && code == 200 {
			ready = time.Since(began)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var caughtUp time.Duration
	for caughtUp == 0 {
		behind := false
		for _, r := range clusterStatusOf(t, nodes[0].server).Replicas {
			for _, m := range r.Members {
				behind = behind || m.Node == third && m.Lag > 0
			}
		}
		if !behind {
			caughtUp = time.Since(began)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Every item written, read at Eventual through the node: from its own replicas.
	eventual := azcosmos.ConsistencyLevelEventual
	c3 := containersOn(t, nodes[2:])[0]
	var serving time.Duration
	for serving == 0 {
		if eventualCount(cx, c3, &eventual) >= written.Load() {
			serving = time.Since(began)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("down %v (%d writes meanwhile): listening %v after the restart, ready %v, lag 0 %v, every write served at Eventual %v",
		down, missed, listening.Round(time.Millisecond), ready.Round(time.Millisecond), caughtUp.Round(time.Millisecond), serving.Round(time.Millisecond))
	fmt.Fprintf(os.Stderr, "catch-up: down %v writes %d listening %.2fs ready %.2fs lag0 %.2fs eventual %.2fs\n", down, missed,
		listening.Seconds(), ready.Seconds(), caughtUp.Seconds(), serving.Seconds())
}

// eventualCount is how many items c's node counts in its own replicas (0 on an error).
func eventualCount(cx context.Context, c *azcosmos.ContainerClient, level *azcosmos.ConsistencyLevel) int64 {
	pager := c.NewQueryItemsPager("SELECT VALUE COUNT(1) FROM c", azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{ConsistencyLevel: level})
	var total int64
	for pager.More() {
		page, err := pager.NextPage(cx)
		if err != nil {
			return 0
		}
		for _, it := range page.Items {
			var n int64
			json.Unmarshal(it, &n)
			total += n
		}
	}
	return total
}
