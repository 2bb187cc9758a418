package partition

import (
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/storage"
)

// Applying entries. A partition's state machine applies its log's entries in order, in
// stages, as CockroachDB's kvserver/apply does:
//
//	stage    each entry, in order, is checked against the state as of the entries before it
//	         and its writes are added to one batch; a refused entry writes nothing
//	commit   the batch is committed (synced on a single node; a replicated log is already
//	         durable, so there it need not be)
//	effects  then, in order: the row cache is released, the new state is published to
//	         readers, a split's capture records the commands, the index state changes, a
//	         split's backfill starts or stops; and the callers waiting for the entries learn
//	         their outcome
//
// Staging reads only what every replica holds alike (the partition's own state), so every
// replica that applies the same entries holds the same bytes. One goroutine applies at a time:
// the writer on a single node, the replication host's for a replicated partition.

// applyBatch is the entries of one batch being staged, and what they need once it commits.
type applyBatch struct {
	p  *Partition
	b  *storage.Batch
	st state       // as of every entry staged so far
	ix *indexState // likewise
	// writes are the commands staged, whose items' cached rows are held (storage.RowCache.Hold)
	// until the batch commits.
	writes []*Command
	// effects run in order once the batch is committed.
	effects []func()
	// vec are the vector indexes' graphs as this batch changes them (vector.go); nil until
	// a write looks them up. dropped are the paths of the graphs a policy change deleted.
	vec     []*batchGraph
	dropped []string
	key     []byte // scratch
}

// newApplyBatch starts a batch on top of the state last applied.
func (p *Partition) newApplyBatch() *applyBatch {
	return &applyBatch{p: p, b: p.db.NewBatch(), st: p.sm.st, ix: p.ix.Load()}
}

// Refusals of an entry at apply time; the entry writes nothing.
var (
	// errStaleLease refuses an entry decided under a lease that is no longer the partition's.
	errStaleLease = fault.New(fault.Unavailable, "The partition's leaseholder changed while the write was decided; retry the request")
	// errOutOfOrder refuses a command that does not follow the last one applied (a command
	// before it was dropped).
	errOutOfOrder = fault.New(fault.Unavailable, "The write was not applied: an earlier write it followed was not; retry the request")
	// errSplitDone refuses every entry after the commit of a split: the children own the items.
	errSplitDone = fault.RangeGone()
)

// stage adds e's writes to the batch, or refuses it (a *refusal) without writing anything. Any
// other error may leave part of the entry in the batch, which must then be dropped.
func (a *applyBatch) stage(e *entry) error {
	switch {
	case a.st.Closed:
		return refuse(errSplitDone)
	case e.kind != entryLease && e.epoch != a.st.Epoch:
		return refuse(errStaleLease)
	}
	switch e.kind {
	case entryWrite:
		return a.stageWrite(e.cmd)
	case entryLease:
		if e.lease <= a.st.Epoch {
			return refuse(errStaleLease) // a lease older than the one held (a replayed proposal)
		}
		a.st.Epoch = e.lease
		return nil
	case entryPolicy:
		return a.stagePolicy(e.policy)
	case entryReindex:
		return a.stageReindex(e.reindex)
	case entryPurge:
		return a.stagePurge(e.purge)
	case entrySplitStart:
		return a.stageSplitStart(e.split)
	case entrySplitCommit:
		return a.stageSplitCommit()
	case entrySplitAbort:
		return a.stageSplitAbort()
	case entryVectorBuild:
		return a.stageVectorBuild(e.build)
	case entryRecheck:
		return a.stageRecheck()
	}
	return fault.New(fault.Internal, "partition %d: unknown log entry kind %d", a.p.id, e.kind)
}

// stageWrite adds a command's writes.
func (a *applyBatch) stageWrite(c *Command) error {
	if c.LSN != a.st.LSN+1 {
		return refuse(errOutOfOrder)
	}
	p := a.p
	if !a.ix.settled() {
		a.dropCounts() // the command's terms may name entries that are not there (writeDiff)
	}
	var seq [8]byte
	for i := range c.Changes {
		ch := &c.Changes[i]
		if err := a.stageLog(c, i); err != nil {
			return err
		}
		doc := storage.DocKey(a.key[:0], p.container, ch.EPK, ch.Seq)
		var err error
		switch {
		case ch.Delete:
			err = a.b.Delete(doc)
			if err == nil {
				err = a.b.Delete(storage.ItemKey(a.key[:0], p.container, ch.EPK, ch.ID))
			}
			if err == nil {
				err = a.b.Delete(storage.OrderKey(a.key[:0], p.container, p.id, ch.Seq))
			}
		case ch.New:
			err = a.b.Set(doc, ch.Value)
			if err == nil {
				err = a.b.Set(storage.ItemKey(a.key[:0], p.container, ch.EPK, ch.ID), storage.EncodeSeq(seq[:0], ch.Seq))
			}
			if err == nil {
				err = a.b.Set(storage.OrderKey(a.key[:0], p.container, p.id, ch.Seq), []byte(ch.EPK))
			}
		default:
			err = a.b.Set(doc, ch.Value)
			if err == nil && ch.Renamed != "" {
				err = a.b.Delete(storage.ItemKey(a.key[:0], p.container, ch.EPK, ch.Renamed))
				if err == nil {
					err = a.b.Set(storage.ItemKey(a.key[:0], p.container, ch.EPK, ch.ID), storage.EncodeSeq(seq[:0], ch.Seq))
				}
			}
		}
		a.key = doc
		if err != nil {
			return err
		}
		for _, t := range ch.IndexDel {
			if err := a.b.Delete(storage.IndexKey(a.key[:0], p.container, p.id, t, ch.Seq)); err != nil {
				return err
			}
		}
		for _, t := range ch.IndexAdd {
			if isNotIndexed([][]byte{t}) {
				p.mayUnindexed.Store(true) // before the marker is visible, for pre-reads and scans
			}
			if err := a.b.Set(storage.IndexKey(a.key[:0], p.container, p.id, t, ch.Seq), nil); err != nil {
				return err
			}
		}
		if len(ch.UniqueDel)+len(ch.UniqueAdd) > 0 {
			if err := a.stageUnique(ch); err != nil {
				return err
			}
		}
		a.key = storage.LogicalKey(a.key[:0], p.container, ch.EPK)
		if ch.Logical.Items == 0 {
			err = a.b.Delete(a.key)
		} else {
			err = a.b.Set(a.key, encodeCounts(nil, ch.Logical))
		}
		if err != nil {
			return err
		}
	}
	if err := a.stageVectors(c); err != nil {
		return err
	}
	a.hold(c)
	a.st.LSN, a.st.counts, a.st.Seq = c.After.LSN, c.After.counts, c.After.Seq
	a.effects = append(a.effects, func() {
		p.captureCommand(c)
		p.noteExpiry(c)
		p.counts.note(c)
	})
	return nil
}

// hold holds the cached rows of the items c writes until the batch commits: readers may see
// the batch before it is synced, and none may cache what it replaces meanwhile (see
// storage.RowCache).
func (a *applyBatch) hold(c *Command) {
	a.writes = append(a.writes, c)
	a.p.rowWrites(c, a.p.db.Rows.Hold)
}

// release releases what hold held.
func (a *applyBatch) release() {
	for _, c := range a.writes {
		a.p.rowWrites(c, a.p.db.Rows.Release)
	}
}

// rowWrites calls f (the row cache's Hold or Release) on the key of every item c writes.
func (p *Partition) rowWrites(c *Command, f func(key []byte)) {
	var buf [256]byte
	for i := range c.Changes {
		ch := &c.Changes[i]
		f(storage.ItemKey(buf[:0], p.container, ch.EPK, ch.ID))
		if ch.Renamed != "" {
			f(storage.ItemKey(buf[:0], p.container, ch.EPK, ch.Renamed))
		}
	}
}

// commit commits the staged batch (synced when sync is set) and runs its effects. When the
// commit fails the state is not published and the partition refuses every later write: what
// storage holds can no longer be trusted to match what it has in memory.
func (a *applyBatch) commit(sync bool) error {
	p := a.p
	defer a.b.Close()
	var err error
	if !a.st.Closed { // a split's commit removed the state record with the rest of the parent
		err = a.writeVectors()
		if err == nil {
			err = a.b.Set(storage.PartitionKey(p.container, p.id), encodeState(a.key[:0], a.st))
		}
	}
	if err == nil {
		if sync {
			err = a.b.Commit()
		} else {
			err = a.b.CommitUnsynced()
		}
	}
	a.release()
	if err != nil {
		p.fail(err)
		return fault.New(fault.Unavailable, "Storage failed to commit the write: %v", err)
	}
	p.sm.st = a.st
	st := a.st
	p.published.Store(&st)
	p.applied.Store(st.LSN)
	for _, fx := range a.effects {
		fx()
	}
	return nil
}

// abandon drops a batch that will not be committed (a refused group that staged nothing).
func (a *applyBatch) abandon() {
	a.release()
	a.b.Close()
}

// stateMachine is what the applying goroutine owns: the state as of the last entry applied.
type stateMachine struct {
	st state
}
