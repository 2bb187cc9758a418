package partition

import (
	"encoding/binary"
	"fmt"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/rid"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/value"
)

// OpKind is what an Operation does.
type OpKind uint8

const (
	Create  OpKind = iota + 1 // fails with Conflict if the item exists
	Replace                   // fails with NotFound if it does not
	Upsert                    // creates or replaces
	Delete                    // fails with NotFound if it does not exist
	Read                      // writes nothing; reads the item as of its place in the command
	Mutate                    // replaces the item with what Operation.Mutate makes of it; NotFound if absent
	// Expire deletes the item, logged as expired, if it has expired; otherwise, and when it is
	// absent, it does nothing (Result.PrevBytes 0). The reaper's operation (see expiry.go).
	Expire
	// Unchanged writes nothing: it fails its command with PreconditionFailed when the
	// partition has applied a write since Operation.LSN. A transaction decided on a replica
	// that does not lead (a cluster's), from reads of the partition as of that LSN, commits
	// with it first, so that it commits only if all it read is still current.
	Unchanged
)

// Writes reports whether operations of kind k change the item.
func (k OpKind) Writes() bool { return k != Read && k != Unchanged }

// Operation is one item operation requested of a partition. The operations of one Execute
// form one command: they see each other's effects in order and apply all or none.
type Operation struct {
	Kind OpKind
	EPK  epk.EPK // the item's logical partition
	ID   string
	// Item is the new content; nil for Delete. Its id is ID, except for a Replace that renames
	// the item: the service lets a replace give the item it names a new id.
	Item *document.Item
	// IfMatch, when not empty, is the etag (unquoted) the current version must have.
	IfMatch string
	// Terms are the index terms of Item under the container's indexing policy (TermsOf),
	// computed by the caller so that the writer does not have to; nil makes the writer
	// compute them. An empty, non-nil slice writes none; NotIndexed keeps the item out of
	// the index and of queries (the indexing directive Exclude). TermsPolicy, when set, is
	// the policy they were computed under: the writer computes them again if the partition's
	// policy has changed since.
	Terms       [][]byte
	TermsPolicy *indexing.Policy
	// Mutate computes the new content and its index terms from the current JSON, for Kind
	// Mutate. It runs on the partition's writer, so it must be quick, bounded and must not
	// block; it fails the write by returning an error (a panic fails it too). The result must
	// keep the item's id and EPK.
	Mutate func(current []byte) (*document.Item, epk.EPK, [][]byte, error)
	// Unique are the unique key entries of Item under the container's unique key policy
	// (uniquekey.Policy.Entries), computed by the caller like Terms; nil makes the writer
	// compute them. Not used for Mutate, whose item the writer makes.
	Unique [][]byte
	// LSN, for Unchanged, is the partition's LSN the transaction read.
	LSN uint64
	// Consistency, for a Read, is what the replica waits for before it reads.
	Consistency Consistency
}

// Result is the outcome of one Operation.
type Result struct {
	Doc       Doc  // the version written; for Delete only its LSN
	Created   bool // the write created the item (Create, or Upsert of a new id)
	PrevBytes int  // size of the version replaced or deleted, 0 if none
	// IndexTerms counts the index entries the write removed and added, which its charge
	// includes (ru.Insert).
	IndexTerms int
}

// BatchError says which operation of a multi-operation Execute failed; none was applied.
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("operation %d: %v", e.Index, e.Err) }
func (e *BatchError) Unwrap() error { return e.Err }

// MaxOperations bounds the operations of one command. A transactional batch holds at most 100;
// a script's transaction commits every document it wrote in one command, as many as its
// operation quota (--script-max-operations, 1000 by default) and its byte cap allow, so the
// bound is far above both. The transaction refuses to stage more (txn.stage). It must also
// keep a command's changes (one per operation, and one more for each expired item an
// operation deletes first) countable in a log position's 16-bit index.
const MaxOperations = 1 << 14

// maxGroup bounds how many requests share one synced batch.
const maxGroup = 256

type request struct {
	// control, when set, is run by the writer between groups instead of writing: every
	// group before it is committed, none after it has started.
	control func()
	// step, when set, decides an entry of the partition's own (a lease, a policy change, a
	// rebuild step, a purge, a split step) on the writer between groups, against the applied
	// state and the index state; the writer commits it. A nil entry commits nothing.
	step    func(st state, ix *indexState) (*entry, error)
	ops     []Operation
	pre     []preRead // one per operation, read by the caller before queueing
	results []Result
	err     error
	done    chan struct{}
}

// preRead is an item's current version as the requesting goroutine read it, and the applied
// LSN it read it after: it is still current unless the writer has applied a later write to the
// item. Reading in the caller lets lookups, and the index terms of the version a write
// replaces, be computed in parallel; the writer only validates them.
type preRead struct {
	cur  version
	seen uint64
	ok   bool
}

// version is an item's current version as a command being decided sees it.
type version struct {
	seq   uint64 // its creation sequence; 0 when the item does not exist
	value []byte // its stored value
	// terms are the index terms of value, valid when hasTerms: a delete or replace removes
	// them from the index. A pre-read computes them under pol, and they are used only while
	// that is still the partition's policy; the writer's own leave pol nil.
	terms    [][]byte
	hasTerms bool
	// uniq are the unique key entries of value, when known (a container with unique keys
	// gives every item at least one entry, so nil means not computed).
	uniq [][]byte
	pol  *indexing.Policy
}

// Execute performs ops as one atomic command: all of them are applied, durably, or none is.
// It returns once the command is synced or has failed. When several operations are given, a
// failure is a *BatchError naming the one that failed.
func (p *Partition) Execute(ops ...Operation) ([]Result, error) {
	if len(ops) > MaxOperations {
		return nil, fault.New(fault.BadRequest, "A command holds at most %d operations; got %d", MaxOperations, len(ops))
	}
	r := &request{ops: ops, pre: make([]preRead, len(ops)), done: make(chan struct{})}
	for i := range ops {
		if ops[i].Kind != Unchanged {
			r.pre[i] = p.preRead(&ops[i])
		}
	}
	if err := p.send(r); err != nil {
		return nil, err
	}
	<-r.done
	return r.results, r.err
}

// propose has the writer decide an entry with step, against the applied state and the index
// state, and commit it; it returns once the entry is applied (nil), or why it was not. A step
// that decides nil commits nothing.
func (p *Partition) propose(step func(st state, ix *indexState) (*entry, error)) error {
	r := &request{step: step, done: make(chan struct{})}
	if err := p.send(r); err != nil {
		return err
	}
	<-r.done
	return r.err
}

// control runs fn on the writer between two groups of commands.
func (p *Partition) control(fn func()) error {
	r := &request{control: fn, done: make(chan struct{})}
	if err := p.send(r); err != nil {
		return err
	}
	<-r.done
	return nil
}

// send queues r for the writer, unless the partition is closing.
func (p *Partition) send(r *request) error {
	p.closeMu.RLock()
	defer p.closeMu.RUnlock()
	if p.closed {
		return errClosed
	}
	p.queue <- r
	return nil
}

// preRead looks up the version an operation acts on, and the index terms it would remove.
func (p *Partition) preRead(w *Operation) preRead {
	seen := p.applied.Load()
	var buf [256]byte
	key := storage.ItemKey(buf[:0], p.container, string(w.EPK), w.ID)
	get := p.db.GetCopy
	if w.Kind == Create {
		get = p.db.GetLikelyAbsent // the id of a new item is usually new
	}
	// The value goes after the key, in buf when the key fits there (a long id or partition
	// key makes ItemKey allocate instead: buf's length says nothing about key's).
	sv, err := get(key[len(key):], key)
	if storage.IsNotFound(err) {
		return preRead{seen: seen, ok: true}
	}
	if err != nil {
		return preRead{}
	}
	seq, err := storage.DecodeSeq(sv)
	if err != nil {
		return preRead{}
	}
	v, err := p.db.GetCopy(nil, storage.DocKey(buf[:0], p.container, string(w.EPK), seq))
	if err != nil {
		return preRead{} // changed since, or unreadable: the writer reads it again
	}
	cur := version{seq: seq, value: v}
	if pol := p.Policy(); w.Kind != Create && w.Kind != Read && (!pol.IndexesNothing() || p.mayUnindexed.Load()) {
		if d, err := decodeValue(v); err == nil {
			if terms, err := p.storedTerms(d.json, seq, pol); err == nil {
				cur.terms, cur.hasTerms, cur.pol = terms, true, pol
			}
		}
	}
	if p.unique != nil && w.Kind != Create && w.Kind != Read {
		cur.uniq = p.uniqueOf(v)
	}
	return preRead{cur: cur, seen: seen, ok: true}
}

// run is the partition's writer: it decides groups of requests in order and hands each
// group's commands to the log as one batch. Requests that arrive while a group commits form the
// next group, so one sync serves them all; no request is answered before its command is
// applied and durable.
func (p *Partition) run() {
	defer close(p.stopped)
	g := &group{items: map[string]version{}, logical: map[string]counts{}}
	w := &writer{recent: map[string]uint64{}, lpCache: map[string]counts{}}
	for r := range p.queue {
		w.ix = p.ix.Load() // changed only by entries the writer commits, between groups
		switch {
		case r.control != nil:
			r.control()
			close(r.done)
			continue
		case r.step != nil:
			p.runStep(w, r)
			close(r.done)
			continue
		}
		reqs := []*request{r}
		var next *request // a control or a step, which runs after the group
	fill:
		for len(reqs) < maxGroup {
			select {
			case r, ok := <-p.queue:
				if !ok {
					break fill
				}
				if r.control != nil || r.step != nil {
					next = r
					break fill
				}
				reqs = append(reqs, r)
			default:
				break fill
			}
		}
		p.commitGroup(w, g, reqs)
		for _, r := range reqs {
			close(r.done)
		}
		if next != nil {
			w.ix = p.ix.Load()
			if next.control != nil {
				next.control()
			} else {
				p.runStep(w, next)
			}
			close(next.done)
		}
	}
}

// fail stops the partition from accepting writes after storage failed to commit one.
func (p *Partition) fail(err error) {
	p.failed.CompareAndSwap(nil, fault.New(fault.Unavailable, "The partition stopped after a storage failure: %v", err))
}

// writer is what the writer goroutine remembers across groups. Both maps are bounded by
// clearing them when they grow past writerMemory entries, and cleared whenever an entry the
// writer committed was refused (then storage may not hold what they say).
type writer struct {
	// recent holds the LSN of the last write to each doc key written since horizon; a pre-read
	// taken after horizon is current unless recent names a later write to its key.
	recent  map[string]uint64
	horizon uint64
	// lpCache holds logical partition statistics; only this goroutine decides writes, so a
	// cached entry is current as long as every command it decided was applied.
	lpCache map[string]counts
	// ix is the index state the current group is decided under.
	ix *indexState
	// lsn and epoch are the applied state's as the writer last left it: when a group finds
	// another, commands the writer did not decide were applied (another leaseholder's), and
	// what it remembers is stale.
	lsn, epoch uint64
}

// forget clears what the writer remembers, as of the applied state st.
func (w *writer) forget(st state) {
	clear(w.recent)
	clear(w.lpCache)
	w.horizon = st.LSN
	w.lsn, w.epoch = st.LSN, st.Epoch
}

// sync forgets what the writer remembers if st is not the state it last left.
func (w *writer) sync(st state) {
	if st.LSN != w.lsn || st.Epoch != w.epoch {
		w.forget(st)
	}
}

// writerMemory is small because what the maps hold is live heap that paces the garbage
// collector (internal/gcpace): at 65,536 entries the four partitions of a container kept
// about 19 MiB live while creating. 4,096 keys still span about a second of writes to a
// partition at full speed, far longer than a pre-read waits for the writer; a pre-read older
// than the horizon is only read again, never trusted.
const writerMemory = 1 << 12

// group is what the commands decided so far in one group changed, so that later commands of
// the group see it before it reaches storage.
type group struct {
	items   map[string]version // item key -> version; seq 0 when deleted
	logical map[string]counts  // EPK -> logical partition statistics
	// unique maps the storage key of each unique key entry the group's commands added or
	// removed to the id of the item that now holds it, "" when none does. Allocated on the
	// first write to a container with unique keys.
	unique map[string]string
}

// commitGroup decides every request of the group in order against the applied state and
// commits the commands of those that passed their checks as one batch of the log.
func (p *Partition) commitGroup(w *writer, g *group, reqs []*request) {
	clear(g.items)
	clear(g.logical)
	clear(g.unique)
	st := *p.published.Load()
	if len(w.recent) > writerMemory {
		clear(w.recent)
		w.horizon = st.LSN
	}
	if len(w.lpCache) > writerMemory {
		clear(w.lpCache)
	}
	err := p.refusal(st)
	if err == nil {
		st, err = p.leaseholder(st)
		w.sync(st)
	}
	if err != nil {
		for _, r := range reqs {
			r.err = err
		}
		return
	}
	next := st
	now := p.now()
	var ents []*entry
	var owners []*request
	// answered are the requests decided without an entry (reads, and writes refused by their
	// checks), with how many entries of the group were decided before each: what it saw.
	type answered struct {
		r     *request
		after int
	}
	var none []answered
	for _, r := range reqs {
		cmd, results, err := p.decide(next, w, g, r, now)
		if err != nil || len(cmd.Changes) == 0 {
			r.results, r.err = results, err
			none = append(none, answered{r, len(ents)})
			continue
		}
		r.results = results
		g.remember(p, w, cmd)
		next = cmd.After
		ents = append(ents, &entry{kind: entryWrite, epoch: st.Epoch, cmd: cmd, sync: true})
		owners = append(owners, r)
	}
	failed := len(ents) // the first entry that was not applied
	if len(ents) > 0 {
		for i, err := range p.log.commit(ents) {
			if err != nil {
				owners[i].results, owners[i].err = nil, err
				failed = min(failed, i)
			}
		}
		if failed < len(ents) {
			w.forget(*p.published.Load())
		} else {
			w.lsn = next.LSN // every command of the group applied, and only they
		}
	}
	if len(none) == 0 || p.isLocal() {
		return
	}
	// A replicated partition answers what it decided without an entry only once it knows that
	// it still held the lease after deciding (a read barrier: no other leaseholder has written
	// since), and that every entry decided before it was applied (what it saw happened).
	barrier := p.leaseBarrier()
	for _, a := range none {
		switch {
		case barrier != nil:
			a.r.results, a.r.err = nil, ErrNotLeaseholder
		case a.after > failed:
			a.r.results, a.r.err = nil, errOutOfOrder
		}
	}
}

// refusal is why the partition refuses new entries in state st, if it does.
func (p *Partition) refusal(st state) error {
	if err := p.failed.Load(); err != nil {
		return err
	}
	if st.Closed {
		return errSplitDone
	}
	return nil
}

// runStep decides a step on the writer, against the applied state and the index state, and
// commits its entry.
func (p *Partition) runStep(w *writer, r *request) {
	st := *p.published.Load()
	if r.err = p.refusal(st); r.err != nil {
		return
	}
	st, err := p.leaseholder(st)
	w.sync(st)
	if r.err = err; err != nil {
		return
	}
	w.ix = p.ix.Load()
	e, err := r.step(st, w.ix)
	if err != nil || e == nil {
		r.err = err
		return
	}
	e.epoch = st.Epoch
	if r.err = p.log.commit([]*entry{e})[0]; r.err != nil {
		w.forget(*p.published.Load())
	}
}

func (g *group) remember(p *Partition, w *writer, c *Command) {
	for i := range c.Changes {
		ch := &c.Changes[i]
		if ch.Renamed != "" {
			old := string(storage.ItemKey(nil, p.container, ch.EPK, ch.Renamed))
			g.items[old] = version{}
			w.recent[old] = c.LSN
		}
		key := string(storage.ItemKey(nil, p.container, ch.EPK, ch.ID))
		if ch.Delete {
			g.items[key] = version{}
		} else {
			g.items[key] = version{seq: ch.Seq, value: ch.Value, terms: ch.terms, hasTerms: true, uniq: ch.uniq}
		}
		if len(ch.UniqueDel)+len(ch.UniqueAdd) > 0 {
			g.rememberUnique(p, ch)
		}
		w.recent[key] = c.LSN
		g.logical[ch.EPK] = ch.Logical
		w.lpCache[ch.EPK] = ch.Logical
	}
}

// current is an item's latest version as seen by a command being decided: its own earlier
// changes first, then earlier commands of the group, then the caller's pre-read if nothing
// was written to the item since, then storage.
func (p *Partition) current(w *writer, g *group, chs []Change, e, id string, pre preRead) (version, error) {
	for i := len(chs) - 1; i >= 0; i-- {
		if ch := &chs[i]; ch.EPK == e && (ch.ID == id || ch.Renamed == id) {
			if ch.Delete || ch.ID != id {
				return version{}, nil
			}
			return version{seq: ch.Seq, value: ch.Value, terms: ch.terms, hasTerms: true, uniq: ch.uniq}, nil
		}
	}
	var buf [256]byte
	key := storage.ItemKey(buf[:0], p.container, e, id)
	if v, ok := g.items[string(key)]; ok {
		return v, nil
	}
	if pre.ok && pre.seen >= w.horizon {
		if last, ok := w.recent[string(key)]; !ok || last <= pre.seen {
			return pre.cur, nil
		}
	}
	// Only this goroutine writes, so the item key and the document it names agree.
	sv, err := p.db.GetCopy(key[len(key):], key) // after the key, in buf when it fits
	if storage.IsNotFound(err) {
		return version{}, nil
	}
	if err != nil {
		return version{}, err
	}
	seq, err := storage.DecodeSeq(sv)
	if err != nil {
		return version{}, err
	}
	v, err := p.db.GetCopy(nil, storage.DocKey(buf[:0], p.container, e, seq))
	if err != nil {
		return version{}, err
	}
	return version{seq: seq, value: v}, nil
}

// logicalNow is a logical partition's statistics as seen by a command being decided.
func (p *Partition) logicalNow(w *writer, g *group, chs []Change, e string) (counts, error) {
	for i := len(chs) - 1; i >= 0; i-- {
		if chs[i].EPK == e {
			return chs[i].Logical, nil
		}
	}
	if c, ok := g.logical[e]; ok {
		return c, nil
	}
	if c, ok := w.lpCache[e]; ok {
		return c, nil
	}
	c, err := p.logical(nil, e)
	if err == nil {
		w.lpCache[e] = c
	}
	return c, err
}

// decide turns a request's operations into a command against state st, or fails without side
// effects.
func (p *Partition) decide(st state, w *writer, g *group, r *request, now int64) (*Command, []Result, error) {
	ops := r.ops
	cmd := &Command{LSN: st.LSN + 1, TS: now, Changes: make([]Change, 0, len(ops)), After: st, Images: p.keepImages}
	cmd.After.LSN = cmd.LSN
	results := make([]Result, len(ops))
	for i := range ops {
		if ops[i].Kind == Unchanged {
			if st.LSN != ops[i].LSN {
				err := error(fault.New(fault.PreconditionFailed, "The partition changed since the transaction read it (LSN %d, now %d)", ops[i].LSN, st.LSN))
				if len(ops) > 1 {
					err = &BatchError{Index: i, Err: err}
				}
				return nil, nil, err
			}
			continue
		}
		ch, res, err := p.decideOne(w, g, cmd, &ops[i], r.pre[i], now)
		if err != nil {
			if len(ops) > 1 {
				err = &BatchError{Index: i, Err: err}
			}
			return nil, nil, err
		}
		if ops[i].Kind.Writes() && ops[i].Kind != Expire { // Expire appends its own, if any
			cmd.Changes = append(cmd.Changes, ch)
		}
		results[i] = res
	}
	if len(cmd.Changes) == 0 { // reads only: nothing to apply, no LSN used
		cmd.LSN, cmd.After = st.LSN, st
	}
	return cmd, results, nil
}

func (p *Partition) decideOne(wr *writer, g *group, cmd *Command, w *Operation, pre preRead, now int64) (Change, Result, error) {
	e := string(w.EPK)
	renames := w.Item != nil && w.Item.ID != w.ID
	if renames && w.Kind != Replace {
		return Change{}, Result{}, fault.New(fault.Internal, "operation on id %q carries an item with id %q", w.ID, w.Item.ID)
	}
	if !p.rng.Contains(w.EPK) {
		return Change{}, Result{}, fault.New(fault.Internal, "item routed to partition %d, which owns %v", p.id, p.rng)
	}
	cur, err := p.current(wr, g, cmd.Changes, e, w.ID, pre)
	if err != nil {
		return Change{}, Result{}, fault.New(fault.Internal, "reading item: %w", err)
	}
	lp, err := p.logicalNow(wr, g, cmd.Changes, e)
	if err != nil {
		return Change{}, Result{}, fault.New(fault.Internal, "reading partition statistics: %w", err)
	}
	exists := cur.seq != 0
	var old stored // the current version, decoded once
	if exists {
		if old, err = decodeValue(cur.value); err != nil {
			return Change{}, Result{}, fault.New(fault.Internal, "%w", err)
		}
		if p.expiredAt(now, e, old) {
			if cur, old, lp, err = p.writeOverExpired(cmd, wr.ix, w, cur, old, lp); err != nil {
				return Change{}, Result{}, err
			}
			exists = false
			if w.Kind == Expire {
				last := &cmd.Changes[len(cmd.Changes)-1]
				return Change{}, Result{PrevBytes: len(last.PrevJSON), IndexTerms: len(last.IndexDel), Doc: Doc{LSN: cmd.LSN}}, nil
			}
		}
	}
	if w.Kind == Expire { // absent, or not expired (written again, or the default changed)
		return Change{}, Result{}, nil
	}
	switch {
	case w.Kind == Create && exists:
		return Change{}, Result{}, fault.New(fault.Conflict, "Entity with the specified id already exists in the system.")
	case (w.Kind == Replace || w.Kind == Delete || w.Kind == Read || w.Kind == Mutate) && !exists:
		return Change{}, Result{}, notFound()
	case w.Kind == Upsert && !exists:
		// An upsert of an item that does not exist creates it, whatever its If-Match says: the
		// service's create semantics (If-Match is checked only against a version to replace).
	case w.IfMatch != "" && (!exists || w.IfMatch != "*" && ETag(old.lsn()) != w.IfMatch): // "*": any version
		return Change{}, Result{}, fault.New(fault.PreconditionFailed, "One of the specified pre-condition is not met.")
	}

	ix := wr.ix
	item, newTerms := w.Item, w.Terms
	if w.TermsPolicy != nil && w.TermsPolicy != ix.pol && !isNotIndexed(newTerms) {
		newTerms = nil // computed under a policy changed since (an exclusion holds under any)
	}
	switch w.Kind {
	case Read:
		return Change{}, Result{Doc: Doc{JSON: old.json, LSN: old.lsn(), Seq: cur.seq}}, nil
	case Mutate:
		var ne epk.EPK
		if item, ne, newTerms, err = mutate(w.Mutate, old.json); err != nil {
			return Change{}, Result{}, err
		}
		if ne != w.EPK || item.ID != w.ID {
			return Change{}, Result{}, fault.New(fault.BadRequest, "The operation would change the item's id or partition key, which cannot change")
		}
	}
	ch := Change{EPK: e, ID: w.ID, Seq: cur.seq, New: !exists, Delete: w.Kind == Delete, Prev: old.log, PrevJSON: old.json}
	if renames {
		// The new id must be free in the logical partition, as for a create.
		taken, err := p.current(wr, g, cmd.Changes, e, item.ID, preRead{})
		if err != nil {
			return Change{}, Result{}, fault.New(fault.Internal, "reading item: %w", err)
		}
		if taken.seq != 0 {
			// An expired item there is gone already: it is deleted, as a create would.
			var t stored
			if t, err = decodeValue(taken.value); err != nil {
				return Change{}, Result{}, fault.New(fault.Internal, "%w", err)
			}
			if !p.expiredAt(now, e, t) {
				return Change{}, Result{}, fault.New(fault.Conflict, "Entity with the specified id already exists in the system.")
			}
			if lp, err = p.expireChange(cmd, wr.ix, e, item.ID, taken, t, lp); err != nil {
				return Change{}, Result{}, err
			}
		}
		ch.ID, ch.Renamed = item.ID, w.ID
	}
	oldTerms := cur.terms
	if exists && (!cur.hasTerms || cur.pol != nil && cur.pol != ix.pol) {
		if oldTerms, err = p.storedTerms(old.json, cur.seq, ix.pol); err != nil {
			return Change{}, Result{}, fault.New(fault.Internal, "stored item is not valid JSON: %w", err)
		}
	}
	res := Result{Created: !exists, PrevBytes: len(old.json), Doc: Doc{LSN: cmd.LSN}}
	delta, items := -int64(len(old.json)), int64(0)
	if !exists {
		items = 1
	}
	if ch.Delete {
		items = -1
		res.Doc.Seq = cur.seq
	} else {
		if !exists {
			if ch.Seq, err = nextSeq(cmd.After, p.id); err != nil {
				return Change{}, Result{}, err
			}
			cmd.After.Seq = ch.Seq
		}
		itemRID := rid.Item(p.rid, docRID(ch.Seq))
		ch.Value = encodeValue(make([]byte, 0, 24+len(w.ID)+item.StampedSize(document.System{})+len(itemRID)*2+len(p.selfPrefix)), logPos{lsn: cmd.LSN, i: uint16(len(cmd.Changes))}, ch.ID)
		header := len(ch.Value)
		ch.Value = item.Stamp(ch.Value, document.System{
			RID: itemRID, Self: p.selfPrefix + itemRID + "/", ETag: ETag(cmd.LSN), TS: now,
		})
		res.Doc = Doc{JSON: ch.Value[header:], LSN: cmd.LSN, Seq: ch.Seq}
		delta += int64(len(ch.Value) - header)
		if newTerms == nil {
			if newTerms, err = IndexTerms(res.Doc.JSON, ix.pol, p.fullText); err != nil {
				return Change{}, Result{}, fault.New(fault.Internal, "stamped item is not valid JSON: %w", err)
			}
		} else if !isNotIndexed(newTerms) {
			newTerms = withTS(newTerms, value.Num(float64(now)), ix.pol) // the caller's lack the _ts stamped here
		}
		ch.terms = newTerms
	}
	if exists && !ix.settled() {
		// A rebuild runs: the replaced version's entries may follow an earlier policy.
		if ch.IndexDel, ch.IndexAdd, err = ix.writeDiff(old.json, oldTerms, newTerms, p.fullText); err != nil {
			return Change{}, Result{}, fault.New(fault.Internal, "stored item is not valid JSON: %w", err)
		}
	} else {
		ch.IndexDel, ch.IndexAdd = termDiff(oldTerms, newTerms)
	}
	if p.unique != nil {
		if err := p.decideUnique(g, cmd.Changes, &ch, w, cur, old.json, item); err != nil {
			return Change{}, Result{}, err
		}
	}
	res.IndexTerms = len(ch.IndexDel) + len(ch.IndexAdd)
	ch.Logical = lp.add(items, delta)
	if delta > 0 && ch.Logical.Bytes > p.maxLogical {
		return Change{}, Result{}, fault.New(fault.PartitionFull,
			"The logical partition would grow to %d bytes; its limit is %d bytes. Spread the data over more partition key values.",
			ch.Logical.Bytes, p.maxLogical)
	}
	cmd.After.counts = cmd.After.add(items, delta)
	return ch, res, nil
}

// mutate runs an operation's Mutate on the writer goroutine, where a panic would stop the
// partition: it fails the operation instead.
func mutate(fn func([]byte) (*document.Item, epk.EPK, [][]byte, error), current []byte) (item *document.Item, e epk.EPK, terms [][]byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fault.New(fault.Internal, "the mutation failed: %v", r)
		}
	}()
	if item, e, terms, err = fn(current); err == nil && item == nil {
		err = fault.New(fault.Internal, "the mutation made no item")
	}
	return item, e, terms, err
}

// docRID is the item half of an item's _rid: its creation sequence, unique in the container
// (see nextSeq).
func docRID(seq uint64) [8]byte {
	var r [8]byte
	binary.BigEndian.PutUint64(r[:], seq)
	return r
}
