package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// netnsLab is a bridge in this network namespace and one network namespace per node, each
// with an address on the bridge that this process reaches the node on.
type netnsLab struct {
	t      *testing.T
	tag    string // makes the names of this run's interfaces and namespaces unique
	subnet string // "10.231.N."
}

func (l *netnsLab) ip(args ...string) {
	l.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		l.t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (l *netnsLab) ns(i int) string            { return fmt.Sprintf("pn%s%d", l.tag, i) }
func (l *netnsLab) addr(i int) string          { return fmt.Sprintf("%s%d", l.subnet, i) }
func (l *netnsLab) inNS(i int, args ...string) { l.ip(append([]string{"-n", l.ns(i)}, args...)...) }

// newNetnsLab makes the bridge and n namespaces, removed when the test ends. It skips the test
// where namespaces cannot be made (not root, or no ip), unless CI is set.
func newNetnsLab(t *testing.T, n int) *netnsLab {
	t.Helper()
	_, err := exec.LookPath("ip")
	if os.Geteuid() != 0 || err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the network-partition test needs root and iproute2's ip (uid %d, ip: %v)", os.Geteuid(), err)
		}
		t.Skipf("the network-partition test needs root and iproute2's ip (uid %d, ip: %v)", os.Geteuid(), err)
	}
	l := &netnsLab{t: t, tag: fmt.Sprintf("%04x", rand.IntN(1<<16)), subnet: fmt.Sprintf("10.231.%d.", rand.IntN(250))}
	br := "pb" + l.tag
	t.Cleanup(func() {
		for i := 1; i <= n; i++ {
			exec.Command("ip", "link", "del", fmt.Sprintf("pv%s%d", l.tag, i)).Run() // and its peer
			exec.Command("ip", "netns", "del", l.ns(i)).Run()
		}
		exec.Command("ip", "link", "del", br).Run()
	})
	l.ip("link", "add", br, "type", "bridge")
	l.ip("addr", "add", l.subnet+"254/24", "dev", br)
	l.ip("link", "set", br, "up")
	for i := 1; i <= n; i++ {
		host, peer := fmt.Sprintf("pv%s%d", l.tag, i), fmt.Sprintf("pe%s%d", l.tag, i)
		l.ip("netns", "add", l.ns(i))
		l.ip("link", "add", host, "type", "veth", "peer", "name", peer)
		l.ip("link", "set", peer, "netns", l.ns(i))
		l.ip("link", "set", host, "master", br)
		l.ip("link", "set", host, "up")
		l.inNS(i, "addr", "add", l.addr(i)+"/24", "dev", peer)
		l.inNS(i, "link", "set", peer, "up")
		l.inNS(i, "link", "set", "lo", "up")
	}
	return l
}

// cut makes node i and the nodes of others unreachable to each other (this process still
// reaches all of them); heal undoes it.
func (l *netnsLab) cut(i int, others []int, undo bool) {
	verb := "add"
	if undo {
		verb = "del"
	}
	for _, o := range others {
		l.inNS(i, "route", verb, "blackhole", l.addr(o)+"/32")
		l.inNS(o, "route", verb, "blackhole", l.addr(i)+"/32")
	}
}

// startNode runs partita serve in node i's namespace.
func (l *netnsLab) startNode(i int, join []string) *server {
	l.t.Helper()
	args := []string{"netns", "exec", l.ns(i), partitaBin, "serve", "--data", l.t.TempDir(), "--addr", l.addr(i) + ":8081",
		"--cql-addr=", "--tls=false", "--log-level", "warn", "--cluster-addr", l.addr(i) + ":7001", "--join", strings.Join(join, ","),
		"--consistency", "Strong"} // the cut-off node must refuse reads, not serve what it holds
	cmd := exec.Command("ip", args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	s := &server{Endpoint: "http://" + l.addr(i) + ":8081/", addr: l.addr(i) + ":8081", cmd: cmd, client: &http.Client{Timeout: 30 * time.Second}}
	l.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
		}
	})
	return s
}

// A network partition isolates the node that leads every partition: the two others elect a
// leader and serve writes; the isolated node refuses writes and serves no stale read (but at
// Eventual, and at Bounded Staleness within its bound); once healed it serves what the
// majority wrote. Each node runs in its own network namespace, and
// the partition is blackhole routes between them, so the test still reaches every node.
func TestClusterNetworkPartition(t *testing.T) {
	l := newNetnsLab(t, 3)
	t.Setenv("PARTITA_CLUSTER_SECRET", "the e2e cluster's shared secret")
	join := []string{l.addr(1) + ":7001", l.addr(2) + ":7001", l.addr(3) + ":7001"}
	var nodes []*server
	for i := 1; i <= 3; i++ {
		nodes = append(nodes, l.startNode(i, join))
	}
	for _, n := range nodes {
		waitDial(t, n.addr, time.Minute)
	}
	cx := ctx(t)
	createDBAndContainer(t, nodes[0].sdk(t), nodes[0].sdk(t), 400) // node 1 leads every partition
	container := func(n int) *azcosmos.ContainerClient {
		c, err := nodes[n].sdk(t).NewContainer("db", "c")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	create := func(c *azcosmos.ContainerClient, id string) error {
		body, _ := json.Marshal(map[string]any{"id": id, "pk": "p"})
		_, err := c.CreateItem(cx, azcosmos.NewPartitionKeyString("p"), body, nil)
		return err
	}
	for i := range 10 {
		retrying(t, "a write before the partition", func() error { return create(container(1), fmt.Sprint("before", i)) })
	}

	// A Bounded Staleness read through node 1 confirms its replica fresh, for 5 s.
	bounded := azcosmos.ConsistencyLevelBoundedStaleness
	confirmed := time.Now()
	if _, err := container(0).ReadItem(cx, azcosmos.NewPartitionKeyString("p"), "before0", &azcosmos.ItemOptions{ConsistencyLevel: &bounded}); err != nil {
		t.Fatal(err)
	}
	l.cut(1, []int{2, 3}, false)
	cut := time.Now()
	retrying(t, "a write on the majority's side", func() error {
		err := create(container(1), "during")
		if statusOf(err) == 409 {
			return nil
		}
		return err
	})
	t.Logf("the majority's side took a write %v after the partition", time.Since(cut).Round(time.Millisecond))
	// The isolated node: no write, and no read that misses the majority's write.
	if err := create(container(0), "minority"); err == nil {
		t.Fatal("the isolated node took a write")
	}
	if _, err := container(0).ReadItem(cx, azcosmos.NewPartitionKeyString("p"), "during", nil); err == nil || statusOf(err) == 404 {
		t.Fatalf("the isolated node served a read of a write it cannot have seen: %v", err)
	}
	// At Eventual it serves what it holds, without the majority's write; at Bounded Staleness
	// it does so only within the bound (5 s, the default), then refuses.
	eventual := azcosmos.ConsistencyLevelEventual
	if _, err := container(0).ReadItem(cx, azcosmos.NewPartitionKeyString("p"), "during", &azcosmos.ItemOptions{ConsistencyLevel: &eventual}); statusOf(err) != 404 {
		t.Fatalf("an Eventual read through the isolated node: %v; want 404, the item it has not seen", err)
	}
	time.Sleep(time.Until(confirmed.Add(5 * time.Second)))
	if _, err := container(0).ReadItem(cx, azcosmos.NewPartitionKeyString("p"), "during", &azcosmos.ItemOptions{ConsistencyLevel: &bounded}); err == nil || statusOf(err) == 404 {
		t.Fatalf("a Bounded Staleness read through the node isolated for longer than the bound: %v; want it refused", err)
	}

	l.cut(1, []int{2, 3}, true)
	retrying(t, "the healed node reads the majority's write", func() error {
		_, err := container(0).ReadItem(cx, azcosmos.NewPartitionKeyString("p"), "during", nil)
		return err
	})
	retrying(t, "a write through the healed node", func() error {
		err := create(container(0), "after")
		if statusOf(err) == 409 {
			return nil
		}
		return err
	})
	// What the isolated node refused was not applied behind anyone's back, unless it was a
	// write of unknown outcome; either way every node answers the same.
	_, err0 := container(0).ReadItem(cx, azcosmos.NewPartitionKeyString("p"), "minority", nil)
	_, err2 := container(2).ReadItem(cx, azcosmos.NewPartitionKeyString("p"), "minority", nil)
	if statusOf(err0) != statusOf(err2) {
		t.Fatalf("nodes disagree on the refused write: %v / %v", err0, err2)
	}
}
