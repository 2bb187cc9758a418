package engine

import (
	"context"
	"errors"
	"slices"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/tracing"
)

// Partitions held on other nodes. A cluster that places each partition on some of its nodes
// (Cluster.Replicas) leaves every node without a replica of most partitions: the routing
// table names those ranges (routing.remote), and what a request asks of one is done by a node
// that holds it.
//
//   - A call on one logical partition that reads (a point read, a patch, a transactional
//     batch, a stored procedure, a write with triggers) and a page of the change feed are
//     delegated whole (remoteCalls, the remote side of calls.go's seam): the holding node
//     runs the same method on its own container and answers with its result (its writes
//     going on to the partition's leader from there).
//   - A plain write, and the commit of a CQL transaction, go to the partition's leader as
//     any forwarded write does (applyLed); a CQL transaction reads the holder's rows first.
//   - A query, the read feed and a CQL scan read the ranges they cannot read here through
//     remotePart: the holding node scans its replica (after a ReadIndex, as every read) and
//     sends the items a batch at a time; the query runs and merges here as over local
//     partitions.
//
// Where a partition's replicas are is its group's record (Cluster.Groups), which its leader
// keeps; a node asked for a range it no longer holds answers so (Moved), and the caller reads
// the record again and asks another. Whom to ask, and when to ask again, is package
// distribution's (its Directory and Asker); this file says what to ask, and which records
// name the holders of a range's keys.

// remoteRange is the range of a partition this node holds no replica of.
type remoteRange struct {
	id uint32
	r  epk.Range
}

// remoteOf is the range held on other nodes that owns e, when there is one.
func (c *Container) remoteOf(e epk.EPK) (remoteRange, bool) {
	rt := c.routes.Load()
	if len(rt.remote) == 0 {
		return remoteRange{}, false
	}
	return rt.remoteAt(e)
}

// holders are the nodes to ask for range rr of c, its leader first (distribution.Directory):
// from its group's record, or, for a range whose leader has not recorded it yet (a split's
// child), its parent's, or else the replicas it was created with. A range the catalog no
// longer names split since (this node's replica of it has not applied the split, or missed
// it): a child's holders hold its keys now.
func (c *Container) holders(rr remoteRange) []replication.NodeID {
	ids := []uint32{rr.id}
	var members []replication.Member
	c.e.mu.RLock()
	for _, r := range c.rec.Ranges {
		if r.ID == rr.id {
			ids, members = append([]uint32{rr.id}, reversed(r.Parents)...), r.Members
			break
		}
		if len(ids) == 1 && slices.Contains(r.Parents, rr.id) {
			ids, members = append(ids, r.ID), r.Members
		}
	}
	c.e.mu.RUnlock()
	gs := make([]replication.GroupID, len(ids))
	for i, id := range ids {
		gs[i] = replica.Group(c.num, id)
	}
	var created []replication.NodeID
	for _, m := range members {
		created = append(created, m.Node)
	}
	return c.e.dir.Holders(c.e.stopped, gs, created)
}

func reversed(ids []uint32) []uint32 {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

// forgetHolders drops the cached records of c's groups: a node one named did not hold its
// partition (a move or a split), and the others may be as old.
func (c *Container) forgetHolders() {
	c.e.dir.Forget(func(g replication.GroupID) bool { return replica.ContainerOf(g) == c.num })
}

// errNotHere: the partition's replica left this node while a request used it.
func errNotHere() error {
	return fault.New(fault.Unavailable, "The partition's replica moved off this node during the request; retry it")
}

// ask sends req, about range rr, to a node that holds it, and returns the answer
// (distribution.Asker.Ask: the holders in turn, until one answers). A session read carries
// what this node showed of the partition among its tokens, and what the other node showed,
// this node showed its client (consistency.go).
func (c *Container) ask(ctx context.Context, rr remoteRange, req *nodecall.Request) (nodecall.Answer, error) {
	if req.Read != nil {
		req.Read.Consistency = consistencyToWire(c.withSeen(consistencyFromWire(req.Read.Consistency), rr.id))
	}
	if req.Call != nil {
		req.Call.Consistency = consistencyToWire(c.withSeen(consistencyFromWire(req.Call.Consistency), rr.id))
	}
	req.Container = c.num
	req.Trace = tracing.Inject(ctx)
	req.Low = req.Low || ru.PriorityOf(ctx) == ru.Low
	ans, err := c.e.asker.Ask(ctx, func() []replication.NodeID { return c.holders(rr) }, c.forgetHolders, req)
	if r := ans.Read; r != nil {
		c.saw(rr.id, r.LSN)
	}
	if a := ans.Call; a != nil {
		c.saw(rr.id, a.Item.LSN)
		if a.Feed != nil {
			c.saw(rr.id, a.Feed.LSN)
		}
		if a.Procedure != nil {
			c.saw(rr.id, a.Procedure.LSN)
		}
	}
	return ans, err
}

// delegate runs call on a node that holds rr.
func (c *Container) delegate(ctx context.Context, rr remoteRange, call *nodecall.Call) (nodecall.CallAnswer, error) {
	ans, err := c.ask(ctx, rr, &nodecall.Request{Call: call})
	if err != nil {
		return nodecall.CallAnswer{Item: nodecall.ItemResult{PartitionID: rr.id}}, err
	}
	var out nodecall.CallAnswer
	if ans.Call != nil {
		out = *ans.Call
	}
	if ans.Err != nil {
		return out, ans.Err
	}
	return out, nil
}

// remoteCalls delegates the calls on a partition held on other nodes, rr, to a node that
// holds it: the other side of the seam from localCalls (calls.go).
type remoteCalls struct {
	c  *Container
	rr remoteRange
}

// item runs an item call.
func (r remoteCalls) item(ctx context.Context, call *nodecall.Call) (ItemResult, error) {
	ans, err := r.c.delegate(ctx, r.rr, call)
	return ItemResult(ans.Item), err
}

func (r remoteCalls) read(ctx context.Context, dst []byte, _ epk.EPK, key epk.Key, id string, rc ReadConsistency, _ bool) (ItemResult, error) {
	res, err := r.item(ctx, &nodecall.Call{Method: nodecall.CallRead, Key: key, ID: id, Consistency: consistencyToWire(rc)})
	res.Doc = append(dst, res.Doc...)
	return res, err
}

func (r remoteCalls) writeTriggered(kind OpKind, id string, src document.Source, o ItemOptions) (ItemResult, error) {
	return r.item(o.ctx(), &nodecall.Call{Method: nodecall.CallWrite, Kind: string(kind), Key: o.PartitionKey, ID: id, Body: src.JSON(), IfMatch: o.IfMatch,
		IndexingDirective: o.IndexingDirective, PreTriggers: o.PreTriggers, PostTriggers: o.PostTriggers, Headers: o.Headers})
}

func (r remoteCalls) deleteTriggered(_ epk.EPK, key epk.Key, id string, o ItemOptions) (ItemResult, error) {
	return r.item(o.ctx(), &nodecall.Call{Method: nodecall.CallDelete, Key: key, ID: id, IfMatch: o.IfMatch,
		PreTriggers: o.PreTriggers, PostTriggers: o.PostTriggers, Headers: o.Headers})
}

func (r remoteCalls) patch(_ epk.EPK, key epk.Key, id string, p Patch, o ItemOptions) (ItemResult, error) {
	return r.item(o.ctx(), &nodecall.Call{Method: nodecall.CallPatch, Key: key, ID: id, IfMatch: o.IfMatch, Patch: patchToWire(p)})
}

func (r remoteCalls) procedure(_ Script, _ epk.EPK, id string, args []byte, o ProcedureOptions) (ProcedureResult, error) {
	ans, err := r.c.delegate(o.ctx(), r.rr, &nodecall.Call{Method: nodecall.CallProcedure, Key: o.PartitionKey, ID: id, Args: args, Log: o.Log, Headers: o.Headers})
	if ans.Procedure == nil {
		return ProcedureResult{PartitionID: r.rr.id}, err
	}
	return ProcedureResult(*ans.Procedure), err
}

func (r remoteCalls) feed(q FeedQuery) (FeedPage, error) {
	ans, err := r.c.delegate(ru.WithPriority(context.Background(), q.Priority), r.rr, &nodecall.Call{Method: nodecall.CallFeed,
		Feed:        &nodecall.FeedQuery{From: q.Range.Min.Hex(), To: q.Range.Max.Hex(), Start: nodecall.FeedStart(q.Start), AllVersions: q.AllVersions, Max: q.Max},
		Consistency: consistencyToWire(q.Consistency)})
	if ans.Feed == nil {
		return FeedPage{Partition: r.rr.id}, err
	}
	return feedPageFromWire(ans.Feed), err
}

func (r remoteCalls) batch(ctx context.Context, _ epk.EPK, key epk.Key, ops []BatchOp) ([]OpResult, int, error) {
	call := &nodecall.Call{Method: nodecall.CallBatch, Key: key}
	for _, op := range ops {
		w := nodecall.BatchOp{Kind: string(op.Kind), ID: op.ID, IfMatch: op.IfMatch}
		switch op.Kind {
		case OpCreate, OpUpsert, OpReplace:
			w.Body = op.Item.JSON()
		case OpPatch:
			w.Patch = patchToWire(op.Patch)
		}
		call.Batch = append(call.Batch, w)
	}
	ans, err := r.c.delegate(ctx, r.rr, call)
	if err != nil {
		return nil, -1, err
	}
	results := make([]OpResult, len(ans.Batch))
	for i, w := range ans.Batch {
		results[i] = OpResult{Created: w.Created, Charge: w.Charge, ETag: w.ETag, Doc: w.Doc}
		if w.Err != nil {
			results[i].Err = w.Err
		}
	}
	return results, ans.Failed, nil
}

// serveCall runs a delegated call on c, whose partition this node must hold.
func (e *Engine) serveCall(ctx context.Context, c *Container, call *nodecall.Call) nodecall.Answer {
	var ans nodecall.CallAnswer
	var err error
	held := func(key epk.Key) bool {
		ek, kerr := c.EPK(key)
		return kerr != nil || c.routes.Load().lookup(ek) != nil
	}
	if call.Method != nodecall.CallWrite && call.Method != nodecall.CallFeed && !held(call.Key) {
		return nodecall.Answer{Index: -1, Moved: true}
	}
	switch call.Method {
	case nodecall.CallRead:
		var r ItemResult
		r, err = c.readItem(ctx, nil, call.Key, call.ID, consistencyFromWire(call.Consistency), false)
		ans.Item = nodecall.ItemResult(r)
	case nodecall.CallWrite:
		src := document.FromJSON(call.Body)
		if _, ek, perr := c.parse(src, call.Key); perr == nil && c.routes.Load().lookup(ek) == nil {
			return nodecall.Answer{Index: -1, Moved: true}
		}
		var r ItemResult
		r, err = c.WriteItem(OpKind(call.Kind), call.ID, src, ItemOptions{PartitionKey: call.Key, IfMatch: call.IfMatch,
			IndexingDirective: call.IndexingDirective, PreTriggers: call.PreTriggers, PostTriggers: call.PostTriggers, Headers: call.Headers, Context: ctx})
		ans.Item = nodecall.ItemResult(r)
	case nodecall.CallDelete:
		var r ItemResult
		r, err = c.DeleteItem(call.Key, call.ID, ItemOptions{IfMatch: call.IfMatch, PreTriggers: call.PreTriggers, PostTriggers: call.PostTriggers, Headers: call.Headers, Context: ctx})
		ans.Item = nodecall.ItemResult(r)
	case nodecall.CallPatch:
		var p Patch
		if call.Patch != nil {
			if p, err = patchFromWire(call.Patch); err != nil {
				break
			}
		}
		var r ItemResult
		r, err = c.PatchItem(call.Key, call.ID, p, ItemOptions{IfMatch: call.IfMatch, Context: ctx})
		ans.Item = nodecall.ItemResult(r)
	case nodecall.CallBatch:
		ops := make([]BatchOp, len(call.Batch))
		for i, w := range call.Batch {
			ops[i] = BatchOp{Kind: OpKind(w.Kind), ID: w.ID, IfMatch: w.IfMatch, Item: document.FromJSON(w.Body)}
			if w.Patch != nil {
				if ops[i].Patch, err = patchFromWire(w.Patch); err != nil {
					break
				}
			}
		}
		if err != nil {
			break
		}
		var results []OpResult
		results, ans.Failed, err = c.ExecuteBatch(ctx, call.Key, ops)
		for _, r := range results {
			w := nodecall.OpResult{Created: r.Created, Charge: r.Charge, ETag: r.ETag, Doc: r.Doc}
			if r.Err != nil {
				w.Err = fault.From(r.Err)
			}
			ans.Batch = append(ans.Batch, w)
		}
	case nodecall.CallFeed:
		f := call.Feed
		if f == nil {
			err = fault.New(fault.BadRequest, "A delegated change feed read without its query")
			break
		}
		q := FeedQuery{Start: FeedStart(f.Start), AllVersions: f.AllVersions, Max: f.Max, Consistency: consistencyFromWire(call.Consistency), Priority: ru.PriorityOf(ctx), delegated: true}
		lo, err1 := epk.ParseHex(f.From)
		hi, err2 := epk.ParseHex(f.To)
		if err = errors.Join(err1, err2); err != nil {
			err = fault.New(fault.BadRequest, "A delegated change feed read with a malformed range: %v", err)
			break
		}
		q.Range = epk.Range{Min: lo, Max: hi}
		if c.routes.Load().lookup(lo) == nil {
			return nodecall.Answer{Index: -1, Moved: true}
		}
		var page FeedPage
		page, err = c.ChangeFeed(q)
		ans.Feed = feedPageToWire(page)
	case nodecall.CallProcedure:
		var r ProcedureResult
		r, err = c.ExecuteProcedure(call.ID, call.Args, ProcedureOptions{PartitionKey: call.Key, Log: call.Log, Headers: call.Headers, Context: ctx})
		ans.Procedure = (*nodecall.ProcedureResult)(&r)
	default:
		err = fault.New(fault.BadRequest, "A delegated call of a kind this release does not know (%v)", call.Method)
	}
	out := nodecall.Answer{Index: -1, Call: &ans}
	if err != nil {
		out.Err = fault.From(err)
	}
	return out
}

// remoteBatch bounds what one answer to a nodecall.Read holds: a page of a query stops early
// more often than not, so a batch is small next to a partition.
const (
	remoteBatchItems = 256
	remoteBatchBytes = 1 << 20
)

// serveRead reads a batch of c's partition for another node's query.
func (e *Engine) serveRead(c *Container, rd *nodecall.Read, pri ru.Priority) nodecall.Answer {
	ranges := make([]epk.Range, len(rd.Ranges))
	for i, r := range rd.Ranges {
		lo, err1 := epk.ParseHex(r[0])
		hi, err2 := epk.ParseHex(r[1])
		if err := errors.Join(err1, err2); err != nil {
			return failedForward(fault.New(fault.BadRequest, "A remote read with a malformed range: %v", err))
		}
		ranges[i] = epk.Range{Min: lo, Max: hi}
	}
	var p *partition.Partition
	split := false
	for _, q := range c.routes.Load().parts {
		if q.ID() == rd.Partition {
			p = q
		}
		split = split || slices.ContainsFunc(ranges, func(r epk.Range) bool { qr := q.Range(); return qr.Min < r.Max && r.Min < qr.Max })
	}
	switch {
	case p == nil && split:
		// Split here since the asking node's routing was made: its query fails with 410, and
		// the client reads the ranges again (by then the asking node has the children).
		return failedForward(fault.RangeGone())
	case p == nil:
		return nodecall.Answer{Index: -1, Moved: true}
	}
	// Admitted and charged here, where the partition is held, for what this batch reads: the
	// asking node charges the client, and spends on the budgets of its own partitions only.
	if err := c.admit(pri, p); err != nil {
		return failedForward(err)
	}
	rc := consistencyFromWire(rd.Consistency)
	rdr := c.reader(p, rc)
	var ans nodecall.ReadAnswer
	bytes := 0
	f := func(d partition.Doc) bool {
		if len(ans.Docs) == remoteBatchItems || bytes >= remoteBatchBytes {
			ans.More = true
			return false
		}
		ans.Docs = append(ans.Docs, nodecall.Doc{Seq: d.Seq, JSON: slices.Clone(d.JSON)})
		bytes += len(d.JSON)
		return true
	}
	var err error
	switch {
	case rd.Get == nil && rd.Rows == nil && len(ranges) == 0:
		err = rdr.Await() // the partition's LSN only
	case rd.Count:
		ans.Count, ans.Counted = countOf(rdr, p, ranges)
	case rd.Get != nil:
		var e epk.EPK
		if e, err = epk.ParseHex(rd.Get.EPK); err != nil {
			return failedForward(fault.New(fault.BadRequest, "A remote read with a malformed EPK: %v", err))
		}
		var d partition.Doc
		if d, err = rdr.Read(e, rd.Get.ID, nil); err == nil {
			ans.Docs = append(ans.Docs, nodecall.Doc{JSON: d.JSON})
		} else if errors.Is(err, fault.NotFound) {
			err = nil
		}
	case rd.Rows != nil:
		lo, hi, perr := rowPositions(rd.Rows)
		if perr != nil {
			return failedForward(fault.New(fault.BadRequest, "A remote read with a malformed row position: %v", perr))
		}
		err = rdr.ScanItems(lo, hi, rd.Rows.Reverse, func(d partition.Doc) bool {
			if len(ans.Docs) == remoteBatchItems || bytes >= remoteBatchBytes {
				ans.More = true
				return false
			}
			ans.Docs = append(ans.Docs, nodecall.Doc{JSON: slices.Clone(d.JSON), EPK: d.EPK().Hex(), ID: d.ID()})
			bytes += len(d.JSON)
			return true
		})
	case rd.Index == nil && rd.All:
		err = rdr.Scan(ranges, rd.Start, f)
	case rd.Index == nil:
		err = rdr.ScanIndexed(ranges, rd.Start, f)
	default:
		err = scanIndex(rdr, p, (*query.IndexRange)(rd.Index), ranges, rd.Start, f)
	}
	if err != nil {
		return failedForward(err)
	}
	ans.LSN = p.Stats().LSN // after the read: a session token at least as far on as what it saw
	spend(ru.Query(len(ans.Docs), bytes, 0, 1)*rc.readFactor(), pri, p)
	return nodecall.Answer{Index: -1, Read: &ans}
}

// remotePart is a partition a query reads on another node.
type remotePart struct {
	c  *Container
	rr remoteRange
	// pri is the priority of the request it reads for, which the holding node admits.
	pri ru.Priority
	// lsn is the partition's LSN as the last batch read said, for the session token.
	lsn uint64
}

// read calls f with the items of rp's partition in ranges from start, as the holding node
// sends them for rd (its Index and All), until f returns false.
func (rp *remotePart) read(rd *nodecall.Read, ranges []epk.Range, start uint64, f func(partition.Doc) bool) error {
	rd.Start = start
	for _, r := range ranges {
		rd.Ranges = append(rd.Ranges, [2]string{r.Min.Hex(), r.Max.Hex()})
	}
	for {
		a, err := rp.ask(rd)
		if err != nil {
			return err
		}
		for _, d := range a.Docs {
			if !f(partition.Doc{Seq: d.Seq, JSON: d.JSON}) {
				return nil
			}
			rd.Start = d.Seq + 1
		}
		if !a.More {
			return nil
		}
	}
}

func rowPositions(r *nodecall.Rows) (lo, hi partition.ItemPos, err error) {
	lo.ID, hi.ID = r.LoID, r.HiID
	var err1, err2 error
	lo.EPK, err1 = epk.ParseHex(r.LoEPK)
	hi.EPK, err2 = epk.ParseHex(r.HiEPK)
	return lo, hi, errors.Join(err1, err2)
}

// ask sends rd for rp's partition and returns the answer's batch.
func (rp *remotePart) ask(rd *nodecall.Read) (*nodecall.ReadAnswer, error) {
	rd.Partition = rp.rr.id
	ans, err := rp.c.ask(ru.WithPriority(context.Background(), rp.pri), rp.rr, &nodecall.Request{Read: rd})
	if err != nil {
		return nil, err
	}
	if ans.Err != nil {
		return nil, ans.Err
	}
	if ans.Read == nil {
		return nil, fault.New(fault.Internal, "A node answered a remote read with no items")
	}
	rp.lsn = ans.Read.LSN
	return ans.Read, nil
}

// lsnNow is the partition's LSN as a node that holds it has applied it (after a ReadIndex):
// a transaction's starting point.
func (rp *remotePart) lsnNow() (uint64, error) {
	a, err := rp.ask(&nodecall.Read{})
	if err != nil {
		return 0, err
	}
	return a.LSN, nil
}

// get reads item id of the logical partition e; nil when there is none.
func (rp *remotePart) get(e epk.EPK, id string) ([]byte, error) {
	a, err := rp.ask(&nodecall.Read{Get: &nodecall.Get{EPK: e.Hex(), ID: id}})
	if err != nil || len(a.Docs) == 0 {
		return nil, err
	}
	return a.Docs[0].JSON, nil
}

// rows calls fn with the rows from lo (inclusive) to hi (exclusive), in order or in reverse,
// as the holding node sends them, until fn returns false.
func (rp *remotePart) rows(rc ReadConsistency, lo, hi partition.ItemPos, reverse bool, fn func(e epk.EPK, id string, doc []byte) bool) error {
	for {
		a, err := rp.ask(&nodecall.Read{Rows: &nodecall.Rows{LoEPK: lo.EPK.Hex(), LoID: lo.ID, HiEPK: hi.EPK.Hex(), HiID: hi.ID, Reverse: reverse}, Consistency: consistencyToWire(rc)})
		if err != nil {
			return err
		}
		for _, d := range a.Docs {
			e, err := epk.ParseHex(d.EPK)
			if err != nil {
				return fault.New(fault.Internal, "A node sent a row with a malformed EPK: %w", err)
			}
			if !fn(e, d.ID, d.JSON) {
				return nil
			}
			if reverse {
				hi = partition.ItemPos{EPK: e, ID: d.ID}
			} else {
				lo = partition.ItemPos{EPK: e, ID: d.ID + "\x00"}
			}
		}
		if !a.More {
			return nil
		}
	}
}

// count is the item count of rp's partition as its holder keeps it, when ranges cover the
// partition and the count is exact there; false otherwise (the items are read instead).
func (rp *remotePart) count(ranges []epk.Range) (int64, bool) {
	rd := &nodecall.Read{Count: true}
	for _, r := range ranges {
		rd.Ranges = append(rd.Ranges, [2]string{r.Min.Hex(), r.Max.Hex()})
	}
	a, err := rp.ask(rd)
	if err != nil || !a.Counted {
		return 0, false
	}
	return a.Count, true
}
