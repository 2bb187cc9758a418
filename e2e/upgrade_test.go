package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/controlplane/controlplanetest"
)

// previousReleases are the commits of the releases before this one, each with the newest
// cluster version it knows: every release runs in a cluster of its predecessor's nodes and
// upgrades from it node by node. 4a8e4d4 kept no cluster version (it runs at Base), and is
// kept as the oldest release a cluster upgrades from in one step.
// Each is also named by the start of its commit's subject, by which it is found in a history
// whose commits were rewritten.
var previousReleases = []struct {
	commit, subject string
	knows           clusterversion.Version
}{
	{"4a8e4d4", "engine tests: keysChanged checks the keys a delete removed", clusterversion.Base},
	{"e902683", "review: the replication harness's partition meta codec is exported", clusterversion.V2},
}

// previousBinary builds the partita of previousRelease from this repository's history (or
// takes PARTITA_PREVIOUS_BIN, for the newest), and skips the test when the history does not
// hold it, but for CI, where that is a failure.
func previousBinary(t *testing.T, previousRelease, subject string) string {
	t.Helper()
	if bin := os.Getenv("PARTITA_PREVIOUS_BIN"); bin != "" && previousRelease == previousReleases[len(previousReleases)-1].commit {
		return bin
	}
	if err := exec.Command("git", "cat-file", "-e", previousRelease+"^{commit}").Run(); err != nil {
		out, _ := exec.Command("git", "log", "--all", "-1", "--format=%H", "--fixed-strings", "--grep", subject).Output()
		if found := strings.TrimSpace(string(out)); found != "" {
			previousRelease = found
		}
	}
	if err := exec.Command("git", "cat-file", "-e", previousRelease+"^{commit}").Run(); err != nil {
		msg := fmt.Sprintf("the previous release %s is not in this checkout's history (a shallow clone?): fetch it, or set PARTITA_PREVIOUS_BIN", previousRelease)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	src := t.TempDir()
	archive := exec.Command("sh", "-c", fmt.Sprintf("git archive %s | tar -x -C %s", previousRelease, src))
	archive.Dir = ".." // the repository's root: archived from a subdirectory, git takes that one only
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("extracting %s: %v\n%s", previousRelease, err, out)
	}
	bin := filepath.Join(t.TempDir(), "partita-"+previousRelease)
	build := exec.Command("go", "build", "-o", bin, "./cmd/partita")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", previousRelease, err, out)
	}
	return bin
}

// A cluster of a previous release is upgraded to this one node by node (stop, start the new
// binary on the same data directory, wait for it to be ready) while writers create items
// through the Go SDK on the nodes that run. No write fails beyond the SDK's own retries, none
// acknowledged is lost, the cluster's version is raised once the last node runs this release
// (not before), and a node of the previous release is then refused.
func TestRollingUpgradeFromThePreviousRelease(t *testing.T) {
	t.Setenv("PARTITA_CLUSTER_SECRET", clusterSecret)
	for _, prev := range previousReleases {
		t.Run(prev.commit, func(t *testing.T) { testRollingUpgrade(t, prev.commit, prev.subject, prev.knows) })
	}
}

func testRollingUpgrade(t *testing.T, previousRelease, subject string, knows clusterversion.Version) {
	old := previousBinary(t, previousRelease, subject)
	nodes := launchClusterOf(t, old, 3, false, func(int) []string { return []string{"--consistency", "Strong"} })
	createDBAndContainer(t, nodes[0].sdk(t), nodes[1].sdk(t), 12000) // two partitions (the previous release has no /ready)

	// Writers, each on the nodes that are up: a client of a deployment is pointed at those.
	var down atomic.Int32 // 1 + the index of the node being upgraded; 0: none
	cx, stop := context.WithCancel(context.Background())
	var mu sync.Mutex
	acked := map[string]string{}
	var failures []string
	var wg sync.WaitGroup
	clients := make([]*azcosmos.ContainerClient, 3)
	refresh := func(i int) {
		c, err := nodes[i].sdkWith(t, azcore.ClientOptions{}).NewContainer("db", "c") // the SDK's default retries
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		clients[i] = c
		mu.Unlock()
	}
	for i := range nodes {
		refresh(i)
	}
	for w := range 4 {
		wg.Go(func() {
			for n := 0; cx.Err() == nil; n++ {
				i := (w + n) % 3
				if int(down.Load()) == i+1 {
					continue
				}
				mu.Lock()
				c := clients[i]
				mu.Unlock()
				id, pk := fmt.Sprintf("w%d-%d", w, n), fmt.Sprintf("k%d", n%7)
				body, _ := json.Marshal(map[string]any{"id": id, "pk": pk})
				_, err := c.CreateItem(cx, azcosmos.NewPartitionKeyString(pk), body, nil)
				mu.Lock()
				switch {
				case err == nil:
					acked[id] = pk
				case cx.Err() == nil && int(down.Load()) != i+1: // not the node being stopped under it
					failures = append(failures, fmt.Sprintf("%s through node %d: %v", id, i+1, err))
				}
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		})
	}

	for i, n := range nodes {
		time.Sleep(2 * time.Second) // writes through the mixed cluster
		if v := clusterStatusOf(t, nodes[(i+1)%3].server).ClusterVersion; i > 0 && v > uint32(knows) {
			t.Fatalf("the cluster's version is v%d with %d of 3 nodes upgraded", v, i)
		}
		down.Store(int32(i + 1))
		n.stop(t)
		n.bin = partitaBin
		n.restart(t)
		waitReady(t, n.server)
		refresh(i)
		down.Store(0)
		t.Logf("node %d runs this release", i+1)
	}
	retrying(t, "the cluster's version raised", func() error {
		for i, n := range nodes {
			if v := clusterStatusOf(t, n.server).ClusterVersion; v < uint32(clusterversion.Latest) {
				return fmt.Errorf("node %d reads the cluster's version as v%d", i+1, v)
			}
		}
		return nil
	})
	time.Sleep(2 * time.Second) // writes at the new version (typed messages between the nodes)
	stop()
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d writes failed beyond the SDK's retries, the first: %s", len(failures), failures[0])
	}
	if len(acked) < 50 {
		t.Fatalf("only %d writes acknowledged", len(acked))
	}
	c := containersOn(t, nodes[2:])[0]
	for id, pk := range acked {
		if _, err := c.ReadItem(ctx(t), azcosmos.NewPartitionKeyString(pk), id, nil); err != nil {
			t.Fatalf("acknowledged item %s: %v", id, err)
		}
	}
	t.Logf("%d items written through the upgrade, every one read back", len(acked))

	// A container of a release before id and _ts were always indexed: once every node runs
	// this release, its partitions' leaders recheck those entries, after which a filter on _ts
	// reads the index instead of every item (here it matches nothing: a scan would load the
	// logical partition's items).
	if knows < clusterversion.V2 { // the releases before v2 did not index them
		retrying(t, "a filter on _ts read from the index", func() error {
			// The SDK asks for the query's metrics on every query.
			q := c.NewQueryItemsPager("SELECT VALUE c.id FROM c WHERE c._ts > 4102444800", azcosmos.NewPartitionKeyString("k0"), nil)
			page, err := q.NextPage(ctx(t))
			if err != nil {
				return err
			}
			if page.QueryMetrics == nil {
				return fmt.Errorf("the query answered no metrics")
			}
			if !strings.Contains(*page.QueryMetrics, "retrievedDocumentCount=0;") {
				return fmt.Errorf("the query read the items: %s", *page.QueryMetrics)
			}
			return nil
		})
	}

	// A node of the previous release that joins now is refused: one of a release that knows
	// versions stops, saying why; one of a release before versions is refused by its peers,
	// which say so, and given no replica.
	join := make([]string, len(nodes))
	for i, n := range nodes {
		join[i] = argAfter(n.args, "--cluster-addr")
	}
	addr4 := controlplanetest.FreeAddr(t)
	fourth := launchServerOf(t, old, t.TempDir(), false, "--cluster-addr", addr4, "--join", strings.Join(join, ","), "--log-level", "warn")
	if knows > clusterversion.Base {
		exited := make(chan error, 1)
		go func() { exited <- fourth.cmd.Wait() }()
		select {
		case err := <-exited:
			if err == nil || !strings.Contains(fourth.Logs(), "knows cluster versions up to "+knows.String()) {
				t.Fatalf("the node of %s exited (%v) without saying its release is too old:\n%s", previousRelease, err, fourth.Logs())
			}
		case <-time.After(time.Minute):
			t.Fatalf("the node of %s still runs in a cluster at %s", previousRelease, clusterversion.Latest)
		}
		return
	}
	fourth.waitListening(t, time.Minute)
	retrying(t, "the node of the previous release refused", func() error {
		for _, n := range nodes {
			if strings.Contains(n.Logs(), "refusing a node of an older release") {
				return nil
			}
		}
		// It is refused when it calls: a write through it is forwarded to a leader.
		c, err := fourth.sdk(t).NewContainer("db", "c")
		if err != nil {
			return err
		}
		c.UpsertItem(cx, azcosmos.NewPartitionKeyString("k0"), []byte(`{"id":"from-the-old-node","pk":"k0"}`), nil)
		return fmt.Errorf("no node logged a refusal")
	})
	st := clusterStatusOf(t, nodes[0].server)
	var id4 uint64
	for _, n := range st.Nodes {
		if n.Addr == addr4 {
			if n.Version != 0 {
				t.Fatalf("the node of the previous release is listed as knowing v%d", n.Version)
			}
			id4 = n.ID
		}
	}
	if id4 == 0 {
		t.Fatalf("the node of the previous release is not listed: %+v", st.Nodes)
	}
	for _, r := range st.Replicas {
		if slices.Contains(r.Voters, id4) || slices.Contains(r.Learners, id4) {
			t.Fatalf("partition %d has a replica on the node of the previous release", r.Partition)
		}
	}
}

// argAfter is the value of flag in args.
func argAfter(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// waitReady waits until the node answers GET /ready with 200.
func waitReady(t *testing.T, s *server) {
	t.Helper()
	retrying(t, "the node ready", func() error {
		code, body, err := readyOf(s)
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("GET /ready: %d %s", code, body)
		}
		return err
	})
}
