package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/masterkey"
)

// The nemesis: three `partita serve` processes, each in its own network namespace, under a
// randomized, seeded schedule of faults (kills and restarts, wiped data directories, pauses,
// cuts of one node from its peers or from everyone, one-way cuts), with clients through
// random nodes all along (a workload: nemesis_workload_test.go). Once the last fault is
// healed, the cluster must be whole again within recoveryBound: every node registered and
// seeing every node live, every partition led, and every node serving the workload from its
// own replicas too; then the workload's histories are checked.
//
// PARTITA_NEMESIS_SEEDS (a comma-separated list, or a range a-b) and PARTITA_NEMESIS_FAULTS
// (how many faults a schedule has) run longer campaigns; docs/fault-testing.md records them.

// nemesisNode is one node of the nemesis's cluster: its process, restarted on the same
// directory (or an emptied one) as the schedule says.
type nemesisNode struct {
	lab   *netnsLab
	i     int // 1-based, as the lab names namespaces
	dir   string
	log   string // the node's stderr, across its lives
	join  []string
	level string // the account's consistency level

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

func (n *nemesisNode) api() string { return n.lab.addr(n.i) + ":8081" }
func (n *nemesisNode) cql() string { return n.lab.addr(n.i) + ":9042" }

// start runs the node in its namespace; its output goes to its log file.
func (n *nemesisNode) start() error {
	f, err := os.OpenFile(n.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "--- started %s\n", time.Now().Format(time.StampMilli))
	cmd := exec.Command("ip", "netns", "exec", n.lab.ns(n.i), partitaBin, "serve", "--data", n.dir,
		"--addr", n.api(), "--cql-addr", n.cql(), "--tls=false", "--log-level", "info",
		"--cluster-addr", n.lab.addr(n.i)+":7001", "--join", strings.Join(n.join, ","),
		"--consistency", n.level, "--dead-after", "20s")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		f.Close()
		close(exited)
	}()
	n.mu.Lock()
	n.cmd, n.exited = cmd, exited
	n.mu.Unlock()
	return nil
}

func (n *nemesisNode) signal(s syscall.Signal) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		n.cmd.Process.Signal(s)
	}
}

// kill stops the node as kill -9 does and waits for it to be gone.
func (n *nemesisNode) kill() {
	n.signal(syscall.SIGKILL)
	n.mu.Lock()
	exited := n.exited
	n.mu.Unlock()
	if exited != nil {
		<-exited
	}
}

// stop ends the node: SIGCONT (it may be paused), SIGTERM, and SIGKILL after 15 s.
func (n *nemesisNode) stop() {
	n.signal(syscall.SIGCONT)
	n.signal(syscall.SIGTERM)
	n.mu.Lock()
	exited := n.exited
	n.mu.Unlock()
	if exited == nil {
		return
	}
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		n.kill()
	}
}

// tail is the last lines of the node's log.
func (n *nemesisNode) tail(lines int) string {
	b, _ := os.ReadFile(n.log)
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(ls[max(0, len(ls)-lines):], "\n")
}

// A fault of a schedule: what, to which node, when (from the schedule's start) and for how
// long. Others are the nodes a cut separates the node from; a cut from everyone also
// separates it from the clients.
type fault struct {
	At, For time.Duration
	Kind    string // kill, wipe (kill, empty the data directory, restart), pause, cut, cut-all, one-way
	Node    int
	Others  []int
}

func (f fault) String() string {
	s := fmt.Sprintf("%5.1fs %-7s node %d for %.1fs", f.At.Seconds(), f.Kind, f.Node, f.For.Seconds())
	if len(f.Others) > 0 {
		s += fmt.Sprintf(" from %v", f.Others)
	}
	return s
}

// schedule is seed's schedule of count faults over nodes 1..n: each starts at a random time
// after the one before, so that faults overlap (a node killed while another is paused or cut);
// no node has two at once, and no wipe comes within 30 s of another's end.
func schedule(seed uint64, n, count int) []fault {
	r := rand.New(rand.NewPCG(seed, 0x6e656d65))
	kinds := []string{"kill", "kill", "pause", "cut", "cut-all", "one-way", "wipe"}
	var out []fault
	at := time.Duration(0)
	busyUntil := make([]time.Duration, n+1)
	// One wiped node at a time, and time for it to catch up before the next: two nodes of
	// three that lost their data at once are a majority that lost what it acknowledged.
	var wipedUntil time.Duration
	between := func(lo, hi float64) time.Duration {
		return time.Duration((lo + r.Float64()*(hi-lo)) * float64(time.Second))
	}
	for len(out) < count {
		at += between(0.5, 6)
		f := fault{At: at, Kind: kinds[r.IntN(len(kinds))], Node: 1 + r.IntN(n)}
		if busyUntil[f.Node] > at || f.Kind == "wipe" && wipedUntil > at {
			continue
		}
		switch f.Kind {
		case "kill":
			f.For = between(2, 23)
		case "wipe":
			f.For = between(2, 10)
			wipedUntil = at + f.For + 30*time.Second
		case "pause":
			f.For = between(3, 8)
		default:
			f.For = between(4, 8)
			for o := 1; o <= n; o++ {
				if o != f.Node {
					f.Others = append(f.Others, o)
				}
			}
			if f.Kind == "one-way" && r.IntN(2) == 0 {
				f.Others = f.Others[:1] // from one peer only
			}
		}
		busyUntil[f.Node] = at + f.For + time.Second
		out = append(out, f)
	}
	return out
}

// nemesisSeeds are the seeds to run: PARTITA_NEMESIS_SEEDS, or def for CI.
func nemesisSeeds(t *testing.T, def uint64) []uint64 {
	spec := os.Getenv("PARTITA_NEMESIS_SEEDS")
	if spec == "" {
		return []uint64{def}
	}
	var seeds []uint64
	for _, part := range strings.Split(spec, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		if err != nil {
			t.Fatalf("PARTITA_NEMESIS_SEEDS: %v", err)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(strings.TrimSpace(hi), 10, 64); err != nil {
				t.Fatalf("PARTITA_NEMESIS_SEEDS: %v", err)
			}
		}
		for s := a; s <= b; s++ {
			seeds = append(seeds, s)
		}
	}
	return seeds
}

// recoveryBound is how long the cluster may take, once the last fault is healed, to be whole
// again (see runNemesis).
const recoveryBound = 60 * time.Second

// nemesisFaults is how many faults a schedule has: PARTITA_NEMESIS_FAULTS, or 8.
func nemesisFaults() int {
	if n, err := strconv.Atoi(os.Getenv("PARTITA_NEMESIS_FAULTS")); err == nil && n > 0 {
		return n
	}
	return 8
}

// At Strong, with registers through the Go SDK and gocql, checked by porcupine.
func TestNemesis(t *testing.T) {
	for _, seed := range nemesisSeeds(t, 1) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { runNemesis(t, seed, schedule(seed, 3, nemesisFaults()), newRegisters()) })
	}
}

// At Session, with counters through the Go SDK, each client's session token carried from
// node to node: a client reads its own writes and never reads a counter go back.
func TestNemesisSession(t *testing.T) {
	for _, seed := range nemesisSeeds(t, 2) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { runNemesis(t, seed, schedule(seed, 3, nemesisFaults()), newSessions()) })
	}
}

// The schedule the outside run found (a restart after a kill while another node was
// cut off, pauses around it): every node lost its registration, and no partition had a
// leader again.
func TestNemesisRegression(t *testing.T) {
	runNemesis(t, 0, []fault{
		{At: 1 * time.Second, For: 6 * time.Second, Kind: "pause", Node: 1},
		{At: 3 * time.Second, For: 8 * time.Second, Kind: "cut-all", Node: 2, Others: []int{1, 3}},
		{At: 8 * time.Second, For: 12 * time.Second, Kind: "kill", Node: 3},
		{At: 12 * time.Second, For: 7 * time.Second, Kind: "pause", Node: 1},
		{At: 21 * time.Second, For: 5 * time.Second, Kind: "one-way", Node: 2, Others: []int{3}},
		{At: 24 * time.Second, For: 8 * time.Second, Kind: "pause", Node: 3},
	}, newRegisters())
}

// A workload the nemesis runs while its faults come: its clients' operations, what it takes
// for every node to serve it whole again, and its checks at the end.
type nemesisWorkload interface {
	// level is the account's consistency level the nodes run with.
	level() string
	// setup makes what the workload needs, while every node is up.
	setup(t *testing.T, cx context.Context, nodes []*nemesisNode)
	// op runs one operation of client c, through a node of its choosing.
	op(cx context.Context, c int, r *rand.Rand)
	// whole says what keeps the nodes from serving the workload whole, or nil.
	whole(cx context.Context) error
	// check reads everything back through every node and checks the clients' histories.
	check(t *testing.T, cx context.Context)
}

// runNemesis runs one schedule against a new cluster, with w's clients all along, and checks
// that the cluster is whole again within recoveryBound of the last fault's healing, and w's
// histories.
func runNemesis(t *testing.T, seed uint64, faults []fault, w nemesisWorkload) {
	lab := newNetnsLab(t, 3)
	t.Setenv("PARTITA_CLUSTER_SECRET", clusterSecret)
	var sched strings.Builder
	for _, f := range faults {
		sched.WriteString("\n  " + f.String())
	}
	t.Logf("seed %d, %s, schedule:%s", seed, w.level(), sched.String())
	logs := t.TempDir()
	var nodes []*nemesisNode
	var join []string
	for i := 1; i <= 3; i++ {
		join = append(join, lab.addr(i)+":7001")
	}
	for i := 1; i <= 3; i++ {
		n := &nemesisNode{lab: lab, i: i, dir: t.TempDir(), log: filepath.Join(logs, fmt.Sprintf("node%d.log", i)), join: join, level: w.level()}
		if err := n.start(); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range nodes {
				n.signal(syscall.SIGQUIT) // its goroutines, to its log
			}
			time.Sleep(time.Second)
		}
		var wg sync.WaitGroup
		for _, n := range nodes {
			wg.Go(n.stop)
		}
		wg.Wait()
		if t.Failed() {
			// The logs and data, kept where the test's temporary directories are not.
			keep := filepath.Join(os.TempDir(), fmt.Sprintf("partita-nemesis-seed%d-%d", seed, time.Now().Unix()))
			os.MkdirAll(keep, 0o755)
			for _, n := range nodes {
				b, _ := os.ReadFile(n.log)
				os.WriteFile(filepath.Join(keep, filepath.Base(n.log)), b, 0o644)
				// The data directory too: some failures are read from its files.
				os.CopyFS(filepath.Join(keep, fmt.Sprintf("node%d-data", n.i)), os.DirFS(n.dir))
				t.Logf("node %d's log, its end (all of it in %s):\n%s", n.i, keep, n.tail(40))
			}
		}
	})
	for _, n := range nodes {
		waitDial(t, n.api(), time.Minute)
	}
	cx, cancel := context.WithCancel(context.Background()) // not ctx(t): a run takes minutes
	defer cancel()
	w.setup(t, cx, nodes)

	var stop atomic.Bool
	var wg sync.WaitGroup
	for c := range 6 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(c)))
			for !stop.Load() {
				w.op(cx, c, r)
			}
		})
	}

	// A wiped node's replicas are lost for good: its groups go on with the others until the
	// leaders replace them. A second wipe before that could take a second replica of a group
	// of three, and no replicated store survives losing a majority of a group's copies (it is
	// outside what the cluster promises), so a wipe waits for the cluster to have been healthy
	// since the last one (every replica of every partition live and heard from its leader), and
	// is made a kill if it has not.
	var healthySinceWipe atomic.Bool
	healthySinceWipe.Store(true)
	watch, stopWatch := context.WithCancel(cx)
	defer stopWatch()
	go func() {
		for watch.Err() == nil {
			if !healthySinceWipe.Load() && nemesisHealthy(watch, nodes) == nil {
				healthySinceWipe.Store(true)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}()

	// The faults, each healed after its time; a fault starts at its time, whatever runs.
	cuts := &nemesisCuts{lab: lab, on: map[[2]int]int{}}
	began := time.Now()
	var fw sync.WaitGroup
	for _, f := range faults {
		time.Sleep(time.Until(began.Add(f.At)))
		n := nodes[f.Node-1]
		if f.Kind == "wipe" && !healthySinceWipe.CompareAndSwap(true, false) {
			f.Kind = "kill"
			t.Logf("%5.1fs kill node %d (a wipe, made a kill: the last wipe's replicas are not all replaced yet)", time.Since(began).Seconds(), f.Node)
		} else {
			t.Logf("%5.1fs %s node %d", time.Since(began).Seconds(), f.Kind, f.Node)
		}
		fw.Go(func() {
			switch f.Kind {
			case "kill", "wipe":
				n.kill()
				if f.Kind == "wipe" {
					if err := wipe(n.dir); err != nil {
						t.Errorf("wiping node %d: %v", n.i, err)
					}
				}
				time.Sleep(f.For)
				if err := n.start(); err != nil {
					t.Errorf("restarting node %d: %v", n.i, err)
				}
			case "pause":
				n.signal(syscall.SIGSTOP)
				time.Sleep(f.For)
				n.signal(syscall.SIGCONT)
			default:
				if err := cuts.cut(f, true); err != nil {
					t.Error(err)
				}
				time.Sleep(f.For)
				if err := cuts.cut(f, false); err != nil {
					t.Error(err)
				}
			}
		})
	}
	fw.Wait()
	stop.Store(true)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	healed := time.Now()
	t.Logf("%5.1fs every fault healed", time.Since(began).Seconds())

	// Recovery: every node registered and listing every node live, every partition led, and
	// the workload whole through every node, within recoveryBound.
	for said := time.Now(); ; {
		err := nemesisStatusWhole(cx, nodes)
		if err == nil {
			err = w.whole(cx)
		}
		if err == nil {
			break
		}
		if time.Since(said) > 5*time.Second {
			t.Logf("%5.1fs not whole yet: %v", time.Since(began).Seconds(), err)
			said = time.Now()
		}
		if time.Since(healed) > recoveryBound {
			if d, perr := time.ParseDuration(os.Getenv("PARTITA_NEMESIS_HOLD")); perr == nil {
				t.Logf("holding the cluster for %v (PARTITA_NEMESIS_HOLD)", d)
				time.Sleep(d)
			}
			t.Fatalf("seed %d: the cluster was not whole %v after the last fault was healed: %v", seed, recoveryBound, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	recovered := time.Since(healed)
	t.Logf("seed %d: whole again %v after the last fault was healed", seed, recovered.Round(10*time.Millisecond))
	w.check(t, cx)
	fmt.Fprintf(os.Stderr, "nemesis: %s seed %d faults %d recovered %.2fs\n", w.level(), seed, len(faults), recovered.Seconds())
}

// nemesisStatusWhole says what keeps the cluster from being whole as the nodes describe it,
// or nil: every node is registered, lists the three as live, and knows a leader for every
// partition it holds.
func nemesisStatusWhole(cx context.Context, nodes []*nemesisNode) error {
	for i, n := range nodes {
		st, err := nemesisStatus(cx, n)
		if err != nil {
			return fmt.Errorf("node %d's status: %w", i+1, err)
		}
		if !st.Registered {
			return fmt.Errorf("node %d is not registered", i+1)
		}
		for _, m := range st.Nodes {
			if m.Down {
				return fmt.Errorf("node %d lists node %x as down", i+1, m.ID)
			}
		}
		if len(st.Nodes) != len(nodes) {
			return fmt.Errorf("node %d lists %d nodes", i+1, len(st.Nodes))
		}
		for _, r := range st.Replicas {
			if r.Leader == 0 {
				return fmt.Errorf("node %d: partition %d has no leader", i+1, r.Partition)
			}
		}
	}
	return nil
}

// nemesisHealthy is nil when the cluster is whole (nemesisStatusWhole) and every replica of
// every partition is live and heard from by its leader: a wiped node's lost replicas have
// been replaced.
func nemesisHealthy(cx context.Context, nodes []*nemesisNode) error {
	if err := nemesisStatusWhole(cx, nodes); err != nil {
		return err
	}
	for i, n := range nodes {
		st, err := nemesisStatus(cx, n)
		if err != nil {
			return err
		}
		for _, r := range st.Replicas {
			if !r.Leading {
				continue
			}
			for _, m := range r.Members {
				if m.Down || !m.Active || len(r.Learners) > 0 {
					return fmt.Errorf("node %d: partition %d's replica on node %x is not live", i+1, r.Partition, m.Node)
				}
			}
		}
	}
	return nil
}

// nemesisStatus is GET /_partita/cluster of node n.
func nemesisStatus(cx context.Context, n *nemesisNode) (explorerClusterStatus, error) {
	var st explorerClusterStatus
	ctx, cancel := context.WithTimeout(cx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+n.api()+"/_partita/cluster", nil)
	signManagement(req, "cluster")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	if resp.StatusCode != 200 {
		return st, fmt.Errorf("%d %s", resp.StatusCode, body.String())
	}
	return st, json.Unmarshal(body.Bytes(), &st)
}

// nemesisCuts are the blackhole routes of the cuts in force, counted, since faults that
// overlap may cut the same route: it goes once no cut needs it.
type nemesisCuts struct {
	lab *netnsLab
	mu  sync.Mutex
	on  map[[2]int]int // (namespace's node, destination's node; 254: the bridge) -> cuts
}

// cut makes a fault's cut, or heals it (on false): "cut" separates the node from the others
// both ways, "cut-all" from the others and from this process (the bridge's address),
// "one-way" drops only what the node sends to the others.
func (c *nemesisCuts) cut(f fault, on bool) error {
	var routes [][2]int
	for _, o := range f.Others {
		routes = append(routes, [2]int{f.Node, o})
		if f.Kind != "one-way" {
			routes = append(routes, [2]int{o, f.Node})
		}
	}
	if f.Kind == "cut-all" {
		routes = append(routes, [2]int{f.Node, 254})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range routes {
		verb := ""
		switch {
		case on:
			if c.on[r]++; c.on[r] == 1 {
				verb = "add"
			}
		default:
			if c.on[r]--; c.on[r] == 0 {
				verb = "del"
			}
		}
		if verb == "" {
			continue
		}
		if out, err := exec.Command("ip", "-n", c.lab.ns(r[0]), "route", verb, "blackhole", c.lab.addr(r[1])+"/32").CombinedOutput(); err != nil {
			return fmt.Errorf("ip route %s: %v: %s", verb, err, out)
		}
	}
	return nil
}

// signManagement signs a request to the management API as its resource type says.
func signManagement(req *http.Request, resourceType string) {
	key, _ := masterkey.Parse(emulatorKey)
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("Authorization", key.Authorization(req.Method, resourceType, "", date))
}

// wipe empties a node's data directory, as a lost disk would.
func wipe(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
