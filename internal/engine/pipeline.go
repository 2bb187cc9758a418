package engine

import (
	"context"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/ru"
)

// The request pipeline. Every operation on items (point reads and writes, patch, transactional
// batch, bulk; CQL statements next) goes through execute, and a script's transaction commits
// through apply, its second half (txn.go), in this order:
//
//	route   the partition that owns the logical partition's EPK
//	admit   refused (Throttled) when that partition has spent this second's request units
//	apply   a lone point read on the partition's read path; anything else as one command,
//	        in a cluster on the node that holds the partition's lease (forward.go)
//	charge  what was done, priced by opCharge; the minimum when the operation failed
//	record  the charge spent from the partition's budget and counted for its logical partition
//	split   a background split when a write left the partition over its size limit
//
// What a request carries is parsed and validated before execute (parse errors cost the
// minimum charge and touch no partition), and the answer is shaped after it, by the caller.

// executed is the outcome of execute.
type executed struct {
	p *partition.Partition
	// results has one per operation when they succeeded. A lone point read leaves it nil and
	// its item in read, so that the hottest request allocates nothing here.
	results []partition.Result
	read    partition.Doc
	// charges has one per operation of a successful multi-operation request; charge is what
	// the request costs in all, and so the one operation's charge otherwise.
	charges []float64
	charge  float64
}

// result is the outcome of operation i, which succeeded.
func (x *executed) result(i int) partition.Result {
	if x.results == nil {
		return partition.Result{Doc: x.read}
	}
	return x.results[i]
}

// chargeOf is the charge of operation i, which succeeded.
func (x *executed) chargeOf(i int) float64 {
	if x.charges == nil {
		return x.charge
	}
	return x.charges[i]
}

// execute runs ops, which all address the logical partition e, through the pipeline. A lone
// Read appends the item's JSON to dst. Writes wait while a script's transaction holds the
// logical partition (locks.go).
func (c *Container) execute(ctx context.Context, e epk.EPK, dst []byte, ops ...partition.Operation) (executed, error) {
	if len(ops) > 1 || ops[0].Kind.Writes() {
		c.locks.lockWrite(e)
		defer c.locks.unlockWrite(e)
	}
	return c.apply(ctx, e, dst, nil, ops...)
}

// apply is execute for a caller that holds the logical partition already: a transaction's
// commit (txn is what it read; nil for any other request), which is not admitted: its request
// was admitted before its script ran, and a request that crosses the budget while it runs
// still completes (the budget goes below zero), as any other request does. Refusing its commit
// would throw away work the client is charged for, and the SDK's retry would run the script
// again, only to be refused again.
func (c *Container) apply(ctx context.Context, e epk.EPK, dst []byte, txn *txnRead, ops ...partition.Operation) (executed, error) {
	if c.e.cluster != nil && (len(ops) > 1 || ops[0].Kind.Writes()) {
		x, err := c.applyLed(ctx, e, txn, ops) // on the leaseholder's node (forward.go)
		if err == nil {
			var lsn uint64
			for i := range ops {
				lsn = max(lsn, x.result(i).Doc.LSN)
			}
			c.saw(c.PartitionID(e), lsn) // acknowledged here, perhaps before this replica has it
		}
		return x, err
	}
	return c.applyHere(e, dst, txn == nil, ru.PriorityOf(ctx), ops...)
}

// routeAfter waits, up to routeWait, until the routing no longer holds p, a partition that
// closed, for e, and returns what it holds then: nil when nothing here does (the range went to
// other nodes), or the wait ran out (p closed for good: its replica was removed, or the engine
// is closing).
func (c *Container) routeAfter(e epk.EPK, p *partition.Partition) *partition.Partition {
	for deadline := time.Now().Add(routeWait); ; time.Sleep(time.Millisecond) {
		if q := c.routes.Load().lookup(e); q != p {
			return q
		}
		if time.Now().After(deadline) {
			return nil
		}
	}
}

// routeWait bounds routeAfter: a split's children take their parent's place within
// milliseconds of its closing.
const routeWait = 2 * time.Second

// txnRead is what a transaction read: the partition's LSN before its first read, and whether
// its replica led the partition's group then, in which term (forward.go).
type txnRead struct {
	lsn     uint64
	leading bool
	term    uint64
}

// readFrom is a transaction's txnRead of partition p, taken before its first read.
func readFrom(p *partition.Partition) txnRead {
	leading, term := p.LeaderTerm()
	return txnRead{lsn: p.Stats().LSN, leading: leading, term: term}
}

// applyHere is apply on this node's partition, for a request of priority pri; admit is false
// for a transaction's commit.
func (c *Container) applyHere(e epk.EPK, dst []byte, admit bool, pri ru.Priority, ops ...partition.Operation) (executed, error) {
	c.splitMu.RLock()
	defer c.splitMu.RUnlock()
	p := c.routes.Load().lookup(e)
	if p == nil {
		return executed{}, errNotHere()
	}
	x := executed{p: p}
	if admit {
		if err := c.admit(pri, p); err != nil {
			return x, err // a throttled request costs nothing
		}
	}
	var err error
	if len(ops) == 1 && ops[0].Kind == partition.Read {
		x.read, err = p.At(ops[0].Consistency).Read(e, ops[0].ID, dst)
		// On a node that did not run a split (a cluster's), a read may meet the parent as
		// it closes: its host closes it, then opens the children, which then take its place
		// in the routing (adopt). The read waits for them.
		for partition.Closed(err) {
			next := c.routeAfter(e, p)
			if next == nil {
				break
			}
			p, x.p = next, next
			x.read, err = p.At(ops[0].Consistency).Read(e, ops[0].ID, dst)
		}
	} else {
		// A copy, so that ops itself does not escape to the partition's queue and a point
		// read's one operation can stay on its caller's stack.
		x.results, err = p.Execute(append([]partition.Operation(nil), ops...)...)
	}
	if err != nil {
		x.results, x.charge = nil, ru.Miss()
		spendItem(x.charge, pri, p, e)
		return x, err
	}
	if len(ops) > 1 {
		x.charges = make([]float64, len(ops))
	}
	writes := false
	for i, op := range ops {
		ch := opCharge(op.Kind, x.result(i))
		if x.charges != nil {
			x.charges[i] = ch
		}
		x.charge += ch
		writes = writes || op.Kind.Writes()
	}
	spendItem(x.charge, pri, p, e)
	if writes {
		c.e.maybeSplit(c, p)
	}
	return x, nil
}

// opCharge is what an operation that succeeded costs: the one place that prices item
// operations, whatever request they came in.
func opCharge(kind partition.OpKind, r partition.Result) float64 {
	switch {
	case kind == partition.Unchanged:
		return 0 // a transaction's check: its reads were charged as they were made
	case kind == partition.Read:
		return ru.PointRead(len(r.Doc.JSON))
	case kind == partition.Delete:
		return ru.Delete(r.PrevBytes, r.IndexTerms)
	case r.Created:
		return ru.Insert(len(r.Doc.JSON), r.IndexTerms)
	default:
		return ru.Replace(r.PrevBytes, len(r.Doc.JSON), r.IndexTerms)
	}
}

// admit refuses a request of priority pri with Throttled when one of the partitions it needs
// has spent this second's budget (for a Low request, what High ones leave of it: ru.Budget)
// and rate limiting is on.
func (c *Container) admit(pri ru.Priority, parts ...*partition.Partition) error {
	if !c.e.opts.RateLimit {
		return nil
	}
	now := time.Now()
	for _, p := range parts {
		if ok, retry := p.Budget().Admit(now, pri); !ok {
			return fault.Throttle(retry)
		}
	}
	return nil
}

// spend charges a request of priority pri to the partitions it used, evenly.
func spend(charge float64, pri ru.Priority, parts ...*partition.Partition) {
	now := time.Now()
	for _, p := range parts {
		p.Budget().Spend(now, charge/float64(len(parts)), pri)
	}
}

// spendItem charges an item operation to its partition and its logical partition.
func spendItem(charge float64, pri ru.Priority, p *partition.Partition, e epk.EPK) {
	spend(charge, pri, p)
	p.RecordLogical(e, charge)
}
