package clusterversion

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
)

// fakeStore is a control plane's side of the versions in memory.
type fakeStore struct {
	active   Version // 0: none recorded
	nodes    []Node
	raises   int
	stale    Version // when set, Active answers it once (a read of an older revision)
	nodesErr error
}

func (s *fakeStore) Active(context.Context) (Version, error) {
	if s.stale != 0 {
		v := s.stale
		s.stale = 0
		return v, nil
	}
	if s.active == 0 {
		return Base, nil
	}
	return s.active, nil
}

func (s *fakeStore) Raise(_ context.Context, from, to Version) (bool, error) {
	cur := s.active
	if cur == 0 {
		cur = Base
	}
	if cur != from {
		return false, nil
	}
	s.active = to
	s.raises++
	return true, nil
}

func (s *fakeStore) Nodes(context.Context) ([]Node, error) { return s.nodes, s.nodesErr }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestRaisedOnlyWhenEveryNodeKnowsIt(t *testing.T) {
	s := &fakeStore{nodes: []Node{{1, Latest}, {2, Base}, {3, Latest}}}
	g := NewGate(s, quiet())
	if err := g.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g.Enabled(V2) || s.raises != 0 {
		t.Fatalf("raised with a node at Base: active %s, %d raises", g.Active(), s.raises)
	}
	s.nodes[1].Version = Latest // node 2 upgraded
	if err := g.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !g.Enabled(V2) || s.active != Latest {
		t.Fatalf("not raised once every node runs %s: gate %s, store %s", Latest, g.Active(), s.active)
	}
}

func TestNeverLowered(t *testing.T) {
	s := &fakeStore{active: V2, nodes: []Node{{1, Latest}, {3, V2}}} // node 3 of the release before
	g := NewGate(s, quiet())
	if err := g.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.stale = Base // a read of a revision from before the raise
	if err := g.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g.Active() != V2 {
		t.Fatalf("a stale read lowered the gate to %s", g.Active())
	}
	// A node at Base that comes back does not lower what the cluster recorded either.
	s.nodes = append(s.nodes, Node{2, Base})
	if err := g.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.active != V2 || g.Active() != V2 {
		t.Fatalf("lowered: store %s, gate %s", s.active, g.Active())
	}
}

func TestANodeOlderThanTheClusterIsRefused(t *testing.T) {
	s := &fakeStore{active: Latest + 1}
	err := NewGate(s, quiet()).Step(context.Background())
	var tooOld *TooOldError
	if !errors.As(err, &tooOld) || tooOld.Active != Latest+1 {
		t.Fatalf("Step in a cluster ahead of this release: %v", err)
	}
	if Admit(Latest) != nil || Admit(Base) != nil {
		t.Fatal("Admit refuses a version this release knows")
	}
}

func TestStartsAtBaseAndKeepsItWhenTheStoreFails(t *testing.T) {
	s := &fakeStore{nodes: []Node{{1, Latest}}, nodesErr: errors.New("no leader")}
	g := NewGate(s, quiet())
	if g.Active() != Base {
		t.Fatalf("a new gate is at %s", g.Active())
	}
	if err := g.Step(context.Background()); err == nil || g.Enabled(V2) {
		t.Fatalf("Step without the nodes: err %v, active %s", err, g.Active())
	}
}
