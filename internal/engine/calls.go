package engine

import (
	"context"
	"errors"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/script"
)

// The calls on one logical partition, and where they run: the locality seam of the engine's
// item API. A container's methods check their arguments, find the range that owns the key
// (callsAt, the one place that chooses) and make the call there:
//
//   - localCalls runs it on this node's replica of the partition, direct or replicated alike
//     (the partition's log is the seam below: partition.entryLog);
//   - remoteCalls, for a partition this node holds no replica of, delegates it whole to a
//     node that holds one (remote.go), which runs it as localCalls.
//
// Plain writes are not calls: they go through the pipeline to the partition's leader,
// wherever it is (forward.go); queries, the read feed and CQL scans read remote partitions a
// batch of items at a time (remotePart).
type partitionCalls interface {
	// read reads item id of the logical partition (e, key) at rc; elsewhere says whether a
	// session read this replica cannot serve may be served by another.
	read(ctx context.Context, dst []byte, e epk.EPK, key epk.Key, id string, rc ReadConsistency, elsewhere bool) (ItemResult, error)
	// writeTriggered and deleteTriggered write with triggers, which run, as a transaction,
	// on a node that holds the partition; o.PartitionKey is the key as the client named it.
	writeTriggered(kind OpKind, id string, src document.Source, o ItemOptions) (ItemResult, error)
	deleteTriggered(e epk.EPK, key epk.Key, id string, o ItemOptions) (ItemResult, error)
	patch(e epk.EPK, key epk.Key, id string, p Patch, o ItemOptions) (ItemResult, error)
	batch(ctx context.Context, e epk.EPK, key epk.Key, ops []BatchOp) ([]OpResult, int, error)
	// procedure runs stored procedure s, named id, with args; o.PartitionKey is the key as
	// the client named it.
	procedure(s Script, e epk.EPK, id string, args []byte, o ProcedureOptions) (ProcedureResult, error)
	// feed reads a page of the change feed of q.Range, within the partition.
	feed(q FeedQuery) (FeedPage, error)
}

// callsAt is where the calls on the logical partition e run.
func (c *Container) callsAt(e epk.EPK) partitionCalls {
	rt := c.routes.Load()
	if rr, ok := rt.remoteAt(e); ok {
		return remoteCalls{c: c, rr: rr}
	}
	return localCalls{c: c, p: rt.lookup(e)}
}

// localCalls runs calls on this node's replica p; p is nil only when the partition left this
// node since the routing was read, which the pipeline then finds.
type localCalls struct {
	c *Container
	p *partition.Partition
}

func (l localCalls) read(ctx context.Context, dst []byte, e epk.EPK, key epk.Key, id string, rc ReadConsistency, elsewhere bool) (ItemResult, error) {
	c, p := l.c, l.p
	op := partition.Operation{Kind: partition.Read, EPK: e, ID: id}
	if c.e.cluster != nil && p != nil {
		op.Consistency = c.partitionConsistency(p.ID(), rc)
		op.Consistency.Refuse = elsewhere
		c.countRead(p, rc)
	}
	r, err := c.executeOne(ctx, e, dst, op)
	if elsewhere && p != nil && errors.Is(err, partition.ErrSessionNotAvailable) {
		// This replica cannot catch up with the session soon enough: another replica serves
		// the read, as the service's gateway tries the next one.
		r2, err2 := remoteCalls{c: c, rr: remoteRange{id: p.ID(), r: p.Range()}}.read(ctx, dst, e, key, id, rc, false)
		if err2 == nil || errors.Is(err2, fault.NotFound) {
			r2.Charge += r.Charge
			return r2, err2
		}
	}
	if f := rc.readFactor(); f != 1 && p != nil {
		// The read's second half, at Strong and Bounded Staleness (the first was charged as
		// any read's).
		spendItem(r.Charge*(f-1), ru.PriorityOf(ctx), p, e)
		r.Charge *= f
	}
	return r, err
}

func (l localCalls) writeTriggered(kind OpKind, id string, src document.Source, o ItemOptions) (ItemResult, error) {
	return l.c.writeTriggered(kind, id, src, o)
}

func (l localCalls) deleteTriggered(e epk.EPK, _ epk.Key, id string, o ItemOptions) (ItemResult, error) {
	return l.c.deleteTriggered(e, id, o)
}

func (l localCalls) patch(e epk.EPK, _ epk.Key, id string, p Patch, o ItemOptions) (ItemResult, error) {
	return l.c.executeOne(o.ctx(), e, nil, l.c.patchOp(e, id, p, o.IfMatch))
}

func (l localCalls) batch(ctx context.Context, e epk.EPK, _ epk.Key, ops []BatchOp) ([]OpResult, int, error) {
	c := l.c
	failAt := func(i int, err error, charge float64) ([]OpResult, int, error) {
		results := make([]OpResult, len(ops))
		for j := range results {
			results[j] = OpResult{Err: fault.New(fault.Aborted, "The operation was not applied because operation %d of the batch failed", i)}
		}
		results[i] = OpResult{Err: fault.From(err), Charge: charge}
		return results, i, nil
	}
	pops := make([]partition.Operation, len(ops))
	for i, op := range ops {
		var err error
		if pops[i], err = c.batchOp(e, op); err != nil {
			return failAt(i, err, ru.Miss())
		}
	}
	x, err := c.execute(ctx, e, nil, pops...)
	if err != nil {
		var be *partition.BatchError
		switch k := fault.KindOf(err); {
		case errors.As(err, &be):
			return failAt(be.Index, be.Err, x.charge)
		case len(ops) == 1 && k != fault.Internal && k != fault.Unavailable && k != fault.Throttled:
			return failAt(0, err, x.charge)
		}
		return nil, -1, err
	}
	results := make([]OpResult, len(ops))
	for i := range ops {
		results[i] = opResult(pops[i].Kind, x.result(i), x.chargeOf(i))
	}
	return results, -1, nil
}

func (l localCalls) procedure(s Script, e epk.EPK, _ string, args []byte, o ProcedureOptions) (ProcedureResult, error) {
	c := l.c
	var res ProcedureResult
	x, charge, err := c.transact(o.ctx(), e, func(t *txn) error {
		out, err := c.e.scripts.Procedure(s.Body, args, t, script.ProcedureCall{Log: o.Log, Headers: o.Headers})
		res.Body, res.Log = out.Body, out.Log
		return err
	})
	res.Charge = charge
	if x.p != nil {
		res.PartitionID, res.LSN = x.p.ID(), x.p.Stats().LSN
	}
	return res, err
}

func (l localCalls) feed(q FeedQuery) (FeedPage, error) {
	c, p := l.c, l.p
	if p == nil {
		return FeedPage{Charge: ru.Miss()}, errNotHere()
	}
	if !q.delegated && c.readsElsewhere(p, q.Consistency) {
		return remoteCalls{c: c, rr: remoteRange{id: p.ID(), r: p.Range()}}.feed(q)
	}
	return c.readFeed(p, q)
}
