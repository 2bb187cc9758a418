package placement

import (
	"slices"

	"github.com/partita-db/partita/internal/replication"
)

// PromoteLag is how many entries a learner may lag behind the leader's commit and be
// promoted.
const PromoteLag = 64

// Next is the next change a group's leader should make to the group (its status st, as the
// leader sees it) in view v under pol.
func Next(st replication.Status, v View, pol *Policy) Decision {
	g := newGroup(st, v)
	d := st.Descriptor
	if d.AutoLeave || len(d.VotersOutgoing) > 0 {
		return Decision{} // a joint configuration, which the leader leaves by itself
	}
	for _, l := range d.Learners {
		if !g.wanted(l) {
			return change(replication.Change{Kind: replication.Remove, Replica: l})
		}
		if m, ok := st.Match[l]; ok && m > 0 && m+PromoteLag >= st.Commit {
			promote := replication.Change{Kind: replication.AddVoter, Replica: l}
			// A voter the newcomer replaces (on a wiped store, a drained node, a node gone for
			// good) leaves in the same change, a joint configuration: promoted first and
			// removed later, the group would run with a voter too many, a dead one among
			// them.
			for _, r := range d.Voters {
				rest := append(without(d.Voters, r), l)
				if r != st.Replica && !g.kept(r) && g.quorate(rest) {
					pol.add(g.member[r].Node, -1)
					return change(promote, replication.Change{Kind: replication.Remove, Replica: r})
				}
			}
			return change(promote)
		}
	}
	if len(d.Learners) > 0 {
		return Decision{} // a newcomer catching up: one at a time
	}
	// candidates: live nodes that may take a replica and hold none, in the order of their ids.
	var candidates []replication.NodeID
	for id, n := range v.Live {
		if n.Draining || n.Store == 0 || slices.ContainsFunc(d.Members, func(m replication.Member) bool { return m.Node == id && m.Store == n.Store }) {
			continue
		}
		candidates = append(candidates, id)
	}
	slices.Sort(candidates)
	addOn := func(id replication.NodeID) Decision {
		pol.add(id, 1)
		return change(replication.Change{Kind: replication.AddLearner, Node: id, Store: v.Live[id].Store})
	}
	// lightest is the least loaded candidate (the first of them, at equal load).
	lightest := func() replication.NodeID {
		best := candidates[0]
		for _, id := range candidates[1:] {
			if pol.Load[id] < pol.Load[best] {
				best = id
			}
		}
		return best
	}
	kept := 0
	for _, r := range d.Voters {
		if g.kept(r) {
			kept++
		}
	}
	switch {
	case len(candidates) == 0:
	case pol.Replicas == 0:
		return addOn(candidates[0])
	case kept < pol.Replicas:
		return addOn(lightest())
	}
	for _, r := range d.Voters {
		if !g.kept(r) {
			if dec := g.remove(r, pol); !dec.None() {
				return dec
			}
		}
	}
	if pol.Replicas == 0 {
		return Decision{}
	}
	// heaviest is the wanted voter on the most loaded node.
	heaviest := func() replication.ReplicaID {
		var best replication.ReplicaID
		for _, r := range d.Voters {
			if g.wanted(r) && (best == 0 || pol.Load[g.member[r].Node] > pol.Load[g.member[best].Node]) {
				best = r
			}
		}
		return best
	}
	if len(d.Voters) > pol.Replicas {
		// One too many: a move's new replica has caught up. The one on the busiest node goes.
		if r := heaviest(); r != 0 {
			return g.remove(r, pol)
		}
		return Decision{}
	}
	if pol.Moves > 0 && len(candidates) > 0 && kept == len(d.Voters) {
		// Even out the load: a replica moves from the busiest of the group's nodes to the
		// least busy node that has none, when they differ by more than its weight and a
		// tenth (by count alone: when they differ by two or more).
		if r, to := heaviest(), lightest(); r != 0 && pol.Load[to]+pol.Weight*1.1 < pol.Load[g.member[r].Node] {
			pol.Moves--
			return addOn(to)
		}
	}
	return Decision{}
}

// add counts n replicas of the group at hand more (or fewer) on node id in the load.
func (pol *Policy) add(id replication.NodeID, n float64) {
	if pol.Load != nil {
		pol.Load[id] += n * pol.Weight
	}
}

// group is a group's status with what Next asks of its replicas in a view.
type group struct {
	st     replication.Status
	v      View
	member map[replication.ReplicaID]replication.Member
}

func newGroup(st replication.Status, v View) group {
	g := group{st: st, v: v, member: map[replication.ReplicaID]replication.Member{}}
	for _, m := range st.Descriptor.Members {
		g.member[m.Replica] = m
	}
	return g
}

// up: the replica's node is live, with the store the replica is on.
func (g group) up(r replication.ReplicaID) bool {
	m := g.member[r]
	n, ok := g.v.Live[m.Node]
	return ok && n.Store == m.Store
}

// wanted: up, on a node that is not being drained.
func (g group) wanted(r replication.ReplicaID) bool {
	return g.up(r) && !g.v.Live[g.member[r].Node].Draining
}

// kept: a voter that counts as one of the group's replicas: wanted, or on a node missing for
// now (it may come back with its replica), or whose replica the leader has heard from lately:
// a node that answers its group is not dead, whatever the control plane says of it (it may
// have lost its registration while the control plane had no leader).
func (g group) kept(r replication.ReplicaID) bool {
	n := g.member[r].Node
	_, live := g.v.Live[n]
	return g.wanted(r) || !live && (!g.v.Gone[n] || g.st.Active[r])
}

// quorate: voters make progress when a majority of them is up and answers the leader (Raft's
// own view, so that no removal rests on the control plane's alone).
func (g group) quorate(voters []replication.ReplicaID) bool {
	n := 0
	for _, r := range voters {
		if g.up(r) && (r == g.st.Replica || g.st.Active[r]) {
			n++
		}
	}
	return n > len(voters)/2
}

// remove is the change that removes voter r, or the replica to hand the leadership to first
// when r is the leader's own; neither when the voters left would not make a quorum.
func (g group) remove(r replication.ReplicaID, pol *Policy) Decision {
	rest := without(g.st.Descriptor.Voters, r)
	if len(rest) == 0 || !g.quorate(rest) {
		return Decision{}
	}
	if r == g.st.Replica {
		for _, o := range rest {
			if g.wanted(o) {
				return Decision{TransferTo: o}
			}
		}
		return Decision{}
	}
	pol.add(g.member[r].Node, -1)
	return change(replication.Change{Kind: replication.Remove, Replica: r})
}

func change(chs ...replication.Change) Decision { return Decision{Changes: chs} }

// without is rs but r, in a new slice.
func without(rs []replication.ReplicaID, r replication.ReplicaID) []replication.ReplicaID {
	return slices.DeleteFunc(slices.Clone(rs), func(o replication.ReplicaID) bool { return o == r })
}
