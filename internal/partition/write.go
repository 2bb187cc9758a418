package partition

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/rid"
	"github.com/partita-db/partita/internal/status"
	"github.com/partita-db/partita/internal/storage"
)

// WriteKind is what a Write does.
type WriteKind uint8

const (
	Create  WriteKind = iota + 1 // fails with 409 if the item exists
	Replace                      // fails with 404 if it does not
	Upsert                       // creates or replaces
	Delete                       // fails with 404 if it does not exist
)

// Write is one item operation requested of a partition.
type Write struct {
	Kind WriteKind
	EPK  epk.EPK // the item's logical partition
	ID   string
	Item *document.Item // the new content; nil for Delete
	// IfMatch, when not empty, is the etag (unquoted) the current version must have.
	IfMatch string
}

// Result is the outcome of one Write.
type Result struct {
	Doc       Doc  // the version written; for Delete only its LSN
	Created   bool // the write created the item (Create, or Upsert of a new id)
	PrevBytes int  // size of the version replaced or deleted, 0 if none
}

// BatchError says which write of a multi-write Apply failed; none of them was applied.
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("operation %d: %v", e.Index, e.Err) }
func (e *BatchError) Unwrap() error { return e.Err }

// maxGroup bounds how many requests share one synced batch.
const maxGroup = 256

type request struct {
	writes  []Write
	results []Result
	err     error
	done    chan struct{}
}

// Apply performs writes as one atomic command: all of them are applied, durably, or none is.
// It returns once the command is synced or has failed. When several writes are given, a
// failure is a *BatchError naming the one that failed.
func (p *Partition) Apply(writes ...Write) ([]Result, error) {
	r := &request{writes: writes, done: make(chan struct{})}
	p.closeMu.RLock()
	if p.closed {
		p.closeMu.RUnlock()
		return nil, status.Unavailable("The partition is shutting down; retry the request")
	}
	p.queue <- r
	p.closeMu.RUnlock()
	<-r.done
	return r.results, r.err
}

// run is the partition's writer: it owns st, the state of everything committed.
func (p *Partition) run(st state) {
	defer close(p.stopped)
	g := &group{docs: map[string][]byte{}, logical: map[string]counts{}}
	reqs := make([]*request, 0, maxGroup)
	for r := range p.queue {
		reqs = append(reqs[:0], r)
	fill:
		for len(reqs) < maxGroup {
			select {
			case r, ok := <-p.queue:
				if !ok {
					break fill
				}
				reqs = append(reqs, r)
			default:
				break fill
			}
		}
		st = p.commit(st, g, reqs)
		for _, r := range reqs {
			close(r.done)
		}
	}
}

// group is what the commands decided so far in one group changed, so that later commands of
// the group see it before it reaches storage.
type group struct {
	docs    map[string][]byte // doc key -> stored value, nil when deleted
	logical map[string]counts // EPK -> logical partition statistics
}

// commit decides every request of the group in order, applies the successful ones to one
// batch, syncs it, and returns the new state (the old one if the sync failed).
func (p *Partition) commit(st state, g *group, reqs []*request) state {
	clear(g.docs)
	clear(g.logical)
	b := p.db.NewBatch()
	defer b.Close()
	next := st
	now := time.Now().Unix()
	for _, r := range reqs {
		cmd, results, err := p.decide(next, g, r.writes, now)
		if err == nil {
			err = p.apply(b, cmd)
		}
		if err != nil {
			r.err = err
			continue
		}
		g.remember(p, cmd)
		next = cmd.After
		r.results = results
	}
	if next.LSN == st.LSN {
		return st // every request failed its checks; nothing to write
	}
	if err := b.Commit(storage.Sync); err != nil {
		for _, r := range reqs {
			if r.err == nil {
				r.results, r.err = nil, status.Unavailable("Storage failed to commit the write: %v", err)
			}
		}
		return st
	}
	p.published.Store(&next)
	return next
}

func (g *group) remember(p *Partition, c *Command) {
	for i := range c.Ops {
		op := &c.Ops[i]
		g.docs[string(storage.DocKey(nil, p.container, op.EPK, op.ID))] = op.Value
		g.logical[op.EPK] = op.Logical
	}
}

// current is an item's latest version as seen by a command being decided: its own earlier
// ops first, then earlier commands of the group, then storage.
func (p *Partition) current(g *group, ops []Op, e, id string) (value []byte, err error) {
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].EPK == e && ops[i].ID == id {
			return ops[i].Value, nil
		}
	}
	var buf [256]byte
	key := storage.DocKey(buf[:0], p.container, e, id)
	if v, ok := g.docs[string(key)]; ok {
		return v, nil
	}
	v, err := p.db.GetCopy(nil, key)
	if storage.IsNotFound(err) {
		return nil, nil
	}
	return v, err
}

// logicalNow is a logical partition's statistics as seen by a command being decided.
func (p *Partition) logicalNow(g *group, ops []Op, e string) (counts, error) {
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].EPK == e {
			return ops[i].Logical, nil
		}
	}
	if c, ok := g.logical[e]; ok {
		return c, nil
	}
	return p.logical(nil, e)
}

// decide turns writes into a command against state st, or fails without side effects.
func (p *Partition) decide(st state, g *group, writes []Write, now int64) (*Command, []Result, error) {
	cmd := &Command{LSN: st.LSN + 1, Ops: make([]Op, 0, len(writes)), After: st}
	cmd.After.LSN = cmd.LSN
	results := make([]Result, len(writes))
	for i := range writes {
		op, res, err := p.decideOne(g, cmd, i, &writes[i], now)
		if err != nil {
			if len(writes) > 1 {
				err = &BatchError{Index: i, Err: err}
			}
			return nil, nil, err
		}
		cmd.Ops = append(cmd.Ops, op)
		results[i] = res
	}
	return cmd, results, nil
}

func (p *Partition) decideOne(g *group, cmd *Command, index int, w *Write, now int64) (Op, Result, error) {
	e := string(w.EPK)
	if !p.rng.Contains(w.EPK) {
		return Op{}, Result{}, status.Internal("item routed to partition %d, which owns %v", p.id, p.rng)
	}
	cur, err := p.current(g, cmd.Ops, e, w.ID)
	if err != nil {
		return Op{}, Result{}, status.Internal("reading item: %v", err)
	}
	lp, err := p.logicalNow(g, cmd.Ops, e)
	if err != nil {
		return Op{}, Result{}, status.Internal("reading partition statistics: %v", err)
	}
	exists := cur != nil
	var curRID [docRIDLen]byte
	var curLSN uint64
	var curSize int
	if exists {
		var json []byte
		if curRID, curLSN, json, err = decodeValue(cur); err != nil {
			return Op{}, Result{}, status.Internal("%v", err)
		}
		curSize = len(json)
	}
	switch {
	case w.Kind == Create && exists:
		return Op{}, Result{}, status.Conflict("Entity with the specified id already exists in the system.")
	case (w.Kind == Replace || w.Kind == Delete) && !exists:
		return Op{}, Result{}, notFound()
	case w.IfMatch != "" && (!exists || ETag(curLSN) != w.IfMatch):
		return Op{}, Result{}, status.PreconditionFailed("One of the specified pre-condition is not met.")
	}

	op := Op{EPK: e, ID: w.ID, Delete: w.Kind == Delete}
	res := Result{Created: !exists, PrevBytes: curSize, Doc: Doc{LSN: cmd.LSN}}
	delta, items := -int64(curSize), int64(0)
	if !exists {
		items = 1
	}
	if op.Delete {
		items = -1
	} else {
		docRID := curRID
		if !exists {
			docRID = newDocRID(p.id, cmd.LSN, index)
		}
		itemRID := rid.Item(p.rid, docRID)
		op.Value = encodeValue(make([]byte, 0, 16+w.Item.StampedSize(document.System{})+len(itemRID)*2+len(p.selfPrefix)), docRID, cmd.LSN, nil)
		header := len(op.Value)
		op.Value = w.Item.Stamp(op.Value, document.System{
			RID: itemRID, Self: p.selfPrefix + itemRID + "/", ETag: ETag(cmd.LSN), TS: now,
		})
		res.Doc = Doc{JSON: op.Value[header:], LSN: cmd.LSN}
		delta += int64(len(op.Value) - header)
	}
	op.Logical = lp.add(items, delta)
	if delta > 0 && op.Logical.Bytes > p.maxLogical {
		return Op{}, Result{}, status.PartitionFull(
			"The logical partition would grow to %d bytes; its limit is %d bytes. Spread the data over more partition key values.",
			op.Logical.Bytes, p.maxLogical)
	}
	cmd.After.counts = cmd.After.add(items, delta)
	return op, res, nil
}

// newDocRID picks the item half of a new item's _rid: partition id, LSN and the op's place in
// its command, which together never repeat within a container.
func newDocRID(partition uint32, lsn uint64, index int) [docRIDLen]byte {
	var r [docRIDLen]byte
	binary.BigEndian.PutUint64(r[:], uint64(partition)<<48|(lsn&(1<<40-1))<<8|uint64(index&0xff))
	return r
}
