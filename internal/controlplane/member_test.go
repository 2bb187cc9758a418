package controlplane_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/controlplane"
	"github.com/partita-db/partita/internal/controlplane/controlplanetest"
	"github.com/partita-db/partita/internal/nodetls"
)

// founders stands in for the founding nodes' processes as Config.HasData asks them: a node
// answers while it is up, from its data directory, and not at all while it is down.
type founders struct {
	mu   sync.Mutex
	dirs map[string]string // by cluster address, the nodes that are up
}

func (f *founders) up(addr, dir string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dirs == nil {
		f.dirs = map[string]string{}
	}
	f.dirs[addr] = dir
}

func (f *founders) down(addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.dirs, addr)
}

func (f *founders) hasData(_ context.Context, addr string) (bool, error) {
	f.mu.Lock()
	dir, ok := f.dirs[addr]
	f.mu.Unlock()
	if !ok {
		return false, errors.New("connection refused")
	}
	return memberData(dir), nil
}

// memberData reports whether an etcd member's data is in the node's directory dir.
func memberData(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "etcd", "member", "wal"))
	return err == nil
}

// cluster3 is a control plane of three founding nodes.
type cluster3 struct {
	t    *testing.T
	ctx  context.Context
	join []string
	f    founders
	dirs [3]string
	cps  [3]*controlplane.ControlPlane
}

func formCluster3(t *testing.T, ctx context.Context) *cluster3 {
	c := &cluster3{t: t, ctx: ctx, join: []string{controlplanetest.FreeAddr(t), controlplanetest.FreeAddr(t), controlplanetest.FreeAddr(t)}}
	t.Cleanup(func() {
		for _, cp := range c.cps {
			if cp != nil {
				cp.Close()
			}
		}
	})
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range c.join {
		c.dirs[i] = t.TempDir()
		c.f.up(c.join[i], c.dirs[i])
		wg.Go(func() { errs[i] = c.start(i) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
	return c
}

func (c *cluster3) start(i int) (err error) {
	c.f.up(c.join[i], c.dirs[i])
	c.cps[i], err = controlplane.Start(c.ctx, controlplane.Config{Dir: c.dirs[i], Addr: c.join[i], Join: c.join,
		TLS: identity(c.t, "the cluster's shared secret"), HasData: c.f.hasData})
	return err
}

func (c *cluster3) stop(i int) {
	c.cps[i].Close()
	c.cps[i] = nil
	c.f.down(c.join[i])
}

// memberID is the etcd member id of founding node i, as node j's member lists it.
func (c *cluster3) memberID(i, j int) uint64 {
	members, err := c.cps[j].Client().MemberList(c.ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	name := strings.ReplaceAll(c.join[i], ":", "_") // the member name of a founding node
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, m := range members.Members {
			if m.Name == name { // named once it started
				return m.ID
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("node %d's member is not among %v", i, members.Members)
		}
		time.Sleep(100 * time.Millisecond)
		if members, err = c.cps[j].Client().MemberList(c.ctx); err != nil {
			c.t.Fatal(err)
		}
	}
}

// keep writes the key readKept reads, and returns node 2's member id before it is wiped.
func (c *cluster3) keep() uint64 {
	if _, err := c.cps[0].Client().Put(c.ctx, "/test/before", "kept"); err != nil {
		c.t.Fatal(err)
	}
	return c.memberID(2, 0)
}

// replaced fails the test unless wiped node 2's member has another id than old.
func (c *cluster3) replaced(old uint64) {
	if id := c.memberID(2, 0); id == old {
		c.t.Fatalf("the wiped node's member kept its id %x: it came back as the member it was, without its log", id)
	}
}

// readKept waits until node i reads the key written before, with what answers now.
func (c *cluster3) readKept(i int) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		short, cancel := context.WithTimeout(c.ctx, 2*time.Second)
		resp, err := c.cps[i].Client().Get(short, "/test/before")
		cancel()
		if err == nil && len(resp.Kvs) == 1 && string(resp.Kvs[0].Value) == "kept" {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("node %d does not read what was written before: %v, %v", i, resp, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A founding node whose data was wiped comes back as a member of the control plane: its old
// etcd member is replaced by a new one at the same address, which receives the cluster's data;
// and it counts towards the quorum again, so that another founding node may then stop. (Before,
// its empty member could not rejoin, and the control plane ran with one member fewer.)
func TestFoundingMemberReplacedAfterWipe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := formCluster3(t, ctx)
	old := c.keep()
	c.stop(2)
	c.dirs[2] = t.TempDir() // the same address, no data
	if err := c.start(2); err != nil {
		t.Fatalf("the wiped node: %v", err)
	}
	c.replaced(old)
	// The replaced member has the data, and with it and node 0 the cluster has a quorum
	// without node 1.
	c.stop(1)
	c.readKept(2)
}

// A founding node wiped while the others are down waits for one of them rather than start its
// member as the join list says: that member would be the one it was, with its log and votes
// forgotten, and the others would take its word for entries it no longer has. (Before, it
// started so as soon as no member answered, and the control plane's Raft log was then broken
// for good: a leader panicked on a follower it could not catch up, nemesis seed 19.) When the
// others are back, its member is replaced.
func TestWipedFoundingMemberWaitsForTheOthers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := formCluster3(t, ctx)
	old := c.keep()
	c.stop(0)
	c.stop(1)
	c.stop(2)
	c.dirs[2] = t.TempDir()
	started := make(chan error, 1)
	go func() { started <- c.start(2) }()
	// While no founding node answers, the wiped node starts no member: a member started now
	// would have its data directory.
	for range 30 {
		if memberData(c.dirs[2]) {
			t.Fatal("the wiped node started its member while no other founding node answered")
		}
		time.Sleep(100 * time.Millisecond)
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { errs[i] = c.start(i) }) // together: each waits for a majority
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
	if err := <-started; err != nil {
		t.Fatalf("the wiped node: %v", err)
	}
	c.replaced(old)
	c.stop(0)
	c.readKept(2)
}

// Founding nodes on several addresses of one host, each with a certificate that names its own:
// their connections to each other all leave from the host's first address, and are known by
// the cluster's authority, not by that address. (Before, etcd refused a connection whose
// certificate did not name the address it came from, so a node that started after the others
// could never read their membership and waited for good: a CI run's cluster of three nodes on
// 127.0.0.1-3.)
func TestFoundingNodesOnSeveralAddresses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hosts := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}
	var join []string
	for _, h := range hosts {
		join = append(join, strings.Replace(controlplanetest.FreeAddr(t), "127.0.0.1", h, 1))
	}
	var f founders
	start := func(i int, ctx context.Context) (*controlplane.ControlPlane, error) {
		id, err := nodetls.New([]byte("the cluster's shared secret"), hosts[i])
		if err != nil {
			return nil, err
		}
		dir := t.TempDir()
		f.up(join[i], dir)
		cp, err := controlplane.Start(ctx, controlplane.Config{Dir: dir, Addr: join[i], Join: join, TLS: id, HasData: f.hasData})
		if err == nil {
			t.Cleanup(cp.Close)
		}
		return cp, err
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { _, errs[i] = start(i, ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
	// The last one asks the others for their membership, from 127.0.0.1 with a certificate
	// for 127.0.0.3, and starts as the cluster's third member.
	late, cancelLate := context.WithTimeout(ctx, 30*time.Second)
	defer cancelLate()
	cp, err := start(2, late)
	if err != nil {
		t.Fatalf("the last founding node: %v", err)
	}
	members, err := cp.Client().MemberList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(members.Members) != 3 {
		t.Fatalf("%d members, want 3", len(members.Members))
	}
}
