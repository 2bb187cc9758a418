package engine

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/partita-db/partita/internal/distribution"
	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/tracing"
	"github.com/partita-db/partita/internal/value"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Forwarding, on a node of a cluster. A write runs on the replica that holds its partition's
// lease: here when this node's replica leads its group, otherwise on the node of the leader,
// which runs it through its own pipeline (admission and charges where the partition is led,
// as in the service) and answers with the results. A request that finds no leaseholder (an
// election, a lease changing hands) is tried again, here or there, until one takes it or
// distribution.DefaultTimeout passes; only refusals that applied nothing are tried again. A
// forwarded write waits at most distribution.DefaultCallTimeout for its answer: a leader cut
// off from its node (a network partition) would otherwise hold it until the client gives up,
// where its outcome is then reported unknown and the client's retry finds the leader elected
// since.
//
// What is forwarded is the operations, each with the client's item as sent and the index
// and unique key entries computed here. A patch (a Mutate operation) is a function, which
// does not travel: this node reads the item (a linearizable read of its own replica),
// patches it, and forwards a replace conditioned on the version it read, and starts again if
// another write came first.

// applyLed runs a write on the leaseholder of e's partition. A transaction's commit (txn set)
// that read this replica while it led the group, in the term it still leads, runs here as it
// is: every write to the logical partition in that term took the lock the transaction holds.
// Any other commit goes behind an Unchanged operation (checked), here or forwarded, and
// errTxnConflict says that the partition changed since the transaction read it: run the
// transaction again.
//
// A partition this node holds no replica of is written on its leader as its group's record
// names it, or, when that node does not lead it, on its other voters in turn (remote.go).
func (c *Container) applyLed(ctx context.Context, e epk.EPK, txn *txnRead, ops []partition.Operation) (executed, error) {
	p := c.routes.Load().lookup(e)
	rr, remote := c.remoteOf(e)
	if p == nil && !remote {
		return executed{}, errNotHere()
	}
	deadline := time.Now().Add(distribution.DefaultTimeout)
	for attempt := 0; ; attempt++ {
		var x executed
		var err error
		retry := false
		if p == nil {
			nodes := slices.DeleteFunc(c.holders(rr), func(n replication.NodeID) bool { return n == c.e.cluster.Node })
			if len(nodes) == 0 {
				err, retry = distribution.ErrNoHolder, true
			} else {
				x, retry, err = c.forward(ctx, nodes[attempt%len(nodes)], nil, e, txn, ops)
			}
			if retry && (attempt+1)%max(1, len(nodes)) == 0 {
				c.forgetHolders() // none led it: where are they now?
			}
		} else if leading, term := p.LeaderTerm(); leading {
			checked := txn != nil && !(txn.leading && txn.term == term)
			x, err = c.applyHere(e, nil, txn == nil, ru.PriorityOf(ctx), withUnchanged(txn, checked, ops)...)
			if checked {
				x, err = stripUnchanged(x, err, len(ops))
			}
			retry = partition.Retriable(err)
		} else if node := c.e.replicas.leaderOf(replica.Group(c.num, p.ID())); node != 0 {
			x, retry, err = c.forward(ctx, node, p, e, txn, ops)
		} else {
			err, retry = partition.ErrNotLeaseholder, true // an election: no leader known yet
		}
		if !retry || time.Now().After(deadline) {
			return x, err
		}
		time.Sleep(distribution.DefaultBackoff)
		p = c.routes.Load().lookup(e)
		if rr, remote = c.remoteOf(e); p == nil && !remote {
			return x, errNotHere()
		}
	}
}

// Ambiguous reports whether err leaves a write's outcome unknown: it may have been applied, or
// may still be, although the client was not told so (a leader lost its quorum, a node's
// answer was lost). A front end says so in its protocol's words, so that drivers do not send
// the write again as if nothing had been done.
func Ambiguous(err error) bool { return partition.Ambiguous(err) }

// ErrAmbiguous is the error of a write whose outcome is unknown (see Ambiguous).
var ErrAmbiguous = partition.ErrAmbiguous

// withUnchanged is ops behind a transaction's Unchanged check, when checked.
func withUnchanged(txn *txnRead, checked bool, ops []partition.Operation) []partition.Operation {
	if !checked {
		return ops
	}
	return append([]partition.Operation{{Kind: partition.Unchanged, LSN: txn.lsn}}, ops...)
}

// stripUnchanged is the outcome of n operations that ran behind an Unchanged check: without
// the check's result and charge, the check's failure as errTxnConflict, an operation's
// failure numbered as the caller numbers it.
func stripUnchanged(x executed, err error, n int) (executed, error) {
	var be *partition.BatchError
	if errors.As(err, &be) {
		if be.Index == 0 {
			if errors.Is(be.Err, fault.PreconditionFailed) {
				return x, errTxnConflict
			}
			return x, be.Err
		}
		if n == 1 {
			return x, be.Err
		}
		return x, &partition.BatchError{Index: be.Index - 1, Err: be.Err}
	}
	if err != nil {
		return x, err
	}
	if len(x.results) > 0 {
		x.results = x.results[1:]
	}
	if len(x.charges) > 0 {
		x.charges = x.charges[1:]
	}
	return x, nil
}

// forward sends ops to node and returns what it did; retry says that nothing was applied and
// the write may be tried again (the node did not hold the lease, or a patch lost a race).
func (c *Container) forward(ctx context.Context, node replication.NodeID, p *partition.Partition, e epk.EPK, txn *txnRead, ops []partition.Operation) (executed, bool, error) {
	x := executed{p: p}
	ctx, span := tracing.Start(ctx, "partita.forward", trace.SpanKindClient,
		attribute.Int64("partita.node", int64(node)), attribute.Int("partita.operations", len(ops)))
	defer span.End()
	req := nodecall.Request{Container: c.num, EPK: []byte(e), Admit: txn == nil, Trace: tracing.Inject(ctx), Low: ru.PriorityOf(ctx) == ru.Low}
	if txn != nil { // read elsewhere: checked where it commits
		req.Ops = append(req.Ops, nodecall.Op{Kind: uint8(partition.Unchanged), LSN: txn.lsn})
	}
	patched := false // a patch became a replace conditioned on the version read here
	for i, op := range ops {
		if op.Kind == partition.Mutate {
			var err error
			if p == nil {
				err = errNotHere() // a patch of a partition held elsewhere is run there (remote.go)
			} else {
				op, err = c.patchHere(p, ops[:i], op)
			}
			if err != nil {
				if len(ops) > 1 {
					err = &partition.BatchError{Index: i, Err: err}
				}
				return x, false, err
			}
			patched = patched || ops[i].IfMatch == ""
		}
		fop := nodecall.Op{Kind: uint8(op.Kind), ID: op.ID, IfMatch: op.IfMatch, Terms: op.Terms, Unique: op.Unique, LSN: op.LSN}
		if op.Item != nil {
			fop.Body = op.Item.Body()
		}
		req.Ops = append(req.Ops, fop)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), distribution.DefaultCallTimeout)
	defer cancel()
	ans, err := c.e.asker.Send(ctx, node, &req)
	switch {
	case errors.Is(err, distribution.ErrNotSent):
		return x, true, partition.ErrNotLeaseholder // that node is down: until a leader elsewhere
	case errors.Is(err, nodecall.ErrCodec):
		return x, false, fault.New(fault.Internal, "A forwarded write: %w", err)
	case err != nil:
		// It may have been applied there before the answer was lost.
		return x, false, partition.ErrAmbiguous
	}
	x.charge, x.charges = ans.Charge, ans.Charges
	results := ans.Results
	if txn != nil { // the Unchanged operation first: its result and charge are not the caller's
		if len(x.charges) > 0 {
			x.charges = x.charges[1:]
		}
		if len(results) > 0 {
			results = results[1:]
		}
		if ans.Index == 0 && ans.Err != nil && ans.Err.Kind == fault.PreconditionFailed {
			return x, false, errTxnConflict
		}
		if ans.Index > 0 {
			ans.Index--
		}
	}
	if ans.Err != nil {
		err := error(ans.Err)
		if ans.Index >= 0 && len(ops) > 1 {
			err = &partition.BatchError{Index: ans.Index, Err: ans.Err}
		}
		retry := ans.Retry || patched && ans.Err.Kind == fault.PreconditionFailed
		return x, retry, err
	}
	x.results = make([]partition.Result, len(results))
	for i, r := range results {
		x.results[i] = partition.Result{Doc: partition.Doc{JSON: r.JSON, LSN: r.LSN}, Created: r.Created, PrevBytes: r.PrevBytes, IndexTerms: r.IndexTerms}
	}
	return x, false, nil
}

// patchHere makes a patch a replace of the version this node reads, conditioned on it: a
// linearizable read of its own replica. A patch of an item that an earlier operation of the
// same batch writes would need that write's outcome, which only the leaseholder knows.
func (c *Container) patchHere(p *partition.Partition, before []partition.Operation, op partition.Operation) (partition.Operation, error) {
	for _, b := range before {
		if b.ID == op.ID && b.EPK == op.EPK {
			return op, errNotInCluster("Patching an item that an earlier operation of the same batch writes")
		}
	}
	cur, err := p.Read(op.EPK, op.ID, nil)
	if err != nil {
		return op, err
	}
	if op.IfMatch != "" && op.IfMatch != cur.ETag() {
		return op, fault.New(fault.PreconditionFailed, "Operation cannot be performed because one of the specified precondition is not met: the item's etag is not %q", op.IfMatch)
	}
	item, e, terms, err := op.Mutate(cur.JSON)
	if err != nil {
		return op, err
	}
	return partition.Operation{Kind: partition.Replace, EPK: e, ID: op.ID, Item: item, IfMatch: cur.ETag(),
		Terms: terms, TermsPolicy: c.policy(), Unique: c.unique.Entries(item.Value)}, nil
}

// errTxnConflict is a transaction's commit refused because the partition changed since the
// transaction read it: nothing was written, and the transaction runs again (retryConflicts).
var errTxnConflict = fault.New(fault.Unavailable, "The transaction conflicted with other writes to its partition too many times in a row; retry the request")

// maxTxnAttempts bounds how many times a transaction runs before its conflicts are returned.
const maxTxnAttempts = 8

// retryConflicts runs a transaction until it does not conflict (errTxnConflict), at most
// maxTxnAttempts times, and returns the charges of all its runs.
func retryConflicts(run func() (float64, error)) (float64, error) {
	total := 0.0
	for attempt := 1; ; attempt++ {
		charge, err := run()
		total += charge
		if err != errTxnConflict || attempt == maxTxnAttempts {
			return total, err
		}
		time.Sleep(time.Duration(attempt) * distribution.DefaultBackoff)
	}
}

// ServeCall runs a request another node sent (its Cluster.Call) and returns the answer, in a
// span of the request's trace, logging what it did under the request's activity id.
func (e *Engine) ServeCall(req nodecall.Request) nodecall.Answer {
	// The nodes' own upkeep, several times a second between every two nodes: no client's
	// request, so neither counted, traced nor logged as one.
	switch {
	case req.Figures:
		return nodecall.Answer{Index: -1, Figures: e.localFigures()}
	case req.Shares != nil:
		return nodecall.Answer{Index: -1, Shares: e.serveShares(req.Shares)}
	}
	e.served.Add(1)
	ctx := tracing.Extract(context.Background(), req.Trace)
	if req.Low {
		ctx = ru.WithPriority(ctx, ru.Low) // admitted here as where it came from
	}
	ctx, span := tracing.Start(ctx, "partita.forwarded", trace.SpanKindServer,
		attribute.Int64("partita.container", int64(req.Container)), attribute.Int("partita.operations", len(req.Ops)))
	defer span.End()
	ans := e.serveRequest(ctx, req)
	activity := tracing.Activity(ctx)
	switch {
	case ans.Err == nil:
		e.log.Debug("forwarded request served", "container", req.Container, "operations", len(req.Ops), "activity", activity)
	case ans.Err.Kind == fault.Internal:
		span.SetStatus(codes.Error, ans.Err.Message)
		e.log.Error("forwarded request failed", "container", req.Container, "err", ans.Err.Message, "activity", activity)
	default:
		span.SetAttributes(attribute.String("partita.refused", ans.Err.Kind.String()), attribute.Bool("partita.retry", ans.Retry))
		e.log.Debug("forwarded request refused", "container", req.Container, "err", ans.Err.Message, "retry", ans.Retry, "activity", activity)
	}
	return ans
}

// failedForward is the answer to a forwarded request that failed with err.
func failedForward(err error) nodecall.Answer {
	ans := nodecall.Answer{Index: -1, Retry: partition.Retriable(err)}
	var be *partition.BatchError
	if errors.As(err, &be) {
		ans.Index, err = be.Index, be.Err
	}
	ans.Err = fault.From(err)
	return ans
}

func (e *Engine) serveRequest(ctx context.Context, req nodecall.Request) nodecall.Answer {
	fail := failedForward
	c, err := missFresh(e, func() (*Container, error) { return e.containerNumbered(req.Container) })
	if err != nil {
		return fail(err)
	}
	switch {
	case req.Split != nil:
		return e.serveSplit(c, req.Split)
	case req.Call != nil:
		return e.serveCall(ctx, c, req.Call)
	case req.Read != nil:
		return e.serveRead(c, req.Read, ru.PriorityOf(ctx))
	}
	ek := epk.EPK(req.EPK)
	ops := make([]partition.Operation, len(req.Ops))
	for i, f := range req.Ops {
		op := partition.Operation{Kind: partition.OpKind(f.Kind), EPK: ek, ID: f.ID, IfMatch: f.IfMatch, Terms: f.Terms, Unique: f.Unique, LSN: f.LSN}
		if f.Terms != nil {
			op.TermsPolicy = c.policy()
		}
		if f.Body != nil {
			item, err := c.forwardedItem(f.Body, ek)
			if err != nil {
				return fail(err)
			}
			op.Item = item
		}
		ops[i] = op
	}
	if p := c.routes.Load().lookup(ek); p == nil || !p.Leading() {
		return fail(partition.ErrNotLeaseholder)
	}
	c.locks.lockWrite(ek)
	defer c.locks.unlockWrite(ek)
	x, err := c.applyHere(ek, nil, req.Admit, ru.PriorityOf(ctx), ops...)
	if err != nil {
		ans := fail(err)
		ans.Charge = x.charge
		return ans
	}
	ans := nodecall.Answer{Index: -1, Charge: x.charge, Charges: x.charges}
	for i := range ops {
		r := x.result(i)
		ans.Results = append(ans.Results, nodecall.Result{JSON: r.Doc.JSON, LSN: r.Doc.LSN, Created: r.Created, PrevBytes: r.PrevBytes, IndexTerms: r.IndexTerms})
	}
	return ans
}

// forwardedItem reads a forwarded item's body back, and checks that it belongs to the logical
// partition e it was sent for. A table's row does not say: the CQL front end places it by its
// key's token.
func (c *Container) forwardedItem(body []byte, e epk.EPK) (*document.Item, error) {
	if c.IsTable() {
		v, err := value.Parse(body)
		if err != nil {
			return nil, fault.New(fault.BadRequest, "A forwarded row that is not JSON: %v", err)
		}
		return document.Row(v)
	}
	item, key, err := document.Parse(body, c.paths)
	if err != nil {
		return nil, err
	}
	if ke, err := c.EPK(key); err != nil || ke != e {
		return nil, fault.New(fault.BadRequest, "A forwarded item that is not in the logical partition it was sent for")
	}
	return item, nil
}

// containerNumbered is the open container numbered num.
func (e *Engine) containerNumbered(num uint32) (*Container, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if c := e.containerByNum(num); c != nil {
		return c, nil
	}
	return nil, fault.New(fault.NotFound, "No container numbered %d", num)
}
