package engine

import (
	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replication"
)

// holding is how this node holds its partitions, the one place the engine's code differs by
// it. There are two:
//
//   - direct: the engine opens each partition itself and the partition is its own log (a
//     single node, the default);
//   - replicated (*replicaSet, replicas.go): every partition is a Raft group on the node's
//     replication host, which opens and owns the replicas this node holds; the engine takes
//     each one the host opened into its container's routing table. One node alone runs it
//     with one replica per group (Options.Replicated), every node of a cluster with several.
//
// What a partition can do does not depend on it (package partition hides the log behind
// entryLog); what differs is who opens and closes partitions, and so in what order a
// container's record and its partitions come into being, and what stands after a failure.
type holding interface {
	// start opens the partitions the node holds of the catalog's containers, every one of
	// which is registered by then.
	start() error
	// register makes a container known before its partitions open (the host opens a replica
	// only for a container it knows); forget undoes it once the container is deleted or
	// failed to open.
	register(c *Container)
	forget(c *Container)
	// create opens a new container of rec and persists rec, in the order that leaves nothing
	// half made: the number a container's record takes is its own for good once persisted.
	// When create fails before anything of rec was kept it calls undo, which gives back the
	// catalog's counters.
	create(d *Database, rec containerRecord, undo func()) (*Container, error)
	// open opens the partition of one of c's ranges.
	open(c *Container, r rangeRecord) (*partition.Partition, error)
	// tiling takes the partitions this node opened that took range r of c's place after a
	// split the catalog does not show yet; nil when there are none.
	tiling(c *Container, r epk.Range) []*partition.Partition
	// publish stores c's routing table rt.
	publish(c *Container, rt *routing)
	// abandon gives up the partitions opened for a container that failed to open.
	abandon(parts []*partition.Partition)
	// splitCommitted puts the children left and right of a split of c's partition parent
	// that committed in c's routing table rt, in their parent's place; rec is c's record
	// after the split.
	splitCommitted(c *Container, rt *routing, rec containerRecord, parent, left, right uint32) error
	// reopen serves c again after a split or a deletion that failed once its partitions were
	// closed.
	reopen(c *Container)
	// drop destroys what is left of a deleted container's partitions.
	drop(c *Container)
	// leaderOf is the node whose replica of group g leads, as far as this node knows; 0 when
	// none is known, or when partitions are not groups.
	leaderOf(g replication.GroupID) replication.NodeID
	// close closes every partition the holding owns (a direct node's are its containers').
	close()
}

// direct is the holding of a node whose partitions are each their own log.
type direct struct{ e *Engine }

func (direct) start() error                                        { return nil }
func (direct) register(*Container)                                 {}
func (direct) forget(*Container)                                   {}
func (direct) tiling(*Container, epk.Range) []*partition.Partition { return nil }
func (direct) publish(c *Container, rt *routing)                   { c.routes.Store(rt) }
func (direct) drop(*Container)                                     {} // its data went with the record
func (direct) leaderOf(replication.GroupID) replication.NodeID     { return 0 }
func (direct) close()                                              {} // closePartitions closes the containers

func (direct) abandon(parts []*partition.Partition) {
	for _, p := range parts {
		p.Close()
	}
}

// create opens the container first: a record is persisted only for a container that could be
// opened.
func (h direct) create(d *Database, rec containerRecord, undo func()) (*Container, error) {
	c, err := h.e.openContainer(d, rec)
	if err != nil {
		undo()
		return nil, fault.New(fault.Internal, "%w", err)
	}
	if err := h.e.persist(catalog.Containers, rec.Num, rec); err != nil {
		c.close()
		undo()
		return nil, err
	}
	return c, nil
}

func (direct) open(c *Container, r rangeRecord) (*partition.Partition, error) {
	cfg, err := c.partitionConfig(r)
	if err != nil {
		return nil, err
	}
	return partition.Open(cfg)
}

// splitCommitted opens the children; should one fail, the container serves again from its
// record as it was before the split.
func (h direct) splitCommitted(c *Container, rt *routing, rec containerRecord, _, left, right uint32) error {
	next := &routing{}
	for _, r := range rec.Ranges {
		if r.ID != left && r.ID != right {
			next.parts = append(next.parts, rt.parts[indexOf(rt.parts, r.ID)])
			continue
		}
		p, err := h.open(c, r)
		if err != nil {
			h.reopen(c)
			return err
		}
		next.parts = append(next.parts, p)
	}
	c.routes.Store(next)
	return nil
}

// reopen opens c's partitions anew from its record.
func (h direct) reopen(c *Container) {
	fresh, err := h.e.openContainer(c.db, c.rec)
	if err != nil {
		return
	}
	for _, p := range c.routes.Load().parts {
		p.Close()
	}
	c.routes.Store(fresh.routes.Load())
	c.index.Store(fresh.policy()) // the one the partitions follow, so writes' terms match it
}
