package server

import (
	"context"
	"fmt"

	"github.com/partita-db/partita/internal/clusterversion"
)

// versionStore is the control plane's side of the cluster's versions (clusterversion.ControlPlane):
// the node's, once its control plane started (the gate steps only then).
type versionStore struct{ n *clusterNode }

func (s versionStore) Active(ctx context.Context) (clusterversion.Version, error) {
	v, err := s.n.cp.ClusterVersion(ctx)
	return clusterversion.Of(v), err
}

// Raise from Base is a raise from no record: Base is never written.
func (s versionStore) Raise(ctx context.Context, from, to clusterversion.Version) (bool, error) {
	f := uint32(from)
	if from == clusterversion.Base {
		f = 0
	}
	return s.n.cp.RaiseClusterVersion(ctx, f, uint32(to))
}

// Nodes lists the nodes that count: the live ones, the directory's, and the holders of the
// groups' replicas; a drained node that holds no replica is leaving and does not count. A
// holder with no record at all counts at Base: a node of a release that wrote no directory
// record, down now, that holds replicas will come back.
func (s versionStore) Nodes(ctx context.Context) ([]clusterversion.Node, error) {
	live, err := s.n.cp.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	members, err := s.n.cp.Members(ctx)
	if err != nil {
		return nil, err
	}
	groups, err := s.n.cp.Groups(ctx)
	if err != nil {
		return nil, err
	}
	holds := map[uint64]bool{}
	for _, g := range groups {
		for _, n := range g.Voters {
			holds[n] = true
		}
		for _, n := range g.Learners {
			holds[n] = true
		}
	}
	byID := map[uint64]clusterversion.Node{}
	for _, n := range append(members, live...) { // a live record is the newer one
		if n.Draining && !holds[n.ID] {
			delete(byID, n.ID)
			continue
		}
		byID[n.ID] = clusterversion.Node{ID: n.ID, Version: clusterversion.Of(n.Version)}
	}
	for id := range holds {
		if _, ok := byID[id]; !ok {
			byID[id] = clusterversion.Node{ID: id, Version: clusterversion.Base}
		}
	}
	out := make([]clusterversion.Node, 0, len(byID))
	for _, n := range byID {
		out = append(out, n)
	}
	return out, nil
}

// admitPeer refuses a peer whose release knows only versions older than the cluster's active
// one (raftrpc.Config.Admit).
func (n *clusterNode) admitPeer(peer uint32) error {
	if active := n.gate.Active(); clusterversion.Of(peer) < active {
		return fmt.Errorf("this cluster's active version is %s, and the node calling runs a release that knows up to %s: "+
			"it cannot join a cluster that went past it; start it with this cluster's release", active, clusterversion.Of(peer))
	}
	return nil
}
