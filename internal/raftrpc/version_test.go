package raftrpc

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A node refuses the calls and streams of a node whose release is older than the cluster's
// active version, with a message that says why, and takes them again from a node of a release
// that knows it; a node of a release before versions sends none, and counts as the base.
func TestNodesOfAnOlderReleaseAreRefused(t *testing.T) {
	var active atomic.Uint32
	active.Store(1)
	versions := []uint32{2, 0, 1, 2} // node 2: a release before versions
	nodes := startNodesWith(t, func(i int, c *Config) {
		c.Version = versions[i]
		c.Admit = func(peer uint32) error {
			if max(peer, 1) < active.Load() {
				return fmt.Errorf("the cluster's active version is v%d; this peer's release knows up to v%d", active.Load(), max(peer, 1))
			}
			return nil
		}
	}, "one cluster's secret", "one cluster's secret", "one cluster's secret", "one cluster's secret")
	a, old, v1, v2 := nodes[0], nodes[1], nodes[2], nodes[3]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, n := range []*node{old, v1} {
		if _, err := n.t.Call(ctx, a.id, []byte("hello")); err != nil {
			t.Fatalf("node %d at the base version: %v", n.id, err)
		}
	}
	active.Store(2)
	for _, n := range []*node{old, v1} {
		_, err := n.t.Call(ctx, a.id, []byte("hello"))
		if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "active version is v2") {
			t.Fatalf("node %d of an older release, at v2: %v", n.id, err)
		}
	}
	// Its envelopes are refused too: of one sent by it and one sent after by a node of this
	// release, only the second arrives.
	old.t.Send(to(old, a, 7))
	if ans, err := a.t.Call(ctx, v1.id, []byte("hello")); err != nil || !strings.HasPrefix(string(ans), "node 3 answers") {
		t.Fatalf("node 1 (v2) calling node 3: a release that knows the active version is admitted: %q, %v", ans, err)
	}
	time.Sleep(100 * time.Millisecond) // the refused stream's envelope, had it been taken, would be first
	v2.t.Send(to(v2, a, 8))
	got := a.in.wait(t, 1)
	time.Sleep(100 * time.Millisecond)
	a.in.mu.Lock()
	got = append(got[:0:0], a.in.envs...)
	a.in.mu.Unlock()
	if len(got) != 1 || got[0].Group != 8 {
		t.Fatalf("envelopes that arrived: %d, the first of group %d; want only node 4's, of group 8", len(got), got[0].Group)
	}
}
