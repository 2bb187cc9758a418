package engine

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/storage"
)

// Replicated partitions (Options.Replicated). Every physical partition is a Raft group of its
// own on the node's replication host, the shape a cluster's nodes run (issue 29); on one node
// each group has one replica, which leads it. The host owns the partitions and opens them
// through the engine (openReplica): at start-up those the store holds, a new container's when
// the engine bootstraps their groups, and a split's children once the split is applied. The
// engine takes each one it opened into its container's routing table (take).

// replicaSet is the engine's side of the host: the replicated holding (holding.go).
type replicaSet struct {
	e    *Engine
	host *replication.Host
	// mu guards what follows. The host's goroutine reads containers while Engine.mu may be
	// held by a split that waits for the host, so they are kept here, not under Engine.mu.
	mu      sync.Mutex
	changed *sync.Cond // signalled when opened gains a partition
	// containers are the open containers by number.
	containers map[uint32]*Container
	// opened are partitions the host opened that no container has taken yet.
	opened map[replication.GroupID]*partition.Partition
	// handles are the replicas' handles, by group: where the engine learns who leads.
	handles map[replication.GroupID]*replication.Handle
}

// hostOf is the host, once started; nil before, and for an engine without replicas.
func (rs *replicaSet) hostOf() *replication.Host {
	if rs == nil {
		return nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.host
}

// leaderOf is the node whose replica of g leads, as far as this node knows (0: none known).
func (rs *replicaSet) leaderOf(g replication.GroupID) replication.NodeID {
	rs.mu.Lock()
	hd := rs.handles[g]
	rs.mu.Unlock()
	if hd == nil {
		return 0
	}
	return hd.LeaderNode()
}

func newReplicaSet(e *Engine) *replicaSet {
	rs := &replicaSet{e: e, containers: map[uint32]*Container{}, opened: map[replication.GroupID]*partition.Partition{},
		handles: map[replication.GroupID]*replication.Handle{}}
	rs.changed = sync.NewCond(&rs.mu)
	return rs
}

// start opens the replication host on the engine's storage, which opens every replica the
// store holds, and runs it. Every container of the catalog is registered before.
func (rs *replicaSet) start() error {
	e := rs.e
	cfg := replication.Config{Node: 1, DB: e.db, Transport: noTransport{}, Open: e.openReplica, CanOpen: e.canOpenReplica, Removed: e.replicaRemoved, Logger: e.log}
	if e.cluster != nil {
		cfg.Node, cfg.Transport = e.cluster.Node, e.cluster.Transport
	}
	h, err := replication.New(cfg)
	if err != nil {
		return err
	}
	rs.mu.Lock()
	rs.host = h
	rs.mu.Unlock()
	h.Start()
	return nil
}

// close stops the host, which closes the partitions it holds.
func (rs *replicaSet) close() {
	if h := rs.hostOf(); h != nil {
		h.Close()
	}
}

// register makes c known to the host's goroutine, which opens replicas only of the
// containers it knows (openReplica).
func (rs *replicaSet) register(c *Container) {
	rs.mu.Lock()
	rs.containers[c.num] = c
	rs.mu.Unlock()
}

// forget removes a container that is deleted, or that failed to open, from the registry.
func (rs *replicaSet) forget(c *Container) {
	rs.mu.Lock()
	if rs.containers[c.num] == c {
		delete(rs.containers, c.num)
	}
	rs.mu.Unlock()
}

// create persists the record first: it takes the container's number for good, and groups are
// bootstrapped for it after, or at the next start if this one stops before.
func (rs *replicaSet) create(d *Database, rec containerRecord, undo func()) (*Container, error) {
	e := rs.e
	if err := e.persist(catalog.Containers, rec.Num, rec); err != nil {
		undo()
		return nil, err
	}
	c, err := e.openContainer(d, rec)
	if err != nil {
		if ch, cerr := e.change(catalog.Key{Kind: catalog.Containers, Num: rec.Num}); cerr == nil {
			e.commitCatalog(ch, nil) // best effort: a record left is opened at the next start
		}
		return nil, fault.New(fault.Internal, "%w", err)
	}
	if e.cluster != nil {
		// This node campaigns at once in the new groups; the other members vote once they
		// have bootstrapped theirs (replication keeps the early votes).
		for _, r := range rec.Ranges {
			rs.host.Campaign(replica.Group(rec.Num, r.ID))
		}
	}
	return c, nil
}

// tiling takes the children of a split this node's replica applied that the catalog does not
// show yet (its leader stopped before it wrote the catalog): they serve range r.
func (rs *replicaSet) tiling(c *Container, r epk.Range) []*partition.Partition {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.takeTiling(c.num, r)
}

// abandon leaves the partitions to the host, which owns them.
func (rs *replicaSet) abandon([]*partition.Partition) {}

// reopen does nothing: the partitions of a replicated container are the host's, and stay as
// they are (a deleted container's serve again after a restart).
func (rs *replicaSet) reopen(*Container) {}

// splitCommitted waits for the children to take their parent's place: the host opens them
// once the replica applied split-commit, and they take it then (adopt).
func (rs *replicaSet) splitCommitted(c *Container, _ *routing, _ containerRecord, parent, left, right uint32) error {
	if err := c.awaitAdoption(parent); err != nil {
		return err
	}
	return c.awaitLeaders(left, right)
}

// drop forgets a deleted container and destroys its replicas: groups left by a stop before
// are dropped at the next start (replication.ErrGone).
func (rs *replicaSet) drop(c *Container) {
	rs.forget(c)
	if err := c.dropReplicas(); err != nil {
		rs.e.log.Warn("dropping a deleted container's replicas", "container", c.id, "err", err)
	}
}

// noTransport is the transport of a node alone: its groups have no other replica to talk to.
type noTransport struct{}

func (noTransport) Send(*replication.Envelope) {}

// openReplica is the host's Opener: it opens the partition of a replica. It runs on the host's
// goroutine, so it takes no engine lock.
func (e *Engine) openReplica(g replication.GroupID, raw []byte, hd *replication.Handle) (replication.StateMachine, error) {
	m, err := replica.ParseMeta(g, raw)
	if err != nil {
		return nil, err
	}
	rs := e.replicas
	rs.mu.Lock()
	c := rs.containers[m.Container]
	rs.mu.Unlock()
	if c == nil {
		// A group of a container deleted, or whose creation stopped before its record was
		// written: the host drops it at start-up.
		return nil, fmt.Errorf("group %d: container %d is not in the catalog: %w", g, m.Container, replication.ErrGone)
	}
	cfg, err := c.partitionConfig(rangeRecord{ID: m.ID, Min: m.Min, Max: m.Max})
	if err != nil {
		return nil, err
	}
	cfg.Replica = hd
	cfg.OnSplit = func(b *storage.Batch, children [2]partition.Child) error {
		var cs []replication.ChildGroup
		for _, ch := range children {
			cs = append(cs, replication.ChildGroup{Group: replica.Group(m.Container, ch.ID), Meta: replica.MetaOf(m.Container, ch.ID, ch.Range)})
		}
		_, _, err := rs.host.SplitGroup(b, g, cs)
		return err
	}
	p, err := partition.Open(cfg)
	if err != nil {
		return nil, err
	}
	rs.mu.Lock()
	rs.handles[g] = hd
	if !c.replaceRoute(p) {
		rs.opened[g] = p
		rs.adopt(c)
		rs.changed.Broadcast()
	}
	rs.mu.Unlock()
	return replica.Of(p), nil
}

// adopt puts in c's routing table the children of a split this node's replica applied: the
// partitions the host opened for c that tile the range of one in the table take its place;
// and a replica the host opened of a range held on other nodes takes that range's place.
// Every replica applies split-commit, and its host then opens the children, so the routing
// of every node follows a split as its replica does, whichever node ran it. Callers hold
// rs.mu.
func (rs *replicaSet) adopt(c *Container) {
	rt := c.routes.Load()
	if rt == nil || len(rt.parts)+len(rt.remote) == 0 {
		return // not published yet, or awaited
	}
	var next []*partition.Partition
	changed := false
	for _, q := range rt.parts {
		kids := rs.takeTiling(c.num, q.Range())
		if kids == nil {
			next = append(next, q)
			continue
		}
		next = append(next, kids...)
		changed = true
	}
	var remote []remoteRange
	for _, rr := range rt.remote {
		g := replica.Group(c.num, rr.id)
		if p := rs.opened[g]; p != nil && p.Range() == rr.r {
			delete(rs.opened, g)
			next = append(next, p)
			changed = true
			continue
		}
		remote = append(remote, rr)
	}
	if changed {
		slices.SortFunc(next, func(a, b *partition.Partition) int { return cmp.Compare(a.Range().Min, b.Range().Min) })
		c.routes.Store(&routing{parts: next, remote: remote})
	}
}

// refreshRemote brings the ranges of c held on other nodes up to the catalog's (a split of
// one there shows as its children here once the catalog has them), and takes in the replicas
// this node opened of the new ones meanwhile: a child's snapshot may come before the catalog
// names the child, and nothing else would route to its replica. Callers hold e.mu.
func (rs *replicaSet) refreshRemote(c *Container) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rt := c.routes.Load()
	if rt == nil || len(rt.remote) == 0 {
		return
	}
	var remote []remoteRange
	for _, r := range c.rec.Ranges {
		er, err := r.epkRange()
		if err != nil {
			return
		}
		if !slices.ContainsFunc(rt.parts, func(p *partition.Partition) bool { pr := p.Range(); return pr.Min < er.Max && er.Min < pr.Max }) {
			remote = append(remote, remoteRange{id: r.ID, r: er})
		}
	}
	if !slices.Equal(remote, rt.remote) {
		c.routes.Store(&routing{parts: rt.parts, remote: remote})
		rs.adopt(c)
	}
}

// replicaRemoved is the host's word that this node's replica of g was removed from its group:
// its range is then held elsewhere (with a replica on every node, this one is being drained),
// and its requests go there at once, not once a read of the removed replica has failed.
func (e *Engine) replicaRemoved(g replication.GroupID) {
	rs := e.replicas
	rs.mu.Lock()
	defer rs.mu.Unlock()
	// A replica opened and not taken yet (its range was still read elsewhere) went with its
	// group, its data deleted: nothing may take it now.
	delete(rs.opened, g)
	if e.cluster == nil {
		return
	}
	c := rs.containers[replica.ContainerOf(g)]
	if c == nil {
		return
	}
	rt := c.routes.Load()
	if rt == nil {
		return
	}
	i := indexOf(rt.parts, uint32(g))
	if i < 0 {
		return
	}
	p := rt.parts[i]
	next := &routing{parts: slices.Delete(slices.Clone(rt.parts), i, i+1), remote: slices.Clone(rt.remote)}
	next.remote = append(next.remote, remoteRange{id: p.ID(), r: p.Range()})
	slices.SortFunc(next.remote, func(a, b remoteRange) int { return cmp.Compare(a.r.Min, b.r.Min) })
	c.routes.Store(next)
	e.log.Info("this node's replica of a partition was removed: its requests go to the nodes that hold it", "container", c.id, "partition", p.ID())
	// A replica its group's split left behind is removed for the children's snapshots: the
	// catalog may name the children already, and their replicas take the range's place as
	// they come (adopt). Not here: the host's goroutine must not wait for e.mu.
	go func() {
		e.mu.RLock()
		defer e.mu.RUnlock()
		rs.refreshRemote(c)
	}()
}

// takeTiling takes from the partitions the host opened for the container numbered num those
// that divide r among them exactly (two or more, in order): the descendants of a range that
// split. Nil when they do not. Callers hold rs.mu.
func (rs *replicaSet) takeTiling(num uint32, r epk.Range) []*partition.Partition {
	var in []*partition.Partition
	for g, p := range rs.opened {
		if pr := p.Range(); replica.ContainerOf(g) == num && pr.Min >= r.Min && pr.Max <= r.Max {
			in = append(in, p)
		}
	}
	if len(in) < 2 {
		return nil
	}
	slices.SortFunc(in, func(a, b *partition.Partition) int {
		return cmp.Compare(a.Range().Min, b.Range().Min)
	})
	at := r.Min
	for _, p := range in {
		if p.Range().Min != at {
			return nil
		}
		at = p.Range().Max
	}
	if at != r.Max {
		return nil
	}
	for _, p := range in {
		delete(rs.opened, replica.Group(num, p.ID()))
	}
	return in
}

// replaceRoute puts p, a replica the host opened again on a snapshot, in place of the one of
// its range in the container's routing table, and reports whether there was one. Callers hold
// the replica set's mu, under which the routing table of a replicated container is published.
func (c *Container) replaceRoute(p *partition.Partition) bool {
	rt := c.routes.Load()
	if rt == nil {
		return false
	}
	i := indexOf(rt.parts, p.ID())
	if i < 0 {
		return false
	}
	next := &routing{parts: slices.Clone(rt.parts), remote: rt.remote}
	c.e.setBudget(p, rt.parts[i].Budget().Rate(), time.Now()) // its partition's, as the one it replaces had
	next.parts[i] = p
	c.routes.Store(next)
	return true
}

// publish stores a replicated container's routing table, with any replica the host opened
// again since it was taken.
func (rs *replicaSet) publish(c *Container, rt *routing) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for i, p := range rt.parts {
		g := replica.Group(c.num, p.ID())
		if q := rs.opened[g]; q != nil {
			rt.parts[i] = q
			delete(rs.opened, g)
		}
	}
	c.routes.Store(rt)
	rs.adopt(c) // replicas of ranges held elsewhere that came meanwhile
}

// canOpenReplica says whether openReplica could open a replica of meta now: whether its
// container is known here (a node of a cluster learns of a container through the catalog,
// and may receive one of its replicas first).
func (e *Engine) canOpenReplica(g replication.GroupID, raw []byte) bool {
	m, err := replica.ParseMeta(g, raw)
	if err != nil {
		return false
	}
	rs := e.replicas
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.containers[m.Container] != nil
}

// openTimeout bounds the wait for the host to open a replica, and for its election.
const openTimeout = 10 * time.Second

// take returns the partition the host opened for g, waiting for it up to openTimeout; nil if
// it did not come.
func (rs *replicaSet) take(g replication.GroupID, wait bool) *partition.Partition {
	deadline := time.Now().Add(openTimeout)
	timer := time.AfterFunc(openTimeout, func() {
		rs.mu.Lock()
		rs.changed.Broadcast()
		rs.mu.Unlock()
	})
	defer timer.Stop()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for {
		if p := rs.opened[g]; p != nil {
			delete(rs.opened, g)
			return p
		}
		if !wait || time.Now().After(deadline) {
			return nil
		}
		rs.changed.Wait()
	}
}

// open opens the replica of range r of c: the one the host holds, or, when it holds
// none, its replica of a new group: the only one on a node alone, one of r.Members in a
// cluster. On a node alone it returns once the replica leads.
//
// On a node of a cluster, a range this node is not a bootstrap member of (it joined after the
// container was created, or its disk was wiped since), or whose replica here was removed, has
// no replica here until the group's leader adds one: errAway.
func (rs *replicaSet) open(c *Container, r rangeRecord) (*partition.Partition, error) {
	g := replica.Group(c.rec.Num, r.ID)
	p := rs.take(g, false)
	if p == nil {
		er, err := r.epkRange()
		if err != nil {
			return nil, err
		}
		members := []replication.Member{{Replica: 1, Node: 1, Store: rs.host.Store()}}
		if c.e.cluster != nil {
			members = r.Members
		}
		i := slices.IndexFunc(members, func(m replication.Member) bool { return m.Node == rs.host.Node() && m.Store == rs.host.Store() })
		if i < 0 {
			if c.e.cluster != nil {
				return nil, errAway
			}
			return nil, fmt.Errorf("container %q: partition %d has no replica on this node", c.rec.ID, r.ID)
		}
		err = rs.host.Bootstrap(g, replica.MetaOf(c.rec.Num, r.ID, er), members, members[i].Replica)
		if errors.Is(err, replication.ErrRemoved) {
			return nil, errAway
		}
		if err != nil && !errors.Is(err, replication.ErrExists) { // a snapshot may have made it first
			return nil, err
		}
		p = rs.take(g, true)
	}
	if p == nil {
		return nil, fmt.Errorf("container %q: the replica of partition %d did not open in time", c.rec.ID, r.ID)
	}
	if c.e.cluster != nil {
		return p, nil // elections elect a leader; requests find it (forward.go)
	}
	// The only voter: it is elected at once, instead of after an election timeout.
	if err := rs.host.Campaign(g); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(openTimeout); !p.Leading(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("container %q: partition %d was not elected in time", c.rec.ID, r.ID)
		}
	}
	return p, nil
}

// dropReplicas destroys the replicas of c's partitions (c is being deleted), those of its
// routing table and those it still awaits.
func (c *Container) dropReplicas() error {
	for _, p := range c.routes.Load().parts {
		if err := c.e.replicas.host.Drop(replica.Group(c.rec.Num, p.ID())); err != nil {
			return err
		}
	}
	for _, r := range c.rec.Ranges {
		g := replica.Group(c.rec.Num, r.ID)
		if p := c.e.replicas.take(g, false); p != nil {
			if err := c.e.replicas.host.Drop(g); err != nil {
				return err
			}
		}
	}
	return nil
}

// errAway: this node of a cluster holds no replica of a range (yet).
var errAway = errors.New("engine: no replica of the range on this node")

// await waits in the background for the replicas of c's ranges that this node does not hold,
// which their groups' leaders add (placement.go), and then publishes c's routing table and
// makes c one of its database's containers. Until then c is one of the database's awaited
// containers, for which requests are refused with 503. Callers hold e.mu, or run before the
// engine is open.
func (e *Engine) await(c *Container) {
	c.db.awaited[c.id] = c
	have, ranges := c.have, c.rec.Ranges
	c.have = nil
	e.log.Info("waiting for this node's replicas of a container", "container", c.id, "have", len(have), "ranges", len(c.rec.Ranges))
	go func() {
		rs := e.replicas
		kids := map[uint32][]*partition.Partition{} // the children of ranges that split meanwhile
		for _, r := range ranges {
			er, err := r.epkRange()
			if err != nil {
				e.log.Error("a container's range", "container", c.id, "err", err)
				return
			}
			for have[r.ID] == nil && kids[r.ID] == nil {
				select {
				case <-e.stop:
					return
				default:
				}
				rs.mu.Lock()
				current := rs.containers[c.num] == c
				kids[r.ID] = rs.takeTiling(c.num, er)
				rs.mu.Unlock()
				if !current {
					return // deleted meanwhile
				}
				if kids[r.ID] == nil {
					have[r.ID] = rs.take(replica.Group(c.num, r.ID), true)
				}
			}
		}
		rt := &routing{}
		for _, r := range ranges {
			if p := have[r.ID]; p != nil {
				rt.parts = append(rt.parts, p)
			} else {
				rt.parts = append(rt.parts, kids[r.ID]...)
			}
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if c.db.awaited[c.id] != c {
			return
		}
		rs.publish(c, rt)
		delete(c.db.awaited, c.id)
		c.db.containers[c.id] = c
		e.refreshBudgets()
		e.log.Info("this node's replicas of a container have come", "container", c.id)
	}()
}
