package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/gocql/gocql"

	"github.com/partita-db/partita/internal/controlplane/controlplanetest"
)

// createDBAndContainer creates database "db" through dbVia and its container "c", partitioned
// on /pk with ru RU/s (ru/6000 partitions, at least one), through containerVia: the node that
// creates a container campaigns first in its groups and leads them.
func createDBAndContainer(t *testing.T, dbVia, containerVia *azcosmos.Client, ru int32) {
	t.Helper()
	cx := ctx(t)
	if _, err := dbVia.CreateDatabase(cx, azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := containerVia.NewDatabase("db")
	tp := azcosmos.NewManualThroughputProperties(ru)
	if _, err := db.CreateContainer(cx, azcosmos.ContainerProperties{ID: "c",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Kind: azcosmos.PartitionKeyKindHash, Version: 2}},
		&azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		t.Fatal(err)
	}
}

// nodeSession is a gocql session to the node whose CQL address is addr, and to it only: the
// test chooses which node serves.
func nodeSession(t *testing.T, addr string) *gocql.Session {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	cluster := gocql.NewCluster("127.0.0.1")
	cluster.Port, _ = strconv.Atoi(port)
	cluster.ProtoVersion = 4
	cluster.Timeout = 30 * time.Second
	cluster.Authenticator = gocql.PasswordAuthenticator{Username: "partita", Password: emulatorKey}
	cluster.DisableInitialHostLookup = true
	cluster.Consistency = gocql.Quorum
	cluster.RetryPolicy = overloadedRetry{}
	return cqlSession(t, cluster)
}

// startCQLCluster starts three nodes that serve the Cassandra API, and a gocql session at
// QUORUM on each (nodeSession); cqlAddrs are their CQL addresses.
func startCQLCluster(t *testing.T) (nodes []*clusterNode, sessions []*gocql.Session, cqlAddrs []string) {
	t.Helper()
	// CQL ports below the ephemeral range, where outgoing connections cannot take them.
	cqlAddrs = []string{controlplanetest.FreeAddr(t), controlplanetest.FreeAddr(t), controlplanetest.FreeAddr(t)}
	nodes = startClusterOf(t, 3, func(i int) []string { return []string{"--cql-addr", cqlAddrs[i]} })
	for i, n := range nodes {
		n.waitListening(t, time.Minute)
		sessions = append(sessions, nodeSession(t, cqlAddrs[i]))
	}
	return nodes, sessions, cqlAddrs
}

// containersOn are container "c" of database "db" through each of nodes.
func containersOn(t *testing.T, nodes []*clusterNode) []*azcosmos.ContainerClient {
	t.Helper()
	var cs []*azcosmos.ContainerClient
	for _, n := range nodes {
		c, err := n.sdk(t).NewContainer("db", "c")
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	return cs
}

// clusterNode is one `partita serve` of a cluster: how to start it again on its directory.
type clusterNode struct {
	*server
	dir  string
	args []string
	tls  bool
	bin  string // the partita binary it runs; "": this one's
}

func (n *clusterNode) restart(t *testing.T) {
	bin := n.bin
	if bin == "" {
		bin = partitaBin
	}
	n.server = launchServerOf(t, bin, n.dir, n.tls, n.args...)
	n.waitListening(t, time.Minute)
}

// kill stops the node as kill -9 does.
func (n *clusterNode) kill() {
	n.cmd.Process.Kill()
	n.cmd.Wait()
}

// startClusterOf starts n nodes that form a cluster: each the founding list's, node i with
// the extra arguments extra(i) when extra is set.
func startClusterOf(t *testing.T, n int, extra ...func(i int) []string) []*clusterNode {
	t.Helper()
	t.Setenv("PARTITA_CLUSTER_SECRET", clusterSecret)
	return launchCluster(t, n, false, extra...)
}

// clusterSecret is the e2e clusters' secret, in PARTITA_CLUSTER_SECRET for the nodes.
const clusterSecret = "the e2e cluster's shared secret"

// launchCluster is startClusterOf for a caller that set PARTITA_CLUSTER_SECRET, over HTTPS
// when useTLS.
func launchCluster(t testing.TB, n int, useTLS bool, extra ...func(i int) []string) []*clusterNode {
	t.Helper()
	return launchClusterOf(t, partitaBin, n, useTLS, extra...)
}

// launchClusterOf is launchCluster with the partita binary bin (another release's).
func launchClusterOf(t testing.TB, bin string, n int, useTLS bool, extra ...func(i int) []string) []*clusterNode {
	t.Helper()
	var addrs []string
	for range n {
		addrs = append(addrs, controlplanetest.FreeAddr(t))
	}
	var nodes []*clusterNode
	for i, a := range addrs {
		dir := t.TempDir()
		args := []string{"--cluster-addr", a, "--join", strings.Join(addrs, ","), "--log-level", "warn"}
		for _, x := range extra {
			args = append(args, x(i)...)
		}
		nodes = append(nodes, &clusterNode{server: launchServerOf(t, bin, dir, useTLS, args...), dir: dir, args: args, tls: useTLS, bin: bin})
	}
	for _, nd := range nodes {
		// Its API port was free when chosen; an outgoing connection of another node may have
		// taken it since, and the node then exits at start: start it again on another.
		for attempt := 0; ; attempt++ {
			if nd.listensWithin(time.Minute) {
				nd.waitListening(t, time.Second) // and its client
				break
			}
			if attempt == 3 || !strings.Contains(nd.Logs(), "address already in use") {
				t.Fatalf("a node did not start:\n%s", nd.Logs())
			}
			nd.cmd.Wait() // it exited: its cleanup has nothing to stop
			nd.server = launchServerOf(t, bin, nd.dir, useTLS, nd.args...)
		}
	}
	return nodes
}

// retrying calls fn until it succeeds or 30 seconds pass, and then fails the test with its
// last error: the SDK's own retries stop sooner than a failover may take. It stops the test:
// goroutines other than the test's call retry.
func retrying(t *testing.T, what string, fn func() error) {
	t.Helper()
	if err := retry(what, fn); err != nil {
		t.Fatal(err)
	}
}

// retry calls fn until it succeeds, for at most 30 s, and returns its last error then.
func retry(what string, fn func() error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := fn()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %w", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Three `partita serve` processes are one database for the Go SDK: a database and container
// created through one node are there on every node; items written through any node are read
// through every node and by a cross-partition query; concurrent patches through all nodes
// are each applied once; a node killed with SIGKILL leaves the others writing within seconds,
// and it catches up when it restarts; nothing acknowledged is lost.
func TestClusterOfThreeProcesses(t *testing.T) {
	// At Strong, every node reads every write acknowledged anywhere (at the default Session,
	// a node may serve from a replica a moment behind a write made through another).
	nodes := startClusterOf(t, 3, func(int) []string { return []string{"--consistency", "Strong"} })
	cx := ctx(t)
	createDBAndContainer(t, nodes[0].sdk(t), nodes[1].sdk(t), 12000) // two partitions
	containers := func() []*azcosmos.ContainerClient { return containersOn(t, nodes) }
	cs := containers()
	acked := map[string]string{} // id -> pk
	create := func(c *azcosmos.ContainerClient, id, pk string) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"id": id, "pk": pk, "n": 0})
		retrying(t, "create "+id, func() error {
			_, err := c.CreateItem(cx, azcosmos.NewPartitionKeyString(pk), body, nil)
			if statusOf(err) == 409 {
				return nil // an earlier try was applied
			}
			return err
		})
		acked[id] = pk
	}
	for i := range 60 {
		create(cs[i%3], fmt.Sprint("item", i), fmt.Sprint("k", i%7))
	}
	for n, c := range cs {
		for id, pk := range acked {
			if _, err := c.ReadItem(cx, azcosmos.NewPartitionKeyString(pk), id, nil); err != nil {
				t.Fatalf("node %d reads %s: %v", n+1, id, err)
			}
		}
	}
	countErr := func(c *azcosmos.ContainerClient) (int, error) {
		pager := c.NewQueryItemsPager("SELECT VALUE COUNT(1) FROM c", azcosmos.NewPartitionKey(), nil)
		total := 0
		for pager.More() {
			page, err := pager.NextPage(cx)
			if err != nil {
				return 0, err
			}
			for _, it := range page.Items {
				var n int
				json.Unmarshal(it, &n)
				total += n
			}
		}
		return total, nil
	}
	count := func(c *azcosmos.ContainerClient) int {
		t.Helper()
		n, err := countErr(c)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(cs[2]); n != 60 {
		t.Fatalf("a cross-partition count through node 3 gives %d, want 60", n)
	}
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				patch := azcosmos.PatchOperations{}
				patch.AppendIncrement("/n", 1)
				err := retry("patch", func() error {
					_, err := c.PatchItem(cx, azcosmos.NewPartitionKeyString("k0"), "item0", patch, nil)
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	r, err := cs[1].ReadItem(cx, azcosmos.NewPartitionKeyString("k0"), "item0", nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ N int }
	if json.Unmarshal(r.Value, &doc); doc.N != 15 {
		t.Fatalf("15 increments through three nodes gave %d", doc.N)
	}

	// kill -9 the node the container was created through, which campaigned first in its
	// partitions' groups and leads them unless an election moved them: the others go on
	// writing once they have elected leaders.
	nodes[1].kill()
	killed := time.Now()
	create(cs[0], "after-kill-0", "k0")
	t.Logf("the first write after the leaders' node was killed took %v", time.Since(killed).Round(time.Millisecond))
	for i := 1; i < 30; i++ {
		create(cs[2*(i%2)], fmt.Sprint("after-kill-", i), fmt.Sprint("k", i%7))
	}
	nodes[1].restart(t)
	cs = containers()
	retrying(t, "the restarted node catches up", func() error {
		if n, err := countErr(cs[1]); err != nil || n != 90 {
			if err != nil {
				return err
			}
			return fmt.Errorf("it counts %d items, want 90", n)
		}
		return nil
	})
	for n, c := range cs {
		for id, pk := range acked {
			if _, err := c.ReadItem(cx, azcosmos.NewPartitionKeyString(pk), id, nil); err != nil {
				t.Fatalf("node %d reads %s at the end: %v", n+1, id, err)
			}
		}
	}
	// A rolling restart: each node in turn stopped with SIGTERM (it hands its leaderships off
	// first) and started again, while a client writes through the next node: no write fails,
	// the SDK's own retries aside.
	rolled := 0
	for i := range nodes {
		writer := cs[(i+1)%3]
		stopWriting := make(chan struct{})
		written := make(chan int)
		var failures []error
		go func() {
			n := 0
			for {
				select {
				case <-stopWriting:
					written <- n
					return
				default:
				}
				id := fmt.Sprintf("rolling-%d-%d", i, n)
				body, _ := json.Marshal(map[string]any{"id": id, "pk": "k1"})
				if _, err := writer.CreateItem(cx, azcosmos.NewPartitionKeyString("k1"), body, nil); err != nil {
					failures = append(failures, err)
				} else {
					rolled++
				}
				n++
				time.Sleep(2 * time.Millisecond) // a steady client, not a load test
			}
		}()
		time.Sleep(300 * time.Millisecond)
		nodes[i].stop(t)
		time.Sleep(300 * time.Millisecond)
		nodes[i].restart(t)
		time.Sleep(300 * time.Millisecond)
		close(stopWriting)
		n := <-written
		if len(failures) > 0 {
			t.Fatalf("%d of %d writes through node %d failed while node %d restarted: %v", len(failures), n, (i+1)%3+1, i+1, failures[0])
		}
		t.Logf("%d writes through node %d while node %d restarted, none failed", n, (i+1)%3+1, i+1)
		cs = containers()
	}
	for n, c := range cs {
		if got := count(c); got != 90+rolled {
			t.Fatalf("node %d counts %d items after the rolling restart, want %d", n+1, got, 90+rolled)
		}
	}
	// partita cluster status lists the three nodes and each partition's leader and replicas.
	out, err := exec.Command(partitaBin, "cluster", "status", "--endpoint", nodes[0].Endpoint).CombinedOutput()
	if err != nil {
		t.Fatalf("cluster status: %v\n%s", err, out)
	}
	t.Logf("partita cluster status:\n%s", out)
	for _, n := range nodes {
		if !strings.Contains(string(out), n.args[1]) {
			t.Fatalf("cluster status does not list node %s:\n%s", n.args[1], out)
		}
	}
	if strings.Count(string(out), "db  ") < 2 || strings.Contains(string(out), "none known") {
		t.Fatalf("cluster status does not show both partitions with their leaders:\n%s", out)
	}
}

// The Cassandra API of a three-process cluster: schema made through one node is every node's,
// rows written through any node are read through every node, and lightweight transactions
// from all nodes at once (compare-and-set increments) are each applied once.
func TestClusterCQL(t *testing.T) {
	_, sessions, _ := startCQLCluster(t)
	mustExec(t, sessions[0], `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`)
	mustExec(t, sessions[0], `CREATE TABLE shop.accounts (owner text, name text, balance bigint, PRIMARY KEY (owner, name)) WITH cosmosdb_provisioned_throughput = 6000`)
	for i := range 30 {
		retrying(t, "insert", func() error {
			return sessions[i%3].Query(`INSERT INTO shop.accounts (owner, name, balance) VALUES (?, ?, ?)`, fmt.Sprint("o", i%5), fmt.Sprint("a", i), int64(i)).Exec()
		})
	}
	for n, s := range sessions {
		var count int
		if err := s.Query(`SELECT COUNT(*) FROM shop.accounts WHERE owner = ?`, "o1").Scan(&count); err != nil || count != 6 {
			t.Fatalf("node %d counts %d rows of o1, want 6 (%v)", n+1, count, err)
		}
	}
	var wg sync.WaitGroup
	for n, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < 10; {
				var b int64
				if err := s.Query(`SELECT balance FROM shop.accounts WHERE owner = ? AND name = ?`, "o0", "a0").Scan(&b); err != nil {
					t.Errorf("node %d reads: %v", n+1, err)
					return
				}
				applied, err := s.Query(`UPDATE shop.accounts SET balance = ? WHERE owner = ? AND name = ? IF balance = ?`, b+1, "o0", "a0", b).ScanCAS(new(int64))
				if err != nil {
					t.Errorf("node %d compare-and-set: %v", n+1, err)
					return
				}
				if applied {
					done++
				}
			}
		}()
	}
	wg.Wait()
	var b int64
	if err := sessions[2].Query(`SELECT balance FROM shop.accounts WHERE owner = ? AND name = ?`, "o0", "a0").Scan(&b); err != nil || b != 30 {
		t.Fatalf("30 compare-and-set increments through three nodes gave %d (%v)", b, err)
	}
}

// Five processes: every partition has five replicas, so two nodes may die, the leaders' among
// them, and the three others go on writing and reading everything acknowledged.
func TestClusterOfFiveProcesses(t *testing.T) {
	nodes := startClusterOf(t, 5, func(int) []string { return []string{"--replicas", "5"} })
	cx := ctx(t)
	createDBAndContainer(t, nodes[0].sdk(t), nodes[0].sdk(t), 400)
	container := func(n int) *azcosmos.ContainerClient {
		c, err := nodes[n].sdk(t).NewContainer("db", "c")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	acked := 0
	write := func(n int) {
		t.Helper()
		id := fmt.Sprint("item", acked)
		body, _ := json.Marshal(map[string]any{"id": id, "pk": fmt.Sprint("k", acked%4)})
		retrying(t, "create "+id, func() error {
			_, err := container(n).CreateItem(cx, azcosmos.NewPartitionKeyString(fmt.Sprint("k", acked%4)), body, nil)
			if statusOf(err) == 409 {
				return nil
			}
			return err
		})
		acked++
	}
	for i := range 20 {
		write(i % 5)
	}
	nodes[0].kill() // it leads every partition: the container was created through it
	nodes[3].kill()
	killed := time.Now()
	write(1)
	t.Logf("the first write after two of five nodes were killed took %v", time.Since(killed).Round(time.Millisecond))
	for i := range 20 {
		write([]int{1, 2, 4}[i%3])
	}
	for _, n := range []int{1, 2, 4} {
		for i := range acked {
			if _, err := container(n).ReadItem(cx, azcosmos.NewPartitionKeyString(fmt.Sprint("k", i%4)), fmt.Sprint("item", i), nil); err != nil {
				t.Fatalf("node %d reads item%d: %v", n+1, i, err)
			}
		}
	}
}
