package engine

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/distribution"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/placement"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
)

// The placement loop, on a node of a cluster: once a second (place), the node gathers a view
// of the cluster (package placement), asks placement what each group it leads should do next,
// and carries it out through the replication host; it records where each group's replicas
// are, for the load view and the status, and logs the nodes' comings and goings and its
// leaderships. Package placement holds the rules and explains them. With Cluster.Replicas, a
// node serves the partitions it holds no replica of through the nodes that do (remote.go);
// without, a node that holds no replica of a container yet (it joined after the container was
// created, or its replicas were removed) waits for them (Engine.await) and answers 503 for
// that container until they have come.
//
// The same pass keeps up what the node leads (upkeep): the catalog's ranges after a split
// whose node stopped before it wrote them, the container's indexing policy in each partition,
// and no split in flight that no node runs any more.

// DefaultDeadAfter is how long a node may be gone before its replicas are removed.
const DefaultDeadAfter = 5 * time.Minute

// placeEvery is the pause between two passes of the placement loop.
const placeEvery = time.Second

// placement gives a new container's ranges their replicas (placement.Initial): this node is
// always one of them, and campaigns at once in the new groups (createContainer). Callers hold
// e.mu.
func (e *Engine) placement() ([]replication.Member, error) {
	nodes, err := e.cluster.Nodes(e.stopped)
	if err != nil {
		return nil, fault.New(fault.Unavailable, "The cluster's members are not known: %v", err)
	}
	_, v := e.viewOf(nodes, nil, time.Time{})
	var load map[replication.NodeID]float64
	if e.cluster.Replicas > 0 && len(v.Live) > e.cluster.Replicas {
		if load, _, err = e.replicaLoad(e.currentGroups()); err != nil {
			return nil, fault.New(fault.Unavailable, "Where the cluster's replicas are is not known: %v", err)
		}
	}
	ms, err := placement.Initial(v, e.cluster.Node, e.cluster.Replicas, load)
	switch {
	case errors.Is(err, placement.ErrDraining):
		return nil, fault.New(fault.Unavailable, "This node is being drained: create the container through another node")
	case err != nil:
		return nil, fault.New(fault.Unavailable, "This node is not registered in the cluster yet; retry")
	}
	return ms, nil
}

// viewOf is the cluster as placement sees it, from the nodes the control plane lists: the
// live ones of a release the cluster's version admits (its peers refuse older ones:
// clusterversion), by id, and the view; the nodes missing since the times pl.missing holds
// are gone at now once DeadAfter has passed (none without pl).
func (e *Engine) viewOf(nodes []ClusterNode, pl *placer, now time.Time) (map[replication.NodeID]ClusterNode, placement.View) {
	live := map[replication.NodeID]ClusterNode{}
	v := placement.View{Live: map[replication.NodeID]placement.Node{}, Gone: map[replication.NodeID]bool{}}
	active := e.cluster.active()
	for _, n := range nodes {
		if n.ID == 0 || clusterversion.Of(n.Version) < active {
			continue
		}
		live[replication.NodeID(n.ID)] = n
		v.Live[replication.NodeID(n.ID)] = placement.Node{Store: replication.StoreID(n.Store), Draining: n.Draining}
	}
	if pl != nil {
		deadAfter := e.cluster.DeadAfter
		if deadAfter <= 0 {
			deadAfter = DefaultDeadAfter
		}
		for n, since := range pl.missing {
			if _, ok := live[n]; !ok && now.Sub(since) >= deadAfter {
				v.Gone[n] = true
			}
		}
	}
	return live, v
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
					current[replica.Group(c.num, r.ID)] = true
				}
				for _, p := range c.routes.Load().parts {
					current[replica.Group(c.num, p.ID())] = true
				}
			}
		}
	}
	return current
}

// placer is what the placement loop keeps between passes.
type placer struct {
	// missing are the nodes that hold replicas but were not live at some pass, since when.
	missing map[replication.NodeID]time.Time
	// recorded are the groups' records this node wrote last, by group; unrecorded is set in a
	// pass once a record could not be written, and the pass writes no more (the control plane
	// is not answering: each would wait for its timeout).
	recorded   map[replication.GroupID]distribution.GroupRecord
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
		if n := e.replicas.leaderOf(g); n != 0 && n != e.cluster.Node {
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
	pl := &placer{missing: map[replication.NodeID]time.Time{}, recorded: map[replication.GroupID]distribution.GroupRecord{},
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
	live, v := e.viewOf(nodes, pl, now)
	for n := range live {
		delete(pl.missing, n)
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
				g := replica.Group(c.num, p.ID())
				names[g] = fmt.Sprintf("%s/%s #%d", d.rec.ID, c.id, p.ID())
				if p.Leading() {
					led = append(led, g)
				}
				if n := e.replicas.leaderOf(g); n != 0 {
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
	pol := placement.Policy{Replicas: e.cluster.Replicas}
	if pol.Replicas > 0 {
		e.gatherFigures(live, now)
		var settled bool
		e.mu.RLock()
		current := e.currentGroups()
		e.mu.RUnlock()
		if pol.Load, settled, err = e.replicaLoad(current); err != nil {
			return
		}
		if settled && placement.Turn(v, e.cluster.Node, now) {
			pol.Moves = 1
		}
	}
	var settled []placement.Led // groups led here whose membership is what it should be
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
		e.recordGroup(pl, g, st)
		pol.Weight = e.figures.Load().weight(g)
		d := placement.Next(st, v, &pol)
		switch {
		case d.TransferTo != 0:
			if err := h.TransferLeader(g, d.TransferTo); err != nil {
				e.log.Debug("placement: handing a leadership away", "group", g, "err", err)
			}
		case len(d.Changes) > 0:
			if _, err := h.ChangeMembers(g, d.Changes); err != nil {
				e.log.Warn("placement: changing a partition's replicas", "partition", names[g], "change", placement.Describe(d, st.Descriptor.Members), "err", err)
			} else {
				e.log.Info("placement: a partition's replicas changed", "partition", names[g], "change", placement.Describe(d, st.Descriptor.Members))
			}
		default:
			settled = append(settled, placement.Led{Group: g, Status: st})
		}
	}
	if len(settled) == len(led) {
		// One leadership at most a pass, handed to the first node that takes it.
		for _, tr := range placement.LeaderTransfers(v, e.cluster.Node, settled, leads) {
			if h.TransferLeader(tr.Group, tr.To) == nil {
				break
			}
		}
	}
}

// recordGroup records where the replicas of g, which this node leads, are, when that changed
// since it last did.
func (e *Engine) recordGroup(pl *placer, g replication.GroupID, st replication.Status) {
	if e.cluster.Groups == nil || pl.unrecorded {
		return
	}
	rec := distribution.GroupRecord{Leader: e.cluster.Node}
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
