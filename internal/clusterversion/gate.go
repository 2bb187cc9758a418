package clusterversion

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"
)

// ControlPlane is the control plane's side of the versions.
type ControlPlane interface {
	// Active is the cluster's active version, Base while none is recorded.
	Active(ctx context.Context) (Version, error)
	// Raise records to as the active version if from is recorded (or none is, and from is
	// Base), and reports whether it did.
	Raise(ctx context.Context, from, to Version) (bool, error)
	// Nodes lists the nodes that count (see the package doc), each at the version it runs.
	Nodes(ctx context.Context) ([]Node, error)
}

// Node is a node that counts, at the version it runs.
type Node struct {
	ID      uint64
	Version Version
}

// TooOldError is what a node of a release older than the cluster's active version meets.
type TooOldError struct {
	Active Version // the cluster's
}

func (e *TooOldError) Error() string {
	return fmt.Sprintf("this node's release knows cluster versions up to %s, but the cluster's active version is %s: "+
		"every node of the cluster ran a newer release, so one of this release cannot join it; start this node with the cluster's release",
		Latest, e.Active)
}

// Admit is nil when a node of this release may run in a cluster at active, and a
// *TooOldError when it may not.
func Admit(active Version) error {
	if active > Latest {
		return &TooOldError{Active: active}
	}
	return nil
}

// Gate is a node's view of the cluster's active version. Its zero value is not usable; make
// one with NewGate. Until its first Step answers, it holds Base: the node speaks as the oldest
// release it may meet.
type Gate struct {
	cp  ControlPlane
	log *slog.Logger
	// active only grows: a stale read of the control plane (an older revision) never lowers it.
	active atomic.Uint32
	// waiting is the last reason logged for not raising the version, so that it is logged
	// once, not every round.
	waiting string
}

// NewGate returns a gate at Base over cp.
func NewGate(cp ControlPlane, log *slog.Logger) *Gate {
	g := &Gate{cp: cp, log: log}
	g.active.Store(uint32(Base))
	return g
}

// Active is the cluster's active version as last read.
func (g *Gate) Active() Version { return Version(g.active.Load()) }

// Enabled reports whether the cluster may use what version v introduced.
func (g *Gate) Enabled(v Version) bool { return g.Active() >= v }

// note records an active version read from the control plane.
func (g *Gate) note(v Version) {
	for {
		cur := g.active.Load()
		if uint32(v) <= cur || g.active.CompareAndSwap(cur, uint32(v)) {
			return
		}
	}
}

// Step reads the active version and raises it when every node that counts runs a release
// that knows a newer one. Its error is a *TooOldError when the cluster is ahead of this
// release, or the control plane's.
func (g *Gate) Step(ctx context.Context) error {
	active, err := g.cp.Active(ctx)
	if err != nil {
		return err
	}
	g.note(active)
	if err := Admit(active); err != nil {
		return err
	}
	if active >= Latest {
		return nil
	}
	nodes, err := g.cp.Nodes(ctx)
	if err != nil {
		return err
	}
	target := Latest
	var behind []string
	for _, n := range nodes {
		target = min(target, n.Version)
		if n.Version < Latest {
			behind = append(behind, fmt.Sprintf("%x (%s)", n.ID, n.Version))
		}
	}
	if target <= active {
		slices.Sort(behind)
		if why := fmt.Sprint(behind); why != g.waiting {
			g.waiting = why
			g.log.Info("cluster version: waiting for every node to run a release that knows the next version",
				"active", active, "this-release", Latest, "nodes-behind", behind)
		}
		return nil
	}
	ok, err := g.cp.Raise(ctx, active, target)
	if err != nil || !ok {
		return err // another node raised it first: the next round reads it
	}
	g.note(target)
	g.log.Info("cluster version raised: every node runs a release that knows it", "from", active, "to", target)
	return nil
}

// Run steps every interval until ctx ends. A *TooOldError ends it early (the cluster went
// ahead of this node, which the node must report); other errors are retried.
func (g *Gate) Run(ctx context.Context, interval time.Duration, tooOld func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		c, cancel := context.WithTimeout(ctx, interval+3*time.Second)
		err := g.Step(c)
		cancel()
		if _, ok := err.(*TooOldError); ok {
			tooOld(err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
