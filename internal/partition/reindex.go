package partition

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/storage"
)

// A change of the indexing policy rebuilds the partition's range index online:
//
//	ch, err := p.PrepareIndexChange(b, pol, curJSON) // the rebuild's record, into the caller's batch
//	... commit b (with the catalog's new policy) ...
//	err = p.InstallIndexChange(ch)                     // writes index by pol from the next command on
//	for { done, _, err := p.ReindexStep(n); ... }      // the backfill, a bounded batch at a time
//
// The invariant that keeps queries exact: every item's index entries are exactly its terms
// under the current policy or under one of the earlier policies the state lists (prevs). A
// write while a rebuild runs removes the old version's terms under all of them and adds the
// new version's under the current one, so a written item follows the current policy; a step
// does the same for the items it passes, in creation order from a cursor. A query trusts the
// index for a path only when every one of those policies indexes it (IndexTrusted), and scans
// otherwise. When the cursor has passed every item, prevs are dropped and the record deleted.

// indexState is the policy a partition's index follows. It is immutable: a change or a step
// stores a new one, on the writer goroutine, so a command is decided under one state.
type indexState struct {
	pol *indexing.Policy
	// prevs are the earlier policies that the entries of items the rebuild has not passed
	// may still follow, with their JSON (persisted); empty when the index follows pol alone.
	prevs    []*indexing.Policy
	prevJSON []json.RawMessage
	// cursor is the creation sequence the rebuild goes on from: every item below it follows
	// pol. done counts the items passed, for progress.
	cursor uint64
	done   int64
}

func (s *indexState) settled() bool { return len(s.prevs) == 0 }

// reindexRecord is the persisted form of a rebuild in flight (storage.ReindexKey).
type reindexRecord struct {
	Prevs  []json.RawMessage `json:"prevs"`
	Cursor uint64            `json:"cursor"`
	Done   int64             `json:"done"`
}

func (s *indexState) record() reindexRecord {
	return reindexRecord{Prevs: s.prevJSON, Cursor: s.cursor, Done: s.done}
}

// putState adds to b what persists s for partition id: its record, or its removal once settled.
func putState(b *storage.Batch, container, id uint32, s *indexState) error {
	key := storage.ReindexKey(container, id)
	if s.settled() {
		return b.Delete(key)
	}
	v, err := json.Marshal(s.record())
	if err != nil {
		return err
	}
	return b.Set(key, v)
}

// loadIndexState reads the rebuild in flight of a partition whose container's policy is pol.
func loadIndexState(db *storage.DB, container, id uint32, pol *indexing.Policy) (*indexState, error) {
	st := &indexState{pol: pol}
	v, err := db.GetCopy(nil, storage.ReindexKey(container, id))
	if storage.IsNotFound(err) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	var rec reindexRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, fmt.Errorf("partition %d: reindex record: %w", id, err)
	}
	for _, raw := range rec.Prevs {
		prev, err := indexing.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("partition %d: reindex record: %w", id, err)
		}
		st.prevs = append(st.prevs, prev)
		st.prevJSON = append(st.prevJSON, raw)
	}
	st.cursor, st.done = rec.Cursor, rec.Done
	return st, nil
}

// Policy is the indexing policy the partition's writes follow.
func (p *Partition) Policy() *indexing.Policy { return p.ix.Load().pol }

// IndexTrusted reports whether the range index holds every value at path of every item, so a
// query may read it instead of scanning: the policy indexes path and no rebuild is changing
// that.
func (p *Partition) IndexTrusted(path string) bool {
	st := p.ix.Load()
	return st.pol.Indexes(path) && indexing.IndexedByAll(path, st.prevs...)
}

// ReindexProgress reports a rebuild in flight: the items it has passed and the partition's
// items now (done may pass items when items were deleted meanwhile). settled is true when
// nothing is in flight.
func (p *Partition) ReindexProgress() (done, items int64, settled bool) {
	st := p.ix.Load()
	return st.done, p.Stats().Items, st.settled()
}

// IndexChange is a policy change prepared for a partition, to install once its record is
// committed.
type IndexChange struct {
	from, to *indexState
}

// PrepareIndexChange adds to b the record of a change of the partition's policy to pol; curJSON
// is the JSON of the policy it follows now. The caller commits b, then installs the change, and
// makes sure that no ReindexStep of the partition runs in between (the step would write the
// record as it was). A policy that indexes nothing drops the index at once: nothing is
// rebuilt. A change while a rebuild runs restarts it towards pol, keeping the earlier policies
// that items may still follow.
func (p *Partition) PrepareIndexChange(b *storage.Batch, pol *indexing.Policy, curJSON json.RawMessage) (*IndexChange, error) {
	cur := p.ix.Load()
	next := &indexState{pol: pol}
	if pol.IndexesNothing() {
		start, end := storage.IndexPartitionSpan(p.container, p.id)
		if err := b.DeleteRange(start, end); err != nil {
			return nil, err
		}
	} else {
		next.prevs = append(next.prevs, cur.prevs...)
		next.prevJSON = append(next.prevJSON, cur.prevJSON...)
		if !indexing.ContainsEqual(next.prevs, cur.pol) {
			next.prevs = append(next.prevs, cur.pol)
			next.prevJSON = append(next.prevJSON, append(json.RawMessage(nil), curJSON...))
		}
		if len(next.prevs) == 1 && next.prevs[0].Equal(pol) {
			next.prevs, next.prevJSON = nil, nil // back to what every item follows
		}
	}
	if err := putState(b, p.container, p.id, next); err != nil {
		return nil, err
	}
	return &IndexChange{from: cur, to: next}, nil
}

// InstallIndexChange makes the partition's writes follow a prepared change from its next
// command on.
func (p *Partition) InstallIndexChange(c *IndexChange) error {
	var err error
	cerr := p.control(func() {
		if !p.ix.CompareAndSwap(c.from, c.to) {
			err = fault.New(fault.Internal, "partition %d: its index changed while a policy change was prepared", p.id)
		}
	})
	if cerr != nil {
		return cerr
	}
	return err
}

// reindexed is one item a step rebuilds: the version it read, and the entries to change.
type reindexed struct {
	seq      uint64
	lsn      uint64
	epk      string
	del, add [][]byte
}

// ReindexStep rebuilds the index entries of the next maxItems items, or of as many as hold
// maxBytes of documents, from the rebuild's cursor. It reads and computes off the writer, then
// applies on the writer between two groups of commands, skipping the items written meanwhile
// (a write leaves an item following the current policy). It reports whether the rebuild is
// complete, and the bytes of documents it read, for pacing. The batch is not synced: a later
// synced commit makes it durable with its record, and a crash loses both together.
func (p *Partition) ReindexStep(maxItems, maxBytes int) (finished bool, read int, err error) {
	st := p.ix.Load()
	if st.settled() {
		return true, 0, nil
	}
	items, next, end, read, err := p.reindexRead(st, maxItems, maxBytes)
	if err != nil {
		return false, read, err
	}
	var aerr error
	cerr := p.control(func() {
		if p.ix.Load() != st {
			return // a policy change came first; the next step starts from its state
		}
		if err := p.failed.Load(); err != nil {
			aerr = err
			return
		}
		after := &indexState{pol: st.pol, prevs: st.prevs, prevJSON: st.prevJSON, cursor: next, done: st.done + int64(len(items))}
		if end {
			after = &indexState{pol: st.pol, done: after.done}
		}
		aerr = p.reindexApply(items, after)
	})
	if cerr != nil {
		return false, read, cerr
	}
	return p.ix.Load().settled(), read, aerr
}

// reindexRead reads the items of a step from a snapshot and computes their entry changes.
func (p *Partition) reindexRead(st *indexState, maxItems, maxBytes int) (items []reindexed, next uint64, end bool, read int, err error) {
	snap := p.db.NewSnapshot()
	defer snap.Close()
	_, oend := storage.OrderPartitionSpan(p.container, p.id)
	it, err := snap.NewIter(storage.OrderKey(nil, p.container, p.id, st.cursor), oend)
	if err != nil {
		return nil, 0, false, 0, err
	}
	defer it.Close()
	docs, err := p.docReader(snap)
	if err != nil {
		return nil, 0, false, 0, err
	}
	defer docs.close()
	next = st.cursor
	for it.First(); it.Valid(); it.Next() {
		if len(items) >= maxItems || read >= maxBytes {
			return items, next, false, read, nil
		}
		seq, err := storage.SeqOf(it.Key())
		if err != nil {
			return nil, 0, false, read, err
		}
		next = seq + 1
		d, ok, err := docs.get(seq)
		if err != nil {
			return nil, 0, false, read, err
		}
		if !ok {
			continue
		}
		read += len(d.json)
		// An item its write kept out of the index (the indexing directive Exclude) stays out
		// under any policy: its one entry, the marker, is right as it is.
		if out, err := p.isUnindexed(snap.Get, seq); out || err != nil {
			if err != nil {
				return nil, 0, false, read, err
			}
			continue
		}
		x := reindexed{seq: seq, lsn: d.lsn, epk: string(d.epk)}
		if x.del, x.add, err = rebuildDiff(d.json, st.pol, st.prevs); err != nil {
			return nil, 0, false, read, fault.New(fault.Internal, "stored item %d is not valid JSON: %v", seq, err)
		}
		items = append(items, x)
	}
	return items, next, true, read, it.Error()
}

// reindexApply writes a step's entry changes, and the state after it, on the writer.
func (p *Partition) reindexApply(items []reindexed, after *indexState) error {
	b := p.db.NewBatch()
	defer b.Close()
	var key []byte
	var applied []indexChange
	for _, x := range items {
		v, closer, err := p.db.Get(storage.DocKey(key[:0], p.container, x.seq))
		if storage.IsNotFound(err) {
			continue // deleted since: the delete removed its entries under every policy
		}
		if err != nil {
			return err
		}
		d, err := decodeValue(v)
		lsn := d.lsn
		closer.Close()
		if err != nil {
			return err
		}
		if lsn != x.lsn {
			continue // written since, under the current state
		}
		for _, t := range x.del {
			if err := b.Delete(storage.IndexKey(key[:0], p.container, p.id, t, x.seq)); err != nil {
				return err
			}
		}
		for _, t := range x.add {
			if bytes.Equal(t, unindexedTerm) {
				p.mayUnindexed.Store(true) // a manual policy: before the marker is visible
			}
			if err := b.Set(storage.IndexKey(key[:0], p.container, p.id, t, x.seq), nil); err != nil {
				return err
			}
		}
		if p.capture != nil && len(x.del)+len(x.add) > 0 {
			ch := indexChange{epk: x.epk, seq: x.seq}
			ch.terms.del, ch.terms.add = x.del, x.add
			applied = append(applied, ch)
		}
	}
	if err := putState(b, p.container, p.id, after); err != nil {
		return err
	}
	if err := b.CommitUnsynced(); err != nil {
		p.fail(err)
		return err
	}
	if p.capture != nil { // a split copying this index replays them onto its children
		p.capture.changes = append(p.capture.changes, applied...)
	}
	p.ix.Store(after)
	return nil
}

// rebuildDiff is what a step changes in an item's entries, which follow one of prevs or pol:
// it removes its terms under any of prevs that pol does not give, and adds those of pol's
// that not every one of prevs gives (an entry set again is unchanged).
func rebuildDiff(body []byte, pol *indexing.Policy, prevs []*indexing.Policy) (del, add [][]byte, err error) {
	cur, err := IndexTerms(body, pol)
	if err != nil {
		return nil, nil, err
	}
	var union, inter [][]byte
	for i, prev := range prevs {
		t, err := IndexTerms(body, prev)
		if err != nil {
			return nil, nil, err
		}
		if i == 0 {
			union, inter = t, t
			continue
		}
		union, inter = termsUnion(union, t), termsIntersect(inter, t)
	}
	del, _ = termDiff(union, cur)
	_, add = termDiff(inter, cur)
	return del, add, nil
}

// writeDiff is the entry change of a write while a rebuild runs: the replaced version's
// entries follow pol (its terms old) or one of st's prevs, so all of those are removed that
// the new version's terms do not keep, and every new term is added that not all of them hold.
func (st *indexState) writeDiff(oldJSON []byte, old, new [][]byte) (del, add [][]byte, err error) {
	union, inter := old, old
	for _, prev := range st.prevs {
		t, err := IndexTerms(oldJSON, prev)
		if err != nil {
			return nil, nil, err
		}
		union, inter = termsUnion(union, t), termsIntersect(inter, t)
	}
	del, _ = termDiff(union, new)
	_, add = termDiff(inter, new)
	return del, add, nil
}

// termsUnion and termsIntersect merge two sorted term lists.
func termsUnion(a, b [][]byte) [][]byte {
	out := make([][]byte, 0, max(len(a), len(b)))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && bytes.Compare(a[i], b[j]) < 0:
			out = append(out, a[i])
			i++
		case i == len(a) || bytes.Compare(a[i], b[j]) > 0:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

func termsIntersect(a, b [][]byte) [][]byte {
	var out [][]byte
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := bytes.Compare(a[i], b[j]); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

// inheritIndexState adds to b the rebuild record of a split's child: it goes on from the
// parent's cursor (the children hold the same items, by the same creation sequences) with a
// share of the parent's progress in proportion to its items.
func (p *Partition) inheritIndexState(b *storage.Batch, child uint32, childItems, parentItems int64) error {
	st := p.ix.Load()
	if st.settled() {
		return nil
	}
	c := *st
	if parentItems > 0 {
		c.done = st.done * childItems / parentItems
	}
	return putState(b, p.container, child, &c)
}
