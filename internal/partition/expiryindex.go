package partition

import (
	"container/heap"
	"sync"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/storage"
)

// The expiry index lets the reaper find what has expired at the cost of what it finds, not of
// the partition's size. It is kept in memory, by the node that reaps the partition: built by
// one read of the partition's items the first time the reaper asks (after the partition opens,
// or after time to live was turned on), then kept up to date by every write the partition
// applies. Nothing of it is stored, so the storage layout and every replica stay as they were.
//
// It is two heaps of hints, each naming a version by its document (EPK, creation sequence):
//
//	byTS      versions without a ttl of their own, by _ts: they expire at _ts plus the
//	          container's default, which may change at any time without changing this order
//	byExpiry  versions with a positive ttl of their own, by _ts + ttl
//
// A version with ttl -1 never expires and gets no hint. A write adds the hint of the version
// it writes and leaves the old one: the reaper drops a hint whose document is gone or no longer
// the version it named (its _ts or ttl differ) when it comes to the top, and the index is built
// anew when such hints outnumber the items by expiryStaleMax. A hint is only a
// candidate; the Expire operation deletes the item only if it is still expired.

// expiryHint names a version the reaper may find expired.
type expiryHint struct {
	at  int64 // byTS: the version's _ts; byExpiry: its _ts + ttl
	seq uint64
	epk string
}

type hintHeap []expiryHint

func (h hintHeap) Len() int           { return len(h) }
func (h hintHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h hintHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hintHeap) Push(x any)        { *h = append(*h, x.(expiryHint)) }
func (h *hintHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// expiryIndex is a partition's expiry hints.
type expiryIndex struct {
	mu             sync.Mutex
	byTS, byExpiry hintHeap
}

// add adds the hint of the version whose JSON is doc, (e, seq), and returns how many hints
// the index holds.
func (x *expiryIndex) add(e string, seq uint64, doc []byte) int {
	ts, ttl, own := document.ExpiryFields(doc)
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case !own:
		heap.Push(&x.byTS, expiryHint{at: ts, seq: seq, epk: e})
	case ttl > 0:
		heap.Push(&x.byExpiry, expiryHint{at: ts + ttl, seq: seq, epk: e})
	}
	return len(x.byTS) + len(x.byExpiry)
}

// expiryStaleMax bounds the hints of versions written again since (which stay until they come
// due) to the partition's items plus this many: past it the index is dropped and built again,
// a read of every item paid for by at least as many writes.
const expiryStaleMax = 1 << 16

// noteExpiry adds to the partition's expiry index, when it has one, the versions c writes.
func (p *Partition) noteExpiry(c *Command) {
	x := p.expiry.Load()
	if x == nil {
		return
	}
	for i := range c.Changes {
		ch := &c.Changes[i]
		if ch.Delete {
			continue
		}
		if d, err := decodeValue(ch.Value); err == nil && x.add(ch.EPK, ch.Seq, d.json) > int(p.Stats().Items)+expiryStaleMax {
			p.expiry.CompareAndSwap(x, nil)
			return
		}
	}
}

// buildExpiry builds the partition's expiry index: writes applied from now on add their hints,
// then a read of every item adds the rest (an item written meanwhile may get two hints).
func (p *Partition) buildExpiry() (*expiryIndex, ExpiredScan, error) {
	x := &expiryIndex{}
	p.expiry.Store(x)
	var scan ExpiredScan
	snap := p.db.NewSnapshot()
	defer snap.Close()
	lo, hi := storage.DocSpan(p.container, string(p.rng.Min), string(p.rng.Max))
	it, err := snap.NewIter(lo, hi)
	if err != nil {
		p.expiry.CompareAndSwap(x, nil)
		return nil, scan, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		d, err := decodeValue(it.Value())
		if err == nil {
			var e string
			var seq uint64
			if e, seq, err = storage.ParseDocKey(it.Key()); err == nil {
				x.add(e, seq, d.json)
			}
		}
		if err != nil {
			p.expiry.CompareAndSwap(x, nil)
			return nil, scan, err
		}
		scan.Read++
		scan.Bytes += len(d.json)
	}
	if err := it.Error(); err != nil {
		p.expiry.CompareAndSwap(x, nil)
		return nil, scan, err
	}
	return x, scan, nil
}

// dropExpiry forgets the expiry index; the next FindExpired builds it again.
func (p *Partition) dropExpiry() { p.expiry.Store(nil) }

// FindExpired returns up to max items that have expired as of now, from the expiry index
// (built first when the partition has none: Built is then set, and the build's reads counted).
// It finds nothing when time to live is off. The items are only candidates: an Expire
// operation deletes each if it is still expired when the writer decides it. Done is set when
// no more have expired now.
func (p *Partition) FindExpired(max int) ([]ExpiredItem, ExpiredScan, error) {
	live := p.liveness()
	if live.def == TTLOff {
		return nil, ExpiredScan{Done: true}, nil
	}
	var scan ExpiredScan
	x := p.expiry.Load()
	if x == nil {
		var err error
		if x, scan, err = p.buildExpiry(); err != nil {
			return nil, scan, err
		}
		scan.Built = true
	}
	var (
		found []ExpiredItem
		docs  *docReader
	)
	for len(found) < max {
		// The hints are taken under the lock and checked outside it: the writer adds hints
		// as it applies, and must not wait for these reads.
		due := x.takeDue(live, max-len(found))
		if len(due) == 0 {
			break
		}
		if docs == nil { // only a round that has something due reads storage
			snap := p.db.NewSnapshot()
			defer snap.Close()
			var err error
			if docs, err = p.docReader(snap); err != nil {
				x.putBack(due)
				return found, scan, err
			}
			defer docs.close()
			docs.live = liveness{} // this read wants the expired ones
		}
		for i, h := range due {
			d, ok, err := docs.get([]byte(h.epk), h.seq)
			if err != nil {
				x.putBack(due[i:])
				return found, scan, err
			}
			if !ok {
				continue // deleted since
			}
			scan.Read++
			scan.Bytes += len(d.json)
			ts, ttl, own := document.ExpiryFields(d.json)
			if h.own != own || own && ts+ttl != h.at || !own && ts != h.at {
				continue // written again since: its hint is elsewhere
			}
			if live.expiredIn(h.epk, d) {
				found = append(found, ExpiredItem{EPK: epk.EPK(h.epk), ID: string(d.id), Seq: h.seq})
			}
		}
	}
	scan.Done = len(found) < max
	return found, scan, nil
}

// dueHint is a hint taken from the index, and which heap it came from.
type dueHint struct {
	expiryHint
	own bool // from byExpiry
}

// takeDue removes from the index and returns up to max hints that are due at l.now.
func (x *expiryIndex) takeDue(l liveness, max int) []dueHint {
	x.mu.Lock()
	defer x.mu.Unlock()
	var due []dueHint
	for len(due) < max && x.byTS.Len() > 0 && l.def > 0 && x.byTS[0].at+l.def <= l.now {
		due = append(due, dueHint{expiryHint: heap.Pop(&x.byTS).(expiryHint)})
	}
	for len(due) < max && x.byExpiry.Len() > 0 && x.byExpiry[0].at <= l.now {
		due = append(due, dueHint{expiryHint: heap.Pop(&x.byExpiry).(expiryHint), own: true})
	}
	return due
}

// putBack returns hints takeDue took.
func (x *expiryIndex) putBack(hints []dueHint) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, h := range hints {
		if h.own {
			heap.Push(&x.byExpiry, h.expiryHint)
		} else {
			heap.Push(&x.byTS, h.expiryHint)
		}
	}
}

// Unreaped gives back the hints of items FindExpired found that could not be deleted (their
// Expire operation failed), so that a later call finds them again.
func (p *Partition) Unreaped(items []ExpiredItem) {
	x := p.expiry.Load()
	if x == nil || len(items) == 0 {
		return
	}
	snap := p.db.NewSnapshot()
	defer snap.Close()
	for _, it := range items {
		if v, err := snap.Get(nil, storage.DocKey(nil, p.container, string(it.EPK), it.Seq)); err == nil {
			if d, err := decodeValue(v); err == nil {
				x.add(string(it.EPK), it.Seq, d.json)
			}
		}
	}
}
