package partition

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/searchpolicy"
	"github.com/partita-db/partita/internal/storage"
)

// A change of the indexing policy rebuilds the partition's range index online:
//
//	err := p.ChangePolicy(policyJSON)              // a policy entry: writes follow it at once
//	for { done, _, err := p.ReindexStep(n, b); ... } // reindex entries, a bounded step at a time
//
// The invariant that keeps queries exact: every item's index entries are exactly its terms
// under the current policy or under one of the earlier policies the state lists (prevs). A
// write while a rebuild runs removes the old version's terms under all of them and adds the
// new version's under the current one, so a written item follows the current policy; a step
// does the same for the items it passes, in creation order from a cursor. A query trusts the
// index for a path only when every one of those policies indexes it (IndexTrusted), and scans
// otherwise. When the cursor has passed every item, prevs are dropped.
//
// The policy the index follows is part of the partition's state, recorded under
// storage.IndexingKey by the entries that change it; a partition without a record follows
// the policy its Config names (its container's, which changes only after every partition has
// recorded a change: see the engine).

// indexState is the policy a partition's index follows. It is immutable: an entry that changes
// it stores a new one once applied, so a command is decided under one state.
type indexState struct {
	pol     *indexing.Policy
	polJSON json.RawMessage
	// prevs are the earlier policies that the entries of items the rebuild has not passed
	// may still follow, with their JSON (persisted); empty when the index follows pol alone.
	prevs    []*indexing.Policy
	prevJSON []json.RawMessage
	// cursor is the creation sequence the rebuild goes on from: every item below it follows
	// pol. done counts the items passed, for progress.
	cursor uint64
	done   int64
	// recorded is set when the state comes from (or is written to) the partition's record.
	recorded bool
	// checked: every item's entries of the system paths are there, whatever build led the
	// partition before (see IndexTrusted): a rebuild that a recheck entry began, once every
	// node of the cluster indexed them, went through every item. recheck: that rebuild is
	// under way. Both are carried by every state that follows.
	recheck, checked bool
}

func (s *indexState) settled() bool { return len(s.prevs) == 0 }

// indexingRecord is the persisted form of an indexState (storage.IndexingKey).
type indexingRecord struct {
	Policy json.RawMessage   `json:"policy"`
	Prevs  []json.RawMessage `json:"prevs,omitempty"`
	Cursor uint64            `json:"cursor,omitempty"`
	Done   int64             `json:"done,omitempty"`
	// Recheck and Checked are the state's (indexState.recheck, checked).
	Recheck bool `json:"recheck,omitempty"`
	Checked bool `json:"checked,omitempty"`
	// Terms is what the policies stand for, which every record this build writes states as
	// termsSystemPaths: entries follow the policies as this build applies them. A record of an
	// earlier build states less, and its entries lack what came after (olderTerms).
	Terms int `json:"terms,omitempty"`
}

// The Terms of indexing records, each what the builds from then on write.
const (
	// termsFullText: the policies' full-text indexes have entries; 0 (absent) in records of
	// the builds before, whose entries have none, whatever their policies say.
	termsFullText = 1
	// termsSystemPaths: the entries of id and _ts are there whatever the rules say
	// (indexing.AlwaysIndexed); the builds before indexed _ts never and id by the rules.
	termsSystemPaths = 2
)

// put adds the record of s for partition id to b.
func (s *indexState) put(b *storage.Batch, container, id uint32) error {
	v, err := json.Marshal(indexingRecord{Policy: s.polJSON, Prevs: s.prevJSON, Cursor: s.cursor, Done: s.done, Terms: termsSystemPaths,
		Recheck: s.recheck, Checked: s.checked})
	if err != nil {
		return err
	}
	return b.Set(storage.IndexingKey(container, id), v)
}

// loadIndexState reads the index state of a partition; without a record, it follows cfg.
// The container's partitions were written by a build without full-text terms when
// olderFullText (Config.OlderFullText), or without the system paths' entries when
// olderSystem (Config.OlderSystemPaths), so that a partition without a record lacks them.
func loadIndexState(db *storage.DB, container, id uint32, cfg *indexing.Policy, olderFullText, olderSystem bool) (*indexState, error) {
	v, err := db.GetCopy(nil, storage.IndexingKey(container, id))
	terms := termsSystemPaths
	var st *indexState
	switch {
	case storage.IsNotFound(err):
		st = &indexState{pol: cfg, polJSON: cfg.JSON()}
		if olderFullText {
			terms = 0
		} else if olderSystem {
			terms = termsFullText
		}
	case err != nil:
		return nil, err
	default:
		if st, terms, err = decodeIndexState(v, id); err != nil {
			return nil, err
		}
		if st.pol.Equal(cfg) {
			st.pol = cfg
		}
	}
	if terms < termsFullText {
		if st, err = st.olderTerms(); err != nil {
			return nil, err
		}
	}
	if terms < termsSystemPaths {
		return st.olderSystemPaths()
	}
	return st, nil
}

// olderSystemPaths is the state of a partition whose entries a build without the system
// paths' entries wrote: they follow the Legacy form of st's policies (_ts never indexed, id
// by the rules). Those join the earlier policies, in place of the ones they stand for, and
// the rebuild starts again from the first item, which adds the missing entries (the
// reindexing machinery, with nothing of its own: the engine resumes rebuilds in flight at
// every start, and a crash mid-rebuild resumes from the cursor its record kept, which this
// build wrote with termsSystemPaths). Until it is done, queries do not trust the index for
// id or _ts (IndexTrusted). Every replica derives the same state from the same record.
func (st *indexState) olderSystemPaths() (*indexState, error) {
	c := *st
	c.prevs, c.prevJSON = nil, nil
	for _, p := range append(slices.Clone(st.prevs), st.pol) {
		l, err := p.Legacy()
		if err != nil {
			return nil, err
		}
		if !indexing.ContainsEqual(c.prevs, l) {
			c.prevs = append(c.prevs, l)
			c.prevJSON = append(c.prevJSON, l.JSON())
		}
	}
	if len(c.prevs) == 1 && c.prevs[0].Equal(c.pol) {
		return st, nil // a policy that indexes nothing, as it did before: nothing to rebuild
	}
	c.cursor, c.done = 0, 0
	return &c, nil
}

// olderTerms is the state of a partition whose entries a build without full-text terms
// wrote: they follow st's policies without their full-text indexes. When st's policy has
// full-text indexes, that policy without them joins the earlier ones and the rebuild starts
// again from the first item, which adds their entries; until it is done, queries do not trust
// them (IndexTrusted). Every replica derives the same state from the same record.
func (st *indexState) olderTerms() (*indexState, error) {
	if len(st.pol.FullTextIndexes()) == 0 {
		// Queries never trust a full-text index the policy lacks, and one added later is
		// rebuilt from a state that holds this policy among the earlier ones.
		return st, nil
	}
	without, err := st.pol.WithoutFullText()
	if err != nil {
		return nil, err
	}
	c := *st
	c.prevs, c.prevJSON = slices.Clone(st.prevs), slices.Clone(st.prevJSON)
	if !indexing.ContainsEqual(c.prevs, without) {
		c.prevs = append(c.prevs, without)
		c.prevJSON = append(c.prevJSON, without.JSON())
	}
	c.cursor, c.done = 0, 0
	return &c, nil
}

// decodeIndexState reads an indexing record, with the Terms it was written for.
func decodeIndexState(v []byte, id uint32) (*indexState, int, error) {
	var rec indexingRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, 0, fmt.Errorf("partition %d: indexing record: %w", id, err)
	}
	pol, err := indexing.Parse(rec.Policy)
	if err != nil {
		return nil, 0, fmt.Errorf("partition %d: indexing record: %w", id, err)
	}
	st := &indexState{pol: pol, polJSON: pol.JSON(), cursor: rec.Cursor, done: rec.Done, recorded: true, recheck: rec.Recheck, checked: rec.Checked}
	for _, raw := range rec.Prevs {
		prev, err := indexing.ParseRecord(raw) // a Legacy form among them (olderSystemPaths)
		if err != nil {
			return nil, 0, fmt.Errorf("partition %d: indexing record: %w", id, err)
		}
		st.prevs = append(st.prevs, prev)
		st.prevJSON = append(st.prevJSON, raw)
	}
	return st, rec.Terms, nil
}

// Policy is the indexing policy the partition's writes follow.
func (p *Partition) Policy() *indexing.Policy { return p.ix.Load().pol }

// PolicyJSON is that policy as it was given.
func (p *Partition) PolicyJSON() json.RawMessage { return p.ix.Load().polJSON }

// IndexTrusted reports whether the range index holds every value at path of every item, so a
// query may read it instead of scanning: the policy indexes path and no rebuild is changing
// that.
//
// A replica of a container created before the system paths were indexed (mixedSystemPaths)
// never trusts the index for those the earlier build left out. In a cluster upgraded node by
// node, a leader of that build may write an item (after the rebuild passed it, or carrying on
// a rebuild step as its own state says) without their entries, and nothing in its entries
// tells this build so; queries on them read the items instead, exactly, until a rebuild begun
// once no such node is left went through every item (RecheckSystemPaths). Single nodes and
// containers created by this build are not affected.
func (p *Partition) IndexTrusted(path string) bool {
	st := p.ix.Load()
	if p.mixedSystemPaths && !st.checked && indexing.AlwaysIndexed(path) && (path == tsPath || !st.pol.IndexesByRules(path)) {
		return false
	}
	return st.pol.Indexes(path) && indexing.IndexedByAll(path, st.prevs...)
}

// ReindexProgress reports a rebuild in flight: the items it has passed and the partition's
// items now (done may pass items when items were deleted meanwhile). settled is true when
// nothing is in flight.
// A vector index's graph build (vectorbuild.go) is part of the rebuild: it runs once the
// range index is settled.
func (p *Partition) ReindexProgress() (done, items int64, settled bool) {
	st := p.ix.Load()
	if !st.settled() {
		return st.done, p.Stats().Items, false
	}
	if done, pending := p.vectorBuildProgress(); pending {
		return done, p.Stats().Items, false
	}
	return st.done, p.Stats().Items, true
}

// ChangePolicy makes the partition's index follow the indexing policy pol (its container's):
// from the next command on, writes follow it, and ReindexStep rebuilds the entries of the
// items written before. A policy that indexes nothing drops the index at once: nothing is
// rebuilt. A change while a rebuild runs restarts it towards the new policy, keeping the
// earlier policies that items may still follow. Changing to the policy the partition follows
// already does nothing but record it.
func (p *Partition) ChangePolicy(pol *indexing.Policy) error {
	var change *policyChange
	err := p.propose(func(_ state, ix *indexState) (*entry, error) {
		if ix.recorded && ix.settled() && ix.pol.Equal(pol) {
			return nil, nil
		}
		change = &policyChange{Policy: pol.JSON()}
		return &entry{kind: entryPolicy, policy: change, sync: true}, nil
	})
	if err == nil && change != nil {
		// The entry's policy is Equal to pol: let the partition use the caller's pointer.
		if ix := p.ix.Load(); ix.pol.Equal(pol) {
			p.ix.CompareAndSwap(ix, ix.withPolicy(pol))
		}
	}
	return err
}

// withPolicy is s following pol, a policy Equal to its own.
func (s *indexState) withPolicy(pol *indexing.Policy) *indexState {
	c := *s
	c.pol = pol
	return &c
}

// stagePolicy records a policy change.
func (a *applyBatch) stagePolicy(c *policyChange) error {
	pol, err := indexing.Parse(c.Policy)
	if err != nil {
		return err // an entry is checked before it is proposed: this replica differs
	}
	p, cur := a.p, a.ix
	if err := a.dropVectors(cur.pol, pol); err != nil {
		return err
	}
	next := &indexState{pol: pol, polJSON: pol.JSON(), recorded: true, recheck: cur.recheck, checked: cur.checked}
	if pol.IndexesNothing() {
		start, end := storage.IndexPartitionSpan(p.container, p.id)
		if err := a.b.DeleteRange(start, end); err != nil {
			return err
		}
		a.effects = append(a.effects, func() { p.capture(dropIndex{}) })
	} else {
		next.prevs = append(next.prevs, cur.prevs...)
		next.prevJSON = append(next.prevJSON, cur.prevJSON...)
		if !indexing.ContainsEqual(next.prevs, cur.pol) {
			next.prevs = append(next.prevs, cur.pol)
			next.prevJSON = append(next.prevJSON, cur.polJSON)
		}
		if len(next.prevs) == 1 && next.prevs[0].Equal(pol) {
			next.prevs, next.prevJSON = nil, nil // back to what every item follows
		}
	}
	return a.setIndexState(next)
}

// setIndexState records s as the index state from this entry on. A recheck that settles is
// done: the index is checked.
func (a *applyBatch) setIndexState(s *indexState) error {
	if s.recheck && s.settled() {
		c := *s
		c.recheck, c.checked = false, true
		s = &c
	}
	if err := s.put(a.b, a.p.container, a.p.id); err != nil {
		return err
	}
	a.dropCounts()
	a.ix = s
	p := a.p
	a.effects = append(a.effects, func() { p.ix.Store(s) })
	return nil
}

// ReindexStep rebuilds the index entries of the next maxItems items, or of as many as hold
// maxBytes of documents, from the rebuild's cursor. It reads and computes off the writer; the
// writer then commits the step as an entry, leaving out the items written meanwhile (a write
// leaves an item following the current policy). It reports whether the rebuild is complete,
// and the bytes of documents it read, for pacing. The entry is not synced on a single node: a
// later synced commit makes it durable, and a crash loses only steps, which are done again.
func (p *Partition) ReindexStep(maxItems, maxBytes int) (finished bool, read int, err error) {
	st := p.ix.Load()
	if st.settled() {
		return p.buildVectors(maxItems, maxBytes)
	}
	items, next, end, read, err := p.reindexRead(st, maxItems, maxBytes)
	if err != nil {
		return false, read, err
	}
	err = p.propose(func(_ state, ix *indexState) (*entry, error) {
		if ix != st {
			return nil, nil // a policy change came first; the next step starts from its state
		}
		step := &reindexStep{Cursor: next, Done: st.done, End: end}
		var buf []byte
		for _, x := range items {
			// The version read must still be the item's: otherwise a write rewrote its entries
			// under the current policy, or deleted them with the item.
			d, ok, err := p.committedDoc(&buf, x.EPK, x.Seq)
			if err != nil {
				return nil, err
			}
			step.Done++
			if ok && d.lsn() == x.lsn && len(x.Del)+len(x.Add) > 0 {
				step.Items = append(step.Items, x.reindexed)
			}
		}
		return &entry{kind: entryReindex, reindex: step}, nil
	})
	if err != nil {
		return false, read, err
	}
	if !p.ix.Load().settled() {
		return false, read, nil
	}
	_, pending := p.vectorBuildProgress() // the graphs' builds, if any, follow
	return !pending, read, nil
}

// readItem is an item a step read, with the LSN of the version it read.
type readItem struct {
	reindexed
	lsn uint64
}

// reindexRead reads the items of a step from a snapshot and computes their entry changes.
func (p *Partition) reindexRead(st *indexState, maxItems, maxBytes int) (items []readItem, next uint64, end bool, read int, err error) {
	snap := p.db.NewSnapshot()
	defer snap.Close()
	docs, err := p.docReader(snap)
	if err != nil {
		return nil, 0, false, 0, err
	}
	defer docs.close()
	docs.live = liveness{}
	next, end = st.cursor, true
	err = p.scanOrder(snap, docs, st.cursor, func(e []byte, seq uint64) (bool, error) {
		if len(items) >= maxItems || read >= maxBytes {
			end = false
			return false, nil
		}
		next = seq + 1
		d, ok, err := docs.get(e, seq)
		if err != nil || !ok {
			return err == nil, err
		}
		read += len(d.json)
		x := readItem{reindexed: reindexed{EPK: string(e), Seq: seq}, lsn: d.lsn()}
		// An item its write kept out of the index (the indexing directive Exclude) stays out
		// under any policy: its one entry, the marker, is right as it is; the step passes it.
		if out, err := p.isUnindexed(snap.Get, seq); out || err != nil {
			items = append(items, x)
			return err == nil, err
		}
		if x.Del, x.Add, err = rebuildDiff(d.json, st.pol, st.prevs, p.fullText); err != nil {
			return false, fault.New(fault.Internal, "stored item %d is not valid JSON: %w", seq, err)
		}
		items = append(items, x)
		return true, nil
	})
	return items, next, end, read, err
}

// stageReindex writes a step's entry changes and the index state after it.
func (a *applyBatch) stageReindex(s *reindexStep) error {
	p, cur := a.p, a.ix
	for _, x := range s.Items {
		for _, t := range x.Del {
			if err := a.b.Delete(storage.IndexKey(a.key[:0], p.container, p.id, t, x.Seq)); err != nil {
				return err
			}
		}
		for _, t := range x.Add {
			if bytes.Equal(t, unindexedTerm) {
				p.mayUnindexed.Store(true) // a manual policy: before the marker is visible
			}
			if err := a.b.Set(storage.IndexKey(a.key[:0], p.container, p.id, t, x.Seq), nil); err != nil {
				return err
			}
		}
	}
	next := &indexState{pol: cur.pol, polJSON: cur.polJSON, prevs: cur.prevs, prevJSON: cur.prevJSON,
		cursor: s.Cursor, done: s.Done, recorded: true, recheck: cur.recheck, checked: cur.checked}
	if s.End {
		next.prevs, next.prevJSON, next.cursor = nil, nil, 0
	}
	a.effects = append(a.effects, func() { p.capture(s) })
	return a.setIndexState(next)
}

// rebuildDiff is what a step changes in an item's entries, which follow one of prevs or pol:
// it removes its terms under any of prevs that pol does not give, and adds those of pol's
// that not every one of prevs gives (an entry set again is unchanged).
func rebuildDiff(body []byte, pol *indexing.Policy, prevs []*indexing.Policy, ft *searchpolicy.FullTextPolicy) (del, add [][]byte, err error) {
	cur, err := IndexTerms(body, pol, ft)
	if err != nil {
		return nil, nil, err
	}
	var union, inter [][]byte
	for i, prev := range prevs {
		t, err := IndexTerms(body, prev, ft)
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
// ft is the partition's full-text policy.
func (st *indexState) writeDiff(oldJSON []byte, old, new [][]byte, ft *searchpolicy.FullTextPolicy) (del, add [][]byte, err error) {
	union, inter := old, old
	for _, prev := range st.prevs {
		t, err := IndexTerms(oldJSON, prev, ft)
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

// inherit adds to b the index state of a split's child: it goes on from the parent's cursor
// (the children hold the same items, by the same creation sequences) with a share of the
// parent's progress in proportion to its items. A parent without a record leaves none.
func (s *indexState) inherit(b *storage.Batch, container, child uint32, childItems, parentItems int64) error {
	if !s.recorded {
		return nil
	}
	c := *s
	if parentItems > 0 && !s.settled() {
		c.done = s.done * childItems / parentItems
	}
	return c.put(b, container, child)
}
