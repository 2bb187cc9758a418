package controlplane_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/controlplane"
	"github.com/partita-db/partita/internal/controlplane/controlplanetest"
	"github.com/partita-db/partita/internal/nodetls"
)

func identity(t *testing.T, secret string) *nodetls.Identity {
	t.Helper()
	id, err := nodetls.New([]byte(secret), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func addrsOf(ns []controlplane.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Addr)
	}
	slices.Sort(out)
	return out
}

// Three founding nodes form the control plane together; a fourth node joins as a client; a
// node that stops is no longer live once its lease runs out, and the others go on; a process
// with another secret gets no answer.
func TestControlPlane(t *testing.T) {
	join := []string{controlplanetest.FreeAddr(t), controlplanetest.FreeAddr(t), controlplanetest.FreeAddr(t)}
	const secret = "the cluster's shared secret"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cps := make([]*controlplane.ControlPlane, 3)
	errs := make([]error, 3)
	var f founders
	var wg sync.WaitGroup
	for i, a := range join {
		dir := t.TempDir()
		f.up(a, dir)
		wg.Go(func() { // each waits for a majority: they must start together
			cps[i], errs[i] = controlplane.Start(ctx, controlplane.Config{Dir: dir, Addr: a, Join: join, TLS: identity(t, secret), HasData: f.hasData})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		defer cps[i].Close()
	}
	other := controlplanetest.FreeAddr(t)
	cp4, err := controlplane.Start(ctx, controlplane.Config{Dir: t.TempDir(), Addr: other, Join: join, TLS: identity(t, secret)})
	if err != nil {
		t.Fatal(err)
	}
	defer cp4.Close()
	if cp4.Member() {
		t.Fatal("a node off the join list runs an etcd member")
	}
	for i, cp := range append(cps, cp4) {
		addr := other
		if i < 3 {
			addr = join[i]
		}
		if err := cp.Register(ctx, controlplane.Node{Addr: addr, API: "api-" + addr}); err != nil {
			t.Fatal(err)
		}
	}
	all := append(slices.Clone(join), other)
	slices.Sort(all)
	nodes, err := cps[0].Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := addrsOf(nodes); !slices.Equal(got, all) {
		t.Fatalf("live nodes %v, want %v", got, all)
	}

	// A drain marks the node on every node's list, until it is cancelled.
	draining := func() []string {
		nodes, err := cps[1].Nodes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range nodes {
			if n.Draining {
				out = append(out, n.Addr)
			}
		}
		return out
	}
	if err := cp4.Drain(ctx, other, true); err != nil {
		t.Fatal(err)
	}
	if got := draining(); !slices.Equal(got, []string{other}) {
		t.Fatalf("draining %v, want [%s]", got, other)
	}
	if err := cps[0].Drain(ctx, other, false); err != nil {
		t.Fatal(err)
	}
	if got := draining(); len(got) != 0 {
		t.Fatalf("draining %v after the drain was cancelled", got)
	}

	// Group records and settings are every node's: the first proposal of a setting wins.
	if err := cps[0].PutGroup(ctx, 0x100000002, controlplane.Group{Voters: []uint64{1, 2, 3}, Leader: 2}); err != nil {
		t.Fatal(err)
	}
	if g, ok, err := cp4.GroupOf(ctx, 0x100000002); err != nil || !ok || g.Leader != 2 || !slices.Equal(g.Voters, []uint64{1, 2, 3}) {
		t.Fatalf("group record read back as %+v, %v, %v", g, ok, err)
	}
	if all, err := cps[1].Groups(ctx); err != nil || len(all) != 1 || all[0x100000002].Leader != 2 {
		t.Fatalf("groups %v, %v", all, err)
	}
	if _, ok, err := cp4.GroupOf(ctx, 7); ok || err != nil {
		t.Fatalf("a group never recorded: %v, %v", ok, err)
	}
	if v, err := cps[0].Setting(ctx, "replicas", "3"); err != nil || v != "3" {
		t.Fatalf("first proposal: %q, %v", v, err)
	}
	if v, err := cp4.Setting(ctx, "replicas", "5"); err != nil || v != "3" {
		t.Fatalf("second proposal: %q, %v; the first stands", v, err)
	}

	// A founding node stops: the two others are a majority, and its record goes.
	cps[2].Close()
	want := slices.DeleteFunc(slices.Clone(all), func(a string) bool { return a == join[2] })
	deadline := time.Now().Add(4 * controlplane.LeaseTTL)
	for {
		nodes, err := cp4.Nodes(ctx)
		if err == nil && slices.Equal(addrsOf(nodes), want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a node stopped: %v, %v; want %v", addrsOf(nodes), err, want)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Another secret: no answer from the cluster.
	short, cancelShort := context.WithTimeout(ctx, 5*time.Second)
	defer cancelShort()
	if cp, err := controlplane.Start(short, controlplane.Config{Dir: t.TempDir(), Addr: controlplanetest.FreeAddr(t), Join: join, TLS: identity(t, "another cluster's secret")}); err == nil {
		cp.Close()
		t.Fatal("a process with another secret reached the control plane")
	}
}

// A founding node whose peers never come gives up when its context ends, and stops: an etcd
// member that never became ready must not hold the process's shutdown.
func TestStartWithoutQuorumStops(t *testing.T) {
	join := []string{controlplanetest.FreeAddr(t), controlplanetest.FreeAddr(t), controlplanetest.FreeAddr(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var f founders
	f.up(join[1], t.TempDir()) // a founding node that answers, but never starts its member
	cfg := controlplane.Config{Dir: t.TempDir(), Addr: join[0], Join: join, TLS: identity(t, "the cluster's shared secret"), HasData: f.hasData}
	done := make(chan error, 1)
	go func() {
		_, err := controlplane.Start(ctx, cfg)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a lone founding node formed a cluster of three")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a member without a quorum did not stop")
	}
}

// A node whose lease lapses (here revoked, as etcd does when the lease is not renewed in
// time: a control plane without a leader, the node paused or cut off) registers again by
// itself, under a new lease, and says so; the directory of members keeps it all along.
// Before, the first registration was the only one: such a node stayed unregistered, and
// unaddressed by its peers, for the rest of its life.
func TestRegistrationOutlivesItsLease(t *testing.T) {
	cp := controlplanetest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := controlplane.Node{Addr: "127.0.0.1:7001", API: "127.0.0.1:8081", ID: 7, Store: 9}
	if err := cp.Register(ctx, n); err != nil {
		t.Fatal(err)
	}
	if err := cp.Register(ctx, n); err != controlplane.ErrRegistered {
		t.Fatalf("a second Register: %v", err)
	}
	for round := range 3 {
		leases, err := cp.Client().Leases(ctx)
		if err != nil || len(leases.Leases) != 1 {
			t.Fatalf("round %d: leases %v, %v; want the node's one", round, leases, err)
		}
		if _, err := cp.Client().Revoke(ctx, leases.Leases[0].ID); err != nil {
			t.Fatal(err)
		}
		if nodes, err := cp.Nodes(ctx); err != nil || len(nodes) != 0 {
			t.Fatalf("round %d: live nodes after the lease lapsed: %v, %v", round, nodes, err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			nodes, err := cp.Nodes(ctx)
			if err == nil && len(nodes) == 1 && nodes[0] == n && cp.Registered().Live {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: not registered again 5 s after its lease lapsed: %v, %v, %+v", round, nodes, err, cp.Registered())
			}
			time.Sleep(20 * time.Millisecond)
		}
		members, err := cp.Members(ctx)
		if err != nil || len(members) != 1 || members[0] != n {
			t.Fatalf("round %d: members %v, %v", round, members, err)
		}
	}
}
