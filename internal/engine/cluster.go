package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/distribution"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
)

// A node of a cluster (Options.Cluster), the first step of issue 29. The catalog is the
// cluster's, in etcd: a change commits there only if the catalog did not change since this
// node last read it, and every node follows the catalog's changes (follow) and applies them
// to its own view, opening the containers other nodes created and closing those they deleted.
// Every partition is a Raft group with replicas on Replicas nodes, or every live node
// (placement.go); the node that creates a container campaigns in its groups, and the others
// bootstrap their replicas when they learn of it; nodes that come later get theirs from the
// groups' leaders. Reads are served by the local replica after what their consistency level
// asks (consistency.go: a ReadIndex from the leader at Strong, a session token's LSN at
// Session, nothing at Eventual), or by a node that holds one (remote.go); writes go to the node
// whose replica leads the partition (forward.go), and so do transactions' commits (stored
// procedures, triggers, CQL statements that read before they write), conditioned on nothing
// having changed since the transaction read, or run again.
//

// Cluster is what a node of a cluster needs.
type Cluster struct {
	Node replication.NodeID
	// Transport carries the host's envelopes to the other nodes; what arrives for this node
	// goes to Engine.Deliver.
	Transport replication.Transport
	Catalog   *catalog.Etcd
	// Nodes lists the live nodes: where partitions are replicated (placement.go), but for
	// those being drained.
	Nodes func(ctx context.Context) ([]ClusterNode, error)
	// Members lists every node that ever registered, live or not (the control plane's
	// directory), for status.
	Members func(ctx context.Context) ([]ClusterNode, error)
	// Registered reports whether this node is registered in the control plane now.
	Registered func() bool
	// Drain marks the node of cluster address addr as being drained, or no longer (on false).
	Drain func(addr string, on bool) error
	// DeadAfter is how long a node may be missing from Nodes before the leaders of its
	// partitions remove its replicas (0: DefaultDeadAfter).
	DeadAfter time.Duration
	// Call sends a request to the engine of node (Engine.ServeCall there) and returns its
	// answer, framed as the cluster's version allows (package nodemsg). An error wrapping
	// distribution.ErrNotSent says that the request never left, one wrapping
	// nodecall.ErrCodec that it or its answer did not encode or decode; after any other the
	// request's outcome is unknown.
	Call func(ctx context.Context, node replication.NodeID, req *nodecall.Request) (nodecall.Answer, error)
	// Replicas is how many replicas each partition has, on as many nodes (the cluster's
	// --replicas); 0 puts one on every live node.
	Replicas int
	// Groups records where each partition's replicas are; needed when Replicas is set.
	Groups distribution.GroupMap
	// Active is the cluster's active version (package clusterversion): what the nodes may use
	// of what releases added. nil: Base.
	Active func() clusterversion.Version
}

// active is the cluster's active version as this node knows it.
func (c *Cluster) active() clusterversion.Version {
	if c.Active == nil {
		return clusterversion.Base
	}
	return c.Active()
}

// ReplicaSetSize is how many replicas each partition has: one on a node alone, the cluster's
// replica count, or, when every node holds a replica, the live nodes (as many as the
// cluster's control plane lists; at least one).
func (e *Engine) ReplicaSetSize(ctx context.Context) int {
	if e.cluster == nil {
		return 1
	}
	if e.cluster.Replicas > 0 {
		return e.cluster.Replicas
	}
	nodes, err := e.cluster.Nodes(ctx)
	if err != nil || len(nodes) == 0 {
		return 1
	}
	return len(nodes)
}

// errNotInCluster refuses what a cluster does not do yet (see above).
func errNotInCluster(what string) error {
	return fault.New(fault.Unavailable, "%s is not available in a cluster yet", what)
}

// Deliver hands an envelope from another node to the engine's replication host.
func (e *Engine) Deliver(env *replication.Envelope) {
	if h := e.replicas.hostOf(); h != nil {
		h.Deliver(env)
	}
}

// Store is the identity of this node's store of replicas, which other nodes' placements name;
// 0 for an engine without replicas.
func (e *Engine) Store() replication.StoreID {
	if h := e.replicas.hostOf(); h != nil {
		return h.Store()
	}
	return 0
}

// handOff moves the leadership of every group this node leads to another of its voters, and
// waits (at most handOffWait) until it has moved, so that a node stopped on purpose leaves no
// partition without a leader for an election timeout: its writes go on at once elsewhere. It
// runs once the front ends stopped taking requests; forwarded writes that still come find the
// new leader.
func (e *Engine) handOff() {
	h := e.replicas.hostOf()
	if h == nil {
		return
	}
	var led []*partition.Partition
	e.mu.RLock()
	for _, d := range e.dbs {
		for _, c := range d.containers {
			for _, p := range c.routes.Load().parts {
				if !p.Leading() {
					continue
				}
				g := replica.Group(c.num, p.ID())
				st, ok := h.Status(g)
				if !ok {
					continue
				}
				// To the voter furthest along: a voter on a node that is down, or whose disk was
				// wiped, answers nothing, and a transfer to it would hold the group for an
				// election timeout.
				var to replication.ReplicaID
				for _, v := range st.Descriptor.Voters {
					if v != st.Replica && (to == 0 || st.Match[v] > st.Match[to]) {
						to = v
					}
				}
				if to != 0 && h.TransferLeader(g, to) == nil {
					led = append(led, p)
				}
			}
		}
	}
	e.mu.RUnlock()
	deadline := time.Now().Add(handOffWait)
	for _, p := range led {
		for p.Leading() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if len(led) > 0 {
		e.log.Info("leadership handed off", "groups", len(led), "took", time.Since(deadline.Add(-handOffWait)).Round(time.Millisecond))
	}
}

// handOffWait bounds how long a stopping node waits for its leaderships to move.
const handOffWait = 3 * time.Second

// caughtUp records that the engine holds the catalog as of rev. Callers hold e.mu.
func (e *Engine) caughtUp(rev int64) {
	if rev > e.rev {
		e.rev, e.seqAt = rev, e.seq
		close(e.caught)
		e.caught = make(chan struct{})
	}
}

// fresh waits, on a node of a cluster, until the engine holds the catalog as of the call:
// every change any node committed before it. Callers do not hold e.mu.
func (e *Engine) fresh() error {
	if e.cluster == nil {
		return nil
	}
	rev, err := e.cluster.Catalog.Revision()
	if err != nil {
		return fault.New(fault.Unavailable, "The cluster's catalog did not answer: %v", err)
	}
	deadline := time.After(catalogWait)
	for {
		e.mu.RLock()
		cur, caught := e.rev, e.caught
		e.mu.RUnlock()
		if cur >= rev {
			return nil
		}
		select {
		case <-caught:
		case <-deadline:
			return fault.New(fault.Unavailable, "This node did not catch up with the cluster's catalog in time; retry the request")
		case <-e.stop:
			return fault.New(fault.Unavailable, "The server is shutting down")
		}
	}
}

// freshWrite runs write, which decides and commits a change of the catalog, on a node of a
// cluster against the catalog as of the call (fresh). When another node changed the catalog
// before the change committed (errCatalogMoved), it catches up and runs write again: write
// decides again against the newer records, so a real conflict answers as on a node alone
// (409, 412) and a mere race does not reach the client. write must leave nothing changed
// when it fails, but for the counters, which catching up replaces with the catalog's.
func (e *Engine) freshWrite(write func() error) error {
	for attempt := 1; ; attempt++ {
		if err := e.fresh(); err != nil {
			return err
		}
		err := write()
		if !errors.Is(err, errCatalogMoved) || attempt == maxCatalogAttempts {
			return err
		}
	}
}

// freshWritten is freshWrite for a write that returns a value.
func freshWritten[T any](e *Engine, write func() (T, error)) (v T, err error) {
	err = e.freshWrite(func() (err error) {
		v, err = write()
		return err
	})
	return v, err
}

// Fresh is fresh for the other front ends (the CQL engine): on a node of a cluster, it waits
// until the node holds the catalog as of the call; nothing on a node alone.
func (e *Engine) Fresh() error { return e.fresh() }

// missFresh looks something up with find and, on a node of a cluster where it is not found,
// looks again once the node holds the catalog as of now: a container another node created a
// moment ago is found on every node.
func missFresh[T any](e *Engine, find func() (T, error)) (T, error) {
	v, err := find()
	if err == nil || e.cluster == nil || fault.KindOf(err) != fault.NotFound {
		return v, err
	}
	if ferr := e.fresh(); ferr != nil {
		return v, err
	}
	return find()
}

// catalogWait bounds how long a request waits for its node to catch up with the catalog.
const catalogWait = 10 * time.Second

// follow applies the changes other nodes make to the catalog, in order, until the engine
// closes.
func (e *Engine) follow() {
	defer e.background.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-e.stop
		cancel()
	}()
	var failing time.Time // since when the watch has been failing; zero while it works
	for ctx.Err() == nil {
		e.mu.RLock()
		from := e.rev
		e.mu.RUnlock()
		watched := time.Now()
		for ev := range e.cluster.Catalog.Watch(ctx, from) {
			if ev.Err != nil {
				switch {
				case errors.Is(ev.Err, catalog.ErrCompacted):
					e.reloadCatalog()
				case ctx.Err() != nil:
				case failing.IsZero() || time.Since(watched) > 5*time.Second:
					// Once per outage: the watch is tried again every 100 ms meanwhile (a watch
					// that ran for a while before it failed starts another).
					failing = time.Now()
					e.log.Warn("following the cluster's catalog failed; trying again until it answers", "err", ev.Err)
				default:
					e.log.Debug("following the cluster's catalog", "err", ev.Err)
				}
				break
			}
			if !failing.IsZero() {
				e.log.Info("following the cluster's catalog again", "after", time.Since(failing).Round(time.Millisecond))
				failing = time.Time{}
			}
			e.mu.Lock()
			if ev.Revision > e.rev {
				e.applyCatalog(ev.Counters, ev.Put, ev.Delete)
				e.caughtUp(ev.Revision)
			}
			e.mu.Unlock()
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// reloadCatalog reads the whole catalog again, when the changes since the engine's revision
// are no longer kept, and applies the difference.
func (e *Engine) reloadCatalog() {
	cur, err := e.cluster.Catalog.Load()
	if err != nil {
		e.log.Warn("reloading the cluster's catalog", "err", err)
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	keep := map[catalog.Key]bool{}
	for _, r := range cur.Records {
		keep[r.Key] = true
	}
	var gone []catalog.Key
	for _, d := range e.dbs {
		if !keep[catalog.Key{Kind: catalog.Databases, Num: d.rec.Num}] {
			gone = append(gone, catalog.Key{Kind: catalog.Databases, Num: d.rec.Num})
		}
		for _, c := range d.containers {
			if !keep[catalog.Key{Kind: catalog.Containers, Num: c.num}] {
				gone = append(gone, catalog.Key{Kind: catalog.Containers, Num: c.num})
			}
		}
	}
	for num := range e.users {
		if !keep[catalog.Key{Kind: catalog.Users, Num: num}] {
			gone = append(gone, catalog.Key{Kind: catalog.Users, Num: num})
		}
	}
	e.applyCatalog(cur.Counters, cur.Records, gone)
	e.caughtUp(cur.Revision)
}

// applyCatalog brings the engine's view of the catalog to what another node committed: the
// counters, the records put (databases, then containers, then users) and those deleted (in the
// reverse order). Callers hold e.mu.
func (e *Engine) applyCatalog(counters []byte, puts []catalog.Record, dels []catalog.Key) {
	if counters != nil {
		if err := json.Unmarshal(counters, &e.seq); err != nil {
			e.log.Error("the cluster's catalog counters", "err", err)
		}
	}
	order := func(k catalog.Kind) int {
		return slices.Index([]catalog.Kind{catalog.Databases, catalog.Containers, catalog.Users}, k)
	}
	slices.SortStableFunc(puts, func(a, b catalog.Record) int { return order(a.Kind) - order(b.Kind) })
	slices.SortStableFunc(dels, func(a, b catalog.Key) int { return order(b.Kind) - order(a.Kind) })
	for _, k := range dels {
		switch k.Kind {
		case catalog.Users:
			if u := e.users[k.Num]; u != nil {
				delete(u.db.users, u.rec.ID)
				delete(e.users, k.Num)
			}
		case catalog.Containers:
			if c := e.containerByNum(k.Num); c != nil {
				e.removeContainer(c)
			}
		case catalog.Databases:
			if d := e.databaseByNum(k.Num); d != nil {
				for _, c := range d.containers {
					e.removeContainer(c)
				}
				for _, c := range d.awaited {
					e.removeContainer(c)
				}
				for _, u := range d.users {
					delete(e.users, u.rec.Num)
				}
				delete(e.dbs, d.rec.ID)
			}
		}
	}
	for _, r := range puts {
		var err error
		switch r.Kind {
		case catalog.Databases:
			err = e.putDatabase(r.Value)
		case catalog.Containers:
			err = e.putContainer(r.Value)
		case catalog.Users:
			err = e.putUser(r.Value)
		}
		if err != nil {
			e.log.Error("applying the cluster's catalog", "record", r.Key.String(), "err", err)
		}
	}
	e.refreshBudgets()
}

func (e *Engine) databaseByNum(num uint32) *Database {
	for _, d := range e.dbs {
		if d.rec.Num == num {
			return d
		}
	}
	return nil
}

// containerByNum is the container numbered num, open or awaited.
func (e *Engine) containerByNum(num uint32) *Container {
	for _, d := range e.dbs {
		for _, cs := range []map[string]*Container{d.containers, d.awaited} {
			for _, c := range cs {
				if c.num == num {
					return c
				}
			}
		}
	}
	return nil
}

func (e *Engine) putDatabase(v []byte) error {
	var rec databaseRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return err
	}
	if d := e.databaseByNum(rec.Num); d != nil {
		d.rec = rec
		return nil
	}
	e.dbs[rec.ID] = newDatabase(rec)
	return nil
}

func (e *Engine) putContainer(v []byte) error {
	var rec containerRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return err
	}
	if c := e.containerByNum(rec.Num); c != nil {
		policy := !bytes.Equal(c.rec.Indexing, rec.Indexing)
		c.rec = rec
		e.replicas.refreshRemote(c)
		c.applyLiveness()
		c.scripts.Store(c.newScriptSet(rec.Scripts))
		if policy {
			// The policy every write here follows from now on; the partitions' leaders record
			// it and rebuild (changeIndexingInCluster).
			pol, err := indexing.Parse(rec.Indexing)
			if err != nil {
				return err
			}
			c.index.Store(pol)
		}
		// A policy change, or a split's children (their vector graphs), may leave a rebuild
		// for the partitions this node leads.
		e.startReindexLocked(c)
		return nil
	}
	d := e.databaseByNum(rec.DB)
	if d == nil {
		return errors.New("the container's database is not in the catalog")
	}
	c, err := e.openContainer(d, rec)
	if errors.Is(err, errAway) {
		return nil // it joins d once its replicas have come
	}
	if err != nil {
		return err
	}
	d.containers[rec.ID] = c
	return nil
}

func (e *Engine) putUser(v []byte) error {
	var rec userRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return err
	}
	if u := e.users[rec.Num]; u != nil {
		delete(u.db.users, u.rec.ID)
		u.rec = rec
		u.db.users[rec.ID] = u
		return nil
	}
	d := e.databaseByNum(rec.DB)
	if d == nil {
		return errors.New("the user's database is not in the catalog")
	}
	e.addUser(d, rec)
	return nil
}

// removeContainer closes a container another node deleted, deletes its data here and drops
// its replicas. Callers hold e.mu.
func (e *Engine) removeContainer(c *Container) {
	delete(c.db.containers, c.id)
	delete(c.db.awaited, c.id)
	c.close()
	b := e.db.NewBatch()
	defer b.Close()
	err := c.deleteData(b)
	if err == nil {
		err = b.Commit()
	}
	if err != nil {
		e.log.Error("deleting a container another node deleted", "container", c.id, "err", err)
	}
	e.hold.drop(c)
}
