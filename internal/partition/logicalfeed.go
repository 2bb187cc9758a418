package partition

import (
	"cmp"
	"slices"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/storage"
)

// The latest-version feed of a few items. A feed scoped to a logical partition (or any narrow
// range) read through the log passes every change of the physical partition after its
// continuation, most of them to other items. When the range holds fewer items than that, it
// is cheaper to read the items themselves: each document names the log entry of its version,
// and the latest-version feed is exactly the current versions whose entries come after the
// continuation, in log order. Its page may still come soon after the continuation in the log
// (the range was written in a burst, or lately), so readLog reads the log first all the same,
// but no more of its entries than the range holds items; then, if the page is not full, the
// items for the changes after the last LSN it passed. So the read costs at most twice the
// items of its range, never the rest of the partition's changes, and returns what the log
// would have returned.

// logicalFeedMax bounds the items a range may hold for its feed to be read from its items: a
// page of a larger range reads its changes from the log, which then costs less per change.
var logicalFeedMax uint64 = 10_000 // a variable for tests, which compare the two reads

// itemsIn counts the items of the range [lo, hi) from its logical partitions' records, up to
// one past limit: past it, the count stops.
func (p *Partition) itemsIn(snap *storage.Snapshot, lo, hi epk.EPK, limit uint64) (uint64, error) {
	start, end := storage.LogicalSpan(p.container, string(lo), string(hi))
	it, err := snap.NewIter(start, end)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var n uint64
	// NextPrefix: every write to a logical partition rewrites its record (see storage.Iter).
	for it.First(); it.Valid(); it.NextPrefix() {
		c, _, err := decodeCounts(it.Value())
		if err != nil {
			return 0, err
		}
		if n += uint64(c.Items); n > limit {
			break
		}
	}
	return n, it.Error()
}

// readLatestByItems is readLog's latest-version read of the range [lo, hi), found from its
// items: their current versions written after q.After, in log order, each with its log entry,
// passed to fn with readLog's paging (through is what a read that reaches the end returns).
func (p *Partition) readLatestByItems(snap *storage.Snapshot, docs *docReader, live liveness, lo, hi epk.EPK,
	q LogRead, through uint64, fn func(*LogChange) bool) (uint64, error) {
	type version struct {
		pos logPos
		seq uint64
		epk string
	}
	var found []version
	start, end := storage.DocSpan(p.container, string(lo), string(hi))
	it, err := snap.NewIter(start, end)
	if err != nil {
		return 0, err
	}
	for it.First(); it.Valid(); it.Next() {
		d, err := decodeValue(it.Value())
		if err != nil {
			it.Close()
			return 0, err
		}
		if d.log.lsn <= q.After {
			continue
		}
		e, seq, err := storage.ParseDocKey(it.Key())
		if err != nil {
			it.Close()
			return 0, err
		}
		found = append(found, version{pos: d.log, seq: seq, epk: e})
	}
	err = it.Error()
	it.Close()
	if err != nil {
		return 0, err
	}
	slices.SortFunc(found, func(a, b version) int {
		return cmp.Or(cmp.Compare(a.pos.lsn, b.pos.lsn), cmp.Compare(a.pos.i, b.pos.i))
	})
	var (
		c       LogChange
		key     []byte
		stopAt  uint64
		stopped bool
	)
	for _, v := range found {
		if stopped && v.pos.lsn != stopAt {
			return stopAt, nil
		}
		key = storage.LogKey(key[:0], p.container, p.id, v.pos.lsn, v.pos.i)
		raw, err := snap.Get(nil, key)
		if storage.IsNotFound(err) {
			continue // a version with no entry is not in the log's feed either
		}
		if err != nil {
			return 0, err
		}
		ent, err := decodeEntry(raw)
		if err != nil {
			return 0, err
		}
		cur, ok, err := docs.get([]byte(v.epk), v.seq)
		if err != nil {
			return 0, err
		}
		if !ok || live.expiredIn(v.epk, cur) { // judged only for what is passed, as the log's read does
			continue
		}
		c = LogChange{LSN: v.pos.lsn, Op: ent.op, TS: ent.ts, EPK: ent.epk, ID: ent.id, PrevLSN: ent.prev.lsn,
			Current: true, JSON: cur.json}
		if !fn(&c) && !stopped {
			stopped, stopAt = true, v.pos.lsn
		}
	}
	if stopped {
		return stopAt, nil
	}
	return through, nil
}
