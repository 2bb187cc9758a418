package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/partita-db/partita/internal/controlplane/controlplanetest"
)

// The nodes of a cluster change while the Go SDK reads and writes through it: a fourth
// process joins and receives a replica of every partition; `partita node drain` moves the
// replicas and leaderships off a founding node, which then stops; the fourth node loses its
// disk and comes back empty, and receives its replicas again. Every acknowledged item is read
// back through every node left, and counted by a cross-partition query.
func TestClusterMembershipProcesses(t *testing.T) {
	// A replica on every node (with three replicas per partition, a node that joins takes a
	// share: TestClusterReplicasProcesses).
	nodes := startClusterOf(t, 3, func(int) []string { return []string{"--replicas", "0"} })
	cx := ctx(t)
	createDBAndContainer(t, nodes[0].sdk(t), nodes[0].sdk(t), 12000) // two partitions
	container := func(n *clusterNode) *azcosmos.ContainerClient {
		c, err := n.sdk(t).NewContainer("db", "c")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	acked := 0
	write := func(via *clusterNode, n int) {
		t.Helper()
		for range n {
			id, pk := fmt.Sprint("item", acked), fmt.Sprint("k", acked%5)
			body, _ := json.Marshal(map[string]any{"id": id, "pk": pk})
			retrying(t, "create "+id, func() error {
				_, err := container(via).CreateItem(cx, azcosmos.NewPartitionKeyString(pk), body, nil)
				if statusOf(err) == 409 {
					return nil
				}
				return err
			})
			acked++
		}
	}
	// readAll reads every acknowledged item through via, and counts them with a query; a
	// node that has not received its replicas yet answers 503, and is asked again.
	readAll := func(via *clusterNode) {
		t.Helper()
		c := container(via)
		for i := range acked {
			retrying(t, fmt.Sprintf("read item%d through %s", i, via.args[1]), func() error {
				_, err := c.ReadItem(cx, azcosmos.NewPartitionKeyString(fmt.Sprint("k", i%5)), fmt.Sprint("item", i), nil)
				return err
			})
		}
		if got := countAll(t, c); got != acked {
			t.Fatalf("%s counts %d items, want %d", via.args[1], got, acked)
		}
	}
	status := func(via *clusterNode) string {
		out, err := exec.Command(partitaBin, "cluster", "status", "--endpoint", via.Endpoint).CombinedOutput()
		if err != nil {
			t.Fatalf("cluster status: %v\n%s", err, out)
		}
		return string(out)
	}
	write(nodes[1], 30)

	// A fourth node joins: its --join names the founding nodes, of which it is not one.
	join := nodes[0].args[3]
	fourth := &clusterNode{dir: t.TempDir(), args: []string{"--cluster-addr", controlplanetest.FreeAddr(t), "--join", join, "--log-level", "warn"}}
	fourth.restart(t)
	joined := time.Now()
	readAll(fourth)
	t.Logf("the fourth node served every item %v after it started", time.Since(joined).Round(time.Millisecond))
	write(fourth, 10)
	// Its metrics say what it holds: a replica of both partitions, received as snapshots.
	retrying(t, "the fourth node's metrics", func() error {
		resp, err := fourth.client.Get(fourth.Endpoint + "metrics")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		for _, want := range []string{"partita_node_replicas 2", "partita_node_learners 0", `partita_replication_snapshots_total{direction="installed"}`, "partita_node_info{", `partita_forwarded_requests_total{direction="sent"}`} {
			if !strings.Contains(string(body), want) {
				return fmt.Errorf("/metrics lacks %s", want)
			}
		}
		return nil
	})
	retrying(t, "four replicas of each partition", func() error {
		out := status(nodes[1])
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "db ") && strings.Count(line, ":") < 4*2 { // node host:port:lsn per replica
				return fmt.Errorf("a partition has fewer than four replicas:\n%s", out)
			}
		}
		return nil
	})

	// A drain of one of four nodes: the command waits until it holds no replica, then the
	// node stops (SIGTERM) and nothing is lost.
	began := time.Now()
	out, err := exec.Command(partitaBin, "node", "drain", nodes[0].args[1], "--endpoint", nodes[1].Endpoint, "--timeout", "60s").CombinedOutput()
	if err != nil {
		t.Fatalf("node drain: %v\n%s", err, out)
	}
	t.Logf("partita node drain took %v:\n%s", time.Since(began).Round(time.Millisecond), out)
	if st := status(nodes[1]); !strings.Contains(st, "live, draining") {
		t.Fatalf("cluster status does not show the drained node:\n%s", st)
	}
	nodes[0].stop(t)
	write(nodes[2], 10)
	// A drain that would leave fewer than three nodes holding replicas is refused.
	if out, err := exec.Command(partitaBin, "node", "drain", nodes[1].args[1], "--endpoint", nodes[2].Endpoint).CombinedOutput(); err == nil {
		t.Fatalf("draining one of three nodes was accepted:\n%s", out)
	}

	// The fourth node loses its disk: it starts again empty, with the same address.
	fourth.kill()
	if err := os.RemoveAll(fourth.dir); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(fourth.dir, 0o755)
	fourth.restart(t)
	wiped := time.Now()
	readAll(fourth)
	t.Logf("the wiped node served every item again %v after it started", time.Since(wiped).Round(time.Millisecond))
	write(nodes[1], 10)
	for _, n := range []*clusterNode{fourth, nodes[1], nodes[2]} {
		readAll(n)
	}
	t.Logf("partita cluster status:\n%s", status(nodes[2]))
}
