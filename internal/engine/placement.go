package engine

import (
	"cmp"
	"fmt"
	"github.com/partita-db/partita/internal/clusterversion"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/replication"
)

// Placement, on a node of a cluster, and the upkeep of the partitions this node leads. Every
// partition has Cluster.Replicas replicas on as many live nodes that are not being drained,
// or (Replicas 0) a replica on every such node: a new container's groups are bootstrapped on
// those nodes, and afterwards each group's leader keeps its membership so by itself (place),
// one change at a time:
//
//   - a live node without a replica of the group gets one (with Replicas, while the group has
//     fewer, on the least loaded node), added as a learner (it receives a snapshot) and
//     promoted to a voter once it has caught up;
//   - a replica on a node being drained, on a store that is no longer the node's (its disk was
//     wiped: it lost its votes and its log), or on a node missing from the control plane for
//     longer than DeadAfter (counted while the control plane answers) whose replica the leader
//     no longer hears from, is removed, once the others it leaves are a majority that is live
//     and that the leader hears from (Raft's RecentActive), so that no removal leaves a group
//     unable to make progress; the leader hands its leadership away first when the replica
//     to remove is its own;
//   - with Replicas, a group with one voter too many (a move's newcomer caught up) loses the
//     one on the busiest node, and in this node's turn a replica moves from a group's busiest
//     node to the least busy one, to even out the nodes' load: the replicas they hold, each
//     weighed by its partition's bytes and request units (load.go);
//   - a node that leads more than its share of the groups hands one leadership a pass to the
//     node that leads fewest.
//
// New replicas come before removals, so that a group replacing a wiped replica never runs
// with fewer than it had; and a newcomer that has caught up is promoted in the same joint
// change that removes the voter it replaces, so that the group never runs with a voter more
// than it should either, a dead one among them (one more failure would then leave it
// without a quorum for good). With Replicas, a node serves the partitions it holds no replica of
// through the nodes that do (remote.go); without, a node that holds no replica of a container
// yet (it joined after the container was created, or its replicas were removed) waits for
// them (Engine.await) and answers 503 for that container until they have come.
//
// The same pass keeps up what the node leads (upkeep): the catalog's ranges after a split
// whose node stopped before it wrote them, the container's indexing policy in each partition,
// and no split in flight that no node runs any more.

// DefaultDeadAfter is how long a node may be gone before its replicas are removed.
const DefaultDeadAfter = 5 * time.Minute

// placeEvery is the pause between two passes of the placement loop.
const placeEvery = time.Second

// promoteLag is how many entries a learner may lag behind the leader's commit and be promoted.
const promoteLag = 64

// placement gives a new container's ranges their replicas: every live node not being drained
// (nor of a release older than the cluster's version), or with Cluster.Replicas set, this node and the least loaded others (replicaLoad); replica
// ids from 1 in the order of their nodes' ids. This node is always one of them: it campaigns
// at once in the new groups (createContainer). Callers hold e.mu.
func (e *Engine) placement() ([]replication.Member, error) {
	nodes, err := e.cluster.Nodes(e.stopped)
	if err != nil {
		return nil, fault.New(fault.Unavailable, "The cluster's members are not known: %v", err)
	}
	var ms []replication.Member
	self := false
	for _, n := range nodes {
		if n.ID == uint64(e.cluster.Node) {
			if n.Draining {
				return nil, fault.New(fault.Unavailable, "This node is being drained: create the container through another node")
			}
			self = true
		}
		if n.ID != 0 && n.Store != 0 && !n.Draining && clusterversion.Of(n.Version) >= e.cluster.active() {
			ms = append(ms, replication.Member{Node: replication.NodeID(n.ID), Store: replication.StoreID(n.Store)})
		}
	}
	if !self {
		return nil, fault.New(fault.Unavailable, "This node is not registered in the cluster yet; retry")
	}
	if want := e.cluster.Replicas; want > 0 && len(ms) > want {
		load, _, err := e.replicaLoad(e.currentGroups()) // callers hold e.mu
		if err != nil {
			return nil, fault.New(fault.Unavailable, "Where the cluster's replicas are is not known: %v", err)
		}
		self := e.cluster.Node
		slices.SortFunc(ms, func(a, b replication.Member) int {
			if (a.Node == self) != (b.Node == self) {
				if a.Node == self {
					return -1 // this node first
				}
				return 1
			}
			return cmp.Or(cmp.Compare(load[a.Node], load[b.Node]), cmp.Compare(a.Node, b.Node))
		})
		ms = ms[:want]
	}
	slices.SortFunc(ms, func(a, b replication.Member) int { return cmp.Compare(a.Node, b.Node) })
	for i := range ms {
		ms[i].Replica = replication.ReplicaID(i + 1)
	}
	return ms, nil
}

// replicaLoad is the load of each node: what the voters it holds weigh, as the groups'
// records place them and the last figures gathered weigh them (load.go), and reports whether
// every group is settled: as many voters as it should have, and no learner. Records of
// groups that ended (a split's parent, a deleted container's) are left out: current are the
// groups that have not (currentGroups).
func (e *Engine) replicaLoad(current map[replication.GroupID]bool) (load map[replication.NodeID]float64, settled bool, err error) {
	all, err := e.cluster.Groups.All(e.stopped)
	if err != nil {
		return nil, false, err
	}
	f := e.figures.Load()
	load = map[replication.NodeID]float64{}
	settled = true
	for g, r := range all {
		if !current[g] {
			continue
		}
		for _, n := range r.Voters {
			load[n] += f.weight(g)
		}
		settled = settled && len(r.Learners) == 0 && len(r.Voters) == e.cluster.Replicas
	}
	return load, settled, nil
}

// currentGroups are the groups of the containers this node knows: their catalog ranges, and
// children of a split the catalog does not show yet. Callers hold e.mu.
func (e *Engine) currentGroups() map[replication.GroupID]bool {
	current := map[replication.GroupID]bool{}
	for _, d := range e.dbs {
		for _, cs := range []map[string]*Container{d.containers, d.awaited} {
			for _, c := range cs {
				for _, r := range c.rec.Ranges {
					current[groupOf(c.num, r.ID)] = true
				}
				for _, p := range c.routes.Load().parts {
					current[groupOf(c.num, p.ID())] = true
				}
			}
		}
	}
	return current
}

// moveTurn is how long each live node in turn may move replicas to even out the load: one
// node at a time, on a cluster whose groups are all settled, so that the leaders of many
// groups do not move theirs to the same node at once (the records they decide by lag their
// groups by a pass).
const moveTurn = 3 * time.Second

// myTurn reports whether it is this node's turn to move replicas at now.
func (e *Engine) myTurn(live map[replication.NodeID]ClusterNode, now time.Time) bool {
	ids := slices.Sorted(maps.Keys(live))
	if len(ids) == 0 {
		return false
	}
	return ids[int(now.UnixNano()/int64(moveTurn))%len(ids)] == e.cluster.Node
}

// placer is what the placement loop keeps between passes.
type placer struct {
	// missing are the nodes that hold replicas but were not live at some pass, since when.
	missing map[replication.NodeID]time.Time
	// recorded are the groups' records this node wrote last, by group; unrecorded is set in a
	// pass once a record could not be written, and the pass writes no more (the control plane
	// is not answering: each would wait for its timeout).
	recorded   map[replication.GroupID]GroupRecord
	unrecorded bool
	// seen are the nodes this node has seen live, and whether they were live (and draining)
	// at the last pass that could tell: their comings and goings are logged (noteNodes).
	seen    map[replication.NodeID]ClusterNode
	wasLive map[replication.NodeID]bool
	// leading are the groups this node's replicas led at the last pass, by name: leaderships
	// gained and lost are logged (noteLeaderships).
	leading map[replication.GroupID]string
}

// noteLeaderships logs, once each, the partitions whose leadership this node's replicas
// gained or lost since the last pass, naming the node that leads a lost one now when it is
// known.
func (e *Engine) noteLeaderships(pl *placer, led []replication.GroupID, names map[replication.GroupID]string) {
	now := make(map[replication.GroupID]string, len(led))
	for _, g := range led {
		now[g] = names[g]
		if _, ok := pl.leading[g]; !ok {
			e.log.Info("cluster: this node leads a partition now", "partition", names[g])
		}
	}
	for g, name := range pl.leading {
		if _, ok := now[g]; ok {
			continue
		}
		if n := e.replicas.leaderNode(g); n != 0 && n != e.cluster.Node {
			e.log.Info("cluster: this node no longer leads a partition", "partition", name, "leader", fmt.Sprintf("%x", uint64(n)))
		} else {
			e.log.Info("cluster: this node no longer leads a partition", "partition", name)
		}
	}
	pl.leading = now
}

// noteNodes logs, once each, the nodes that became live (for the first time since this node
// started, or again) or stopped being live, and the drains that began or ended, as the
// control plane lists them in a pass.
func (e *Engine) noteNodes(pl *placer, live map[replication.NodeID]ClusterNode) {
	for id, n := range live {
		before, known := pl.seen[id]
		switch {
		case !known:
			e.log.Info("cluster: a node is live", "node", fmt.Sprintf("%x", uint64(id)), "addr", n.Addr)
		case !pl.wasLive[id]:
			e.log.Info("cluster: a node is live again", "node", fmt.Sprintf("%x", uint64(id)), "addr", n.Addr)
		case n.Draining && !before.Draining:
			e.log.Info("cluster: a node is being drained", "node", fmt.Sprintf("%x", uint64(id)), "addr", n.Addr)
		case !n.Draining && before.Draining:
			e.log.Info("cluster: a node's drain ended", "node", fmt.Sprintf("%x", uint64(id)), "addr", n.Addr)
		}
		pl.seen[id], pl.wasLive[id] = n, true
	}
	for id, n := range pl.seen {
		if _, ok := live[id]; !ok && pl.wasLive[id] {
			e.log.Warn("cluster: a node is no longer live (stopped, paused, cut off, or not registered)", "node", fmt.Sprintf("%x", uint64(id)), "addr", n.Addr)
			pl.wasLive[id] = false
		}
	}
}

// placeLoop runs the placement passes until the engine closes.
func (e *Engine) placeLoop() {
	pl := &placer{missing: map[replication.NodeID]time.Time{}, recorded: map[replication.GroupID]GroupRecord{},
		seen: map[replication.NodeID]ClusterNode{}, wasLive: map[replication.NodeID]bool{}}
	e.every(placeEvery, func(now time.Time) { e.place(pl, now) })
}

// place is one pass: each group this node leads gets at most one change of membership or of
// leadership.
func (e *Engine) place(pl *placer, now time.Time) {
	nodes, err := e.cluster.Nodes(e.stopped)
	if err != nil {
		// The control plane does not answer: what it says of the nodes is unknown, and a node
		// missing before is not counted as missing while it cannot register again (its time
		// towards DeadAfter starts over once the control plane answers).
		clear(pl.missing)
		return
	}
	live := map[replication.NodeID]ClusterNode{}
	active := e.cluster.active()
	for _, n := range nodes {
		if clusterversion.Of(n.Version) < active {
			continue // a release older than the cluster's: its peers refuse it (clusterversion)
		}
		live[replication.NodeID(n.ID)] = n
		delete(pl.missing, replication.NodeID(n.ID))
	}
	e.noteNodes(pl, live)
	h := e.replicas.hostOf()
	var cs []*Container
	var led []replication.GroupID
	leads := map[replication.NodeID]int{} // leaderships per node, of the groups this node holds
	names := map[replication.GroupID]string{}
	e.mu.RLock()
	for _, d := range e.dbs {
		for _, c := range d.containers {
			cs = append(cs, c)
			for _, p := range c.routes.Load().parts {
				g := groupOf(c.num, p.ID())
				names[g] = fmt.Sprintf("%s/%s #%d", d.rec.ID, c.id, p.ID())
				if p.Leading() {
					led = append(led, g)
				}
				if n := e.replicas.leaderNode(g); n != 0 {
					leads[n]++
				}
			}
		}
	}
	e.mu.RUnlock()
	e.noteLeaderships(pl, led, names)
	for _, c := range cs {
		e.upkeep(c)
	}
	pl.unrecorded = false
	for g := range pl.recorded {
		if !slices.Contains(led, g) {
			delete(pl.recorded, g) // led elsewhere since: recorded there, and again here if it comes back
		}
	}
	deadAfter := e.cluster.DeadAfter
	if deadAfter <= 0 {
		deadAfter = DefaultDeadAfter
	}
	pol := placePolicy{replicas: e.cluster.Replicas}
	if pol.replicas > 0 {
		e.gatherFigures(live, now)
		var settled bool
		e.mu.RLock()
		current := e.currentGroups()
		e.mu.RUnlock()
		if pol.load, settled, err = e.replicaLoad(current); err != nil {
			return
		}
		if settled && e.myTurn(live, now) {
			pol.moves = 1
		}
	}
	var stable []ledGroup // groups led here whose membership is what it should be
	for _, g := range led {
		select {
		case <-e.stop:
			return
		default:
		}
		st, ok := h.Status(g)
		if !ok || !st.Leading {
			continue
		}
		for _, m := range st.Descriptor.Members {
			if _, ok := live[m.Node]; !ok && pl.missing[m.Node].IsZero() {
				pl.missing[m.Node] = now
			}
		}
		gone := func(n replication.NodeID) bool {
			since, ok := pl.missing[n]
			return ok && now.Sub(since) >= deadAfter
		}
		e.recordGroup(pl, g, st)
		pol.weight = e.figures.Load().weight(g)
		chs, to := nextChange(st, live, gone, &pol)
		switch {
		case to != 0:
			if err := h.TransferLeader(g, to); err != nil {
				e.log.Debug("placement: handing a leadership away", "group", g, "err", err)
			}
		case len(chs) > 0:
			if _, err := h.ChangeMembers(g, chs); err != nil {
				e.log.Warn("placement: changing a partition's replicas", "partition", names[g], "change", describeChanges(chs, st.Descriptor.Members), "err", err)
			} else {
				e.log.Info("placement: a partition's replicas changed", "partition", names[g], "change", describeChanges(chs, st.Descriptor.Members))
			}
		default:
			stable = append(stable, ledGroup{g, st})
		}
	}
	if len(stable) == len(led) {
		e.balanceLeaders(stable, live, leads)
	}
}

// recordGroup records where the replicas of g, which this node leads, are, when that changed
// since it last did.
func (e *Engine) recordGroup(pl *placer, g replication.GroupID, st replication.Status) {
	if e.cluster.Groups == nil || pl.unrecorded {
		return
	}
	rec := GroupRecord{Leader: e.cluster.Node}
	for _, m := range st.Descriptor.Members {
		switch {
		case slices.Contains(st.Descriptor.Voters, m.Replica):
			rec.Voters = append(rec.Voters, m.Node)
		case slices.Contains(st.Descriptor.Learners, m.Replica):
			rec.Learners = append(rec.Learners, m.Node)
		}
	}
	slices.Sort(rec.Voters)
	slices.Sort(rec.Learners)
	if last, ok := pl.recorded[g]; ok && last.Leader == rec.Leader && slices.Equal(last.Voters, rec.Voters) && slices.Equal(last.Learners, rec.Learners) {
		return
	}
	if err := e.cluster.Groups.Put(e.stopped, g, rec); err != nil {
		e.log.Debug("placement: recording a group's replicas", "group", g, "err", err)
		pl.unrecorded = true
		return
	}
	pl.recorded[g] = rec
}

// upkeep brings what this node leads of c up to date: the catalog's ranges, when they miss a
// split whose child this node leads (syncRanges); the container's indexing policy in each
// partition (recordPolicy); and no split in flight that no node runs (abortOrphanSplits).
func (e *Engine) upkeep(c *Container) {
	e.mu.RLock()
	behind := false
	recorded := map[uint32]bool{}
	for _, r := range c.rec.Ranges {
		recorded[r.ID] = true
	}
	for _, p := range c.routes.Load().parts {
		behind = behind || !recorded[p.ID()] && p.Leading()
	}
	e.mu.RUnlock()
	if behind {
		if err := e.syncRanges(c); err != nil {
			e.log.Warn("placement: writing a split's ranges to the catalog", "container", c.id, "err", err)
		}
	}
	e.recordPolicy(c)
	e.abortOrphanSplits(c)
}

// abortOrphanSplits aborts the splits in flight in c's partitions that this node leads and
// that no split here is running: their node stopped (or lost the leadership) between the
// split's start and its commit. A split by size is decided again at the next write; the
// request that asked for another is answered with an error, or tries again (splitInCluster).
func (e *Engine) abortOrphanSplits(c *Container) {
	if !c.splitOne.TryLock() {
		return // a split runs here
	}
	defer c.splitOne.Unlock()
	for _, p := range c.routes.Load().parts {
		if _, _, _, ok := p.SplitInFlight(); ok && p.Leading() {
			if err := p.AbortSplit(); err != nil {
				e.log.Debug("placement: aborting an orphan split", "container", c.id, "partition", p.ID(), "err", err)
			}
		}
	}
}

// placePolicy is what a placement pass decides changes by.
type placePolicy struct {
	// replicas is Cluster.Replicas: how many voters a group should have; 0 for one on every
	// live node.
	replicas int
	// load is what the voters each node holds weigh (with replicas only, replicaLoad); a
	// pass keeps it up to date with the changes it makes. weight is the group's at hand.
	load   map[replication.NodeID]float64
	weight float64
	// moves is how many replicas this pass may still move to even out the load: one in this
	// node's turn (moveTurn), none otherwise.
	moves int
}

// nextChange is the next change of a group's membership that its leader should make, given
// the live nodes and which of the missing ones are gone for good: a change, a replica to hand
// the leadership to first, or neither when the group is as it should be.
func nextChange(st replication.Status, live map[replication.NodeID]ClusterNode, gone func(replication.NodeID) bool, pol *placePolicy) ([]replication.Change, replication.ReplicaID) {
	d := st.Descriptor
	if d.AutoLeave || len(d.VotersOutgoing) > 0 {
		return nil, 0 // a joint configuration, which the leader leaves by itself
	}
	memberOf := map[replication.ReplicaID]replication.Member{}
	for _, m := range d.Members {
		memberOf[m.Replica] = m
	}
	// up: the replica's node is live with the store the replica is on.
	up := func(m replication.Member) bool {
		n, ok := live[m.Node]
		return ok && n.Store == uint64(m.Store)
	}
	wanted := func(m replication.Member) bool { return up(m) && !live[m.Node].Draining }
	// kept: a voter that counts as one of the group's replicas: wanted, or on a node missing
	// from the control plane for less than DeadAfter (it may come back with its replica), or
	// whose replica the leader has heard from lately: a node that answers its group is not
	// dead, whatever the control plane says of it (it may have lost its registration while
	// the control plane had no leader, and not have registered again yet).
	kept := func(m replication.Member) bool {
		_, isLive := live[m.Node]
		return wanted(m) || !isLive && (!gone(m.Node) || st.Active[m.Replica])
	}
	// quorate: voters make progress when a majority of them is up and answers the leader
	// (Raft's own view, so that no removal rests on the control plane's alone).
	quorate := func(voters []replication.ReplicaID) bool {
		n := 0
		for _, v := range voters {
			if up(memberOf[v]) && (v == st.Replica || st.Active[v]) {
				n++
			}
		}
		return n > len(voters)/2
	}
	for _, l := range d.Learners {
		if !wanted(memberOf[l]) {
			return []replication.Change{{Kind: replication.Remove, Replica: l}}, 0
		}
		if m, ok := st.Match[l]; ok && m > 0 && m+promoteLag >= st.Commit {
			promote := replication.Change{Kind: replication.AddVoter, Replica: l}
			// A voter the newcomer replaces (on a wiped store, a drained node, a node gone for
			// good) leaves in the same change, a joint configuration: promoted first and removed
			// later, the group would run with one voter too many, a dead one among them, and
			// one more failure before the removal would leave it without a quorum for good.
			for _, v := range d.Voters {
				rest := append(slices.DeleteFunc(slices.Clone(d.Voters), func(r replication.ReplicaID) bool { return r == v }), l)
				if v != st.Replica && !kept(memberOf[v]) && quorate(rest) {
					if pol.load != nil {
						pol.load[memberOf[v].Node] -= pol.weight
					}
					return []replication.Change{promote, {Kind: replication.Remove, Replica: v}}, 0
				}
			}
			return []replication.Change{promote}, 0
		}
	}
	if len(d.Learners) > 0 {
		return nil, 0 // a newcomer catching up: one at a time
	}
	// candidates: live nodes that may take a replica and hold none, in the order of their ids.
	var candidates []replication.NodeID
	for id, n := range live {
		if n.Draining || n.Store == 0 || slices.ContainsFunc(d.Members, func(m replication.Member) bool { return m.Node == id && uint64(m.Store) == n.Store }) {
			continue
		}
		candidates = append(candidates, id)
	}
	slices.SortFunc(candidates, cmp.Compare[replication.NodeID])
	addOn := func(id replication.NodeID) []replication.Change {
		if pol.load != nil {
			pol.load[id] += pol.weight
		}
		return []replication.Change{{Kind: replication.AddLearner, Node: id, Store: replication.StoreID(live[id].Store)}}
	}
	// lightest is the least loaded candidate.
	lightest := func() replication.NodeID {
		best := candidates[0]
		for _, id := range candidates[1:] {
			if pol.load[id] < pol.load[best] {
				best = id
			}
		}
		return best
	}
	nKept := 0
	for _, v := range d.Voters {
		if kept(memberOf[v]) {
			nKept++
		}
	}
	switch {
	case len(candidates) == 0:
	case pol.replicas == 0:
		return addOn(candidates[0]), 0
	case nKept < pol.replicas:
		return addOn(lightest()), 0
	}
	for _, v := range d.Voters {
		if kept(memberOf[v]) {
			continue
		}
		if ch, to := removeVoter(st, v, quorate, wanted, memberOf); ch != nil || to != 0 {
			if ch != nil && pol.load != nil {
				pol.load[memberOf[v].Node] -= pol.weight
			}
			return one(ch), to
		}
	}
	if pol.replicas == 0 {
		return nil, 0
	}
	// heaviest is the wanted voter on the most loaded node.
	heaviest := func() replication.ReplicaID {
		var best replication.ReplicaID
		for _, v := range d.Voters {
			if m := memberOf[v]; wanted(m) && (best == 0 || pol.load[m.Node] > pol.load[memberOf[best].Node]) {
				best = v
			}
		}
		return best
	}
	if len(d.Voters) > pol.replicas {
		// One too many: a move's new replica has caught up. The one on the busiest node goes.
		if v := heaviest(); v != 0 {
			ch, to := removeVoter(st, v, quorate, wanted, memberOf)
			if ch != nil {
				pol.load[memberOf[v].Node] -= pol.weight
			}
			return one(ch), to
		}
		return nil, 0
	}
	if pol.moves > 0 && len(candidates) > 0 && nKept == len(d.Voters) {
		// Even out the load: a replica moves from the busiest of the group's nodes to the
		// least busy node that has none, when that brings them closer: when they differ by
		// more than its weight (by a tenth more, so that figures that wobble do not move a
		// replica back and forth; by count alone, when they differ by two or more).
		if v, to := heaviest(), lightest(); v != 0 && pol.load[to]+pol.weight*1.1 < pol.load[memberOf[v].Node] {
			pol.moves--
			return addOn(to), 0
		}
	}
	return nil, 0
}

// one is a change as a list, or none.
func one(ch *replication.Change) []replication.Change {
	if ch == nil {
		return nil
	}
	return []replication.Change{*ch}
}

// removeVoter is the change that removes voter v of a group (its status st), or the replica
// to hand the leadership to first when v is the leader's own; neither when the voters left
// would not make a quorum.
func removeVoter(st replication.Status, v replication.ReplicaID, quorate func([]replication.ReplicaID) bool,
	wanted func(replication.Member) bool, memberOf map[replication.ReplicaID]replication.Member) (*replication.Change, replication.ReplicaID) {
	rest := slices.DeleteFunc(slices.Clone(st.Descriptor.Voters), func(r replication.ReplicaID) bool { return r == v })
	if len(rest) == 0 || !quorate(rest) {
		return nil, 0
	}
	if v == st.Replica {
		for _, r := range rest {
			if wanted(memberOf[r]) {
				return nil, r
			}
		}
		return nil, 0
	}
	return &replication.Change{Kind: replication.Remove, Replica: v}, 0
}

// ledGroup is a group this node leads, and its status.
type ledGroup struct {
	g  replication.GroupID
	st replication.Status
}

// balanceLeaders hands one of this node's leaderships to the node that leads fewest groups,
// when this node leads more than its share (groups whose membership is settled only).
func (e *Engine) balanceLeaders(stable []ledGroup, live map[replication.NodeID]ClusterNode, leads map[replication.NodeID]int) {
	total, eligible := 0, 0
	for _, n := range leads {
		total += n
	}
	for _, n := range live {
		if !n.Draining {
			eligible++
		}
	}
	if eligible == 0 || len(stable) == 0 {
		return
	}
	self := e.cluster.Node
	share := (total + eligible - 1) / eligible
	if leads[self] <= share {
		return
	}
	for _, lg := range stable {
		st := lg.st
		var best replication.ReplicaID
		bestLeads := leads[self] - 1 // only to a node that would still lead fewer than this one
		for _, m := range st.Descriptor.Members {
			n, ok := live[m.Node]
			if m.Replica == st.Replica || !ok || n.Draining || !slices.Contains(st.Descriptor.Voters, m.Replica) {
				continue
			}
			if l := leads[m.Node]; l < bestLeads {
				best, bestLeads = m.Replica, l
			}
		}
		if best != 0 {
			if h := e.replicas.hostOf(); h != nil && h.TransferLeader(lg.g, best) == nil {
				return
			}
		}
	}
}

func describeChanges(cs []replication.Change, members []replication.Member) string {
	var out []string
	for _, c := range cs {
		out = append(out, describeChange(c, members))
	}
	return strings.Join(out, ", and ")
}

// describeChange says what c does, naming the node of each replica that members place.
func describeChange(c replication.Change, members []replication.Member) string {
	on := ""
	if i := slices.IndexFunc(members, func(m replication.Member) bool { return m.Replica == c.Replica }); i >= 0 {
		on = fmt.Sprintf(" on node %x", uint64(members[i].Node))
	}
	switch c.Kind {
	case replication.AddLearner:
		return fmt.Sprintf("add a learner on node %x", uint64(c.Node))
	case replication.AddVoter:
		return fmt.Sprintf("promote replica %d%s", c.Replica, on)
	default:
		return fmt.Sprintf("remove replica %d%s", c.Replica, on)
	}
}

// Drain marks a node (named by its cluster address or its id in hex) as being drained, or no
// longer (on false): its replicas and leaderships move to the other nodes, after which it can
// be stopped with nothing lost. A drain that would leave fewer than three nodes (or fewer than
// the cluster has, if it has fewer) holding replicas is refused.
func (e *Engine) Drain(node string, on bool) (ClusterNode, error) {
	if e.cluster == nil {
		return ClusterNode{}, fault.New(fault.BadRequest, "This node is not a member of a cluster")
	}
	nodes, err := e.cluster.Nodes(e.stopped)
	if err != nil {
		return ClusterNode{}, fault.New(fault.Unavailable, "The cluster's members are not known: %v", err)
	}
	i := slices.IndexFunc(nodes, func(n ClusterNode) bool {
		return n.Addr == node || strconv.FormatUint(n.ID, 16) == strings.ToLower(node)
	})
	if i < 0 {
		return ClusterNode{}, fault.New(fault.NotFound, "No live node has the cluster address or id %q", node)
	}
	target := nodes[i]
	if on && !target.Draining {
		holding := 0
		for _, n := range nodes {
			if !n.Draining {
				holding++
			}
		}
		keep := max(min(3, holding), e.cluster.Replicas)
		if holding-1 < keep {
			return target, fault.New(fault.BadRequest, "Draining node %s would leave %d node(s) holding replicas; a cluster keeps at least %d: add a node first", target.Addr, holding-1, keep)
		}
	}
	if err := e.cluster.Drain(target.Addr, on); err != nil {
		return target, fault.New(fault.Unavailable, "The cluster's control plane did not answer: %v", err)
	}
	target.Draining = on
	return target, nil
}
