package partition

import (
	"errors"
	"sync"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
)

// Consistency is what a read of a replica waits for before it reads: Cosmos DB's levels as
// one replica can serve them. A follower that serves a read without asking its leader is what
// lets reads spread over a partition's replicas; what it may show is what the level allows.
// The zero Consistency is Linearizable, which every read of a single node is in any case:
// there, each write is applied before it is acknowledged.
type Consistency struct {
	Level ReadLevel
	// LSN, for Session, is the partition's LSN the read must see: the session token's.
	LSN uint64
	// Refuse, for Session, refuses a read the replica has not reached within SessionWait
	// at once, without catching up through its leader: the caller has another replica to
	// ask.
	Refuse bool
	// MaxLag and MaxAge, for Bounded, are the bound: how many entries of its group's log,
	// and how long, the replica may be behind (Cosmos DB's K and T). MaxAge > 0.
	MaxLag uint64
	MaxAge time.Duration
}

// ReadLevel is a Consistency's kind.
type ReadLevel uint8

const (
	// Linearizable reads see every write acknowledged before they began: the replica first
	// applies the read index its group's leader confirms (Strong, Bounded Staleness).
	Linearizable ReadLevel = iota
	// Session reads see every write up to the LSN given, and whatever else the replica has
	// applied: a replica that has not reached it waits, at most SessionWait, and then
	// catches up as a Linearizable read does; one that cannot (cut off from its leader), or
	// whose group never reached the LSN, refuses with ErrSessionNotAvailable.
	Session
	// Prefix reads what the replica has applied: a prefix of its group's log, never a write
	// without those before it, perhaps behind the leader (Consistent Prefix, Eventual).
	Prefix
	// Bounded reads a prefix at most MaxAge behind the group's writes: the replica serves
	// what it applied once it has applied a read index confirmed less than MaxAge ago (it
	// misses no write acknowledged before that confirmation) and is no more than MaxLag
	// entries behind the commit index its leader last told it; else it confirms one afresh,
	// as a Linearizable read does. It confirms again in the background once half of MaxAge
	// has passed, so that a replica read steadily seldom waits for its leader (Bounded
	// Staleness).
	Bounded
)

// SessionWait bounds how long a replica behind a session token waits for its log to reach the
// token before it asks its leader how far to catch up: replication lag is milliseconds.
const SessionWait = 200 * time.Millisecond

// ErrSessionNotAvailable refuses a session read a replica cannot serve: it has not applied the
// session token's LSN. Another replica, or the leader, can serve it.
var ErrSessionNotAvailable = fault.SessionUnavailable()

// await waits until the partition may serve a read at c.
func (p *Partition) await(c Consistency) error {
	l, ok := p.log.(*replicatedLog)
	if !ok {
		return nil // a single node's partition applies every write before it is acknowledged
	}
	switch c.Level {
	case Prefix:
		return nil
	case Bounded:
		return p.awaitBounded(l, c)
	case Session:
		if err := p.awaitApplied(l, SessionWait, func(st *state) bool { return st.LSN >= c.LSN }); err != errBehind {
			return err
		}
		if c.Refuse {
			return ErrSessionNotAvailable
		}
		// Still behind: catch up as a linearizable read does, to the commit index the
		// leader confirms. A token further on than that is from no write the group knows.
		if err := p.readBarrier(); err != nil {
			if errors.Is(err, errClosed) {
				return err
			}
			return ErrSessionNotAvailable // cut off from its leader
		}
		if p.published.Load().LSN < c.LSN {
			return ErrSessionNotAvailable
		}
		return nil
	}
	return p.readBarrier()
}

// freshness is the last read index a replica confirmed with its leader and applied, for
// Bounded reads.
type freshness struct {
	mu    sync.Mutex
	index uint64
	// at is when the confirmation was asked for: every write acknowledged before it is at
	// or below index.
	at         time.Time
	refreshing bool // a confirmation runs in the background
}

// awaitBounded waits until the partition may serve a Bounded read (see Bounded).
func (p *Partition) awaitBounded(l *replicatedLog, c Consistency) error {
	if c.MaxAge <= 0 {
		return p.readBarrier()
	}
	f := &l.fresh
	f.mu.Lock()
	index, age := f.index, time.Since(f.at)
	if age >= c.MaxAge/2 && age < c.MaxAge && !f.refreshing {
		f.refreshing = true
		go func() {
			p.confirmFresh(l)
			f.mu.Lock()
			f.refreshing = false
			f.mu.Unlock()
		}()
	}
	f.mu.Unlock()
	if age < c.MaxAge {
		err := p.awaitApplied(l, SessionWait, func(st *state) bool {
			return st.Applied >= index && l.r.Committed() <= st.Applied+c.MaxLag
		})
		if err != errBehind {
			return err
		}
	}
	return p.confirmFresh(l)
}

// confirmFresh confirms a read index with the leader, as a Linearizable read does, and waits
// until the replica applied it: what Bounded reads are then served from.
func (p *Partition) confirmFresh(l *replicatedLog) error {
	at := time.Now()
	index, err := p.confirmedIndex(false)
	if err != nil {
		return err
	}
	f := &l.fresh
	f.mu.Lock()
	if at.After(f.at) {
		f.index, f.at = index, at
	}
	f.mu.Unlock()
	return nil
}

// errBehind: the replica did not reach what a read waits for in time.
var errBehind = errors.New("partition: behind the session token")

// awaitApplied waits, at most within, until reached holds of the state the partition has
// published: errBehind when it does not in time.
func (p *Partition) awaitApplied(l *replicatedLog, within time.Duration, reached func(*state) bool) error {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		ch := l.applied
		l.mu.Unlock()
		if reached(p.published.Load()) {
			return nil
		}
		select {
		case <-ch:
		case <-p.closing:
			return errClosed
		case <-deadline.C:
			return errBehind
		}
	}
}

// Reader reads a partition at a consistency (Partition.At). Partition's own read methods are
// Linearizable.
type Reader struct {
	p *Partition
	c Consistency
}

// At is a Reader of p at c.
func (p *Partition) At(c Consistency) Reader { return Reader{p, c} }

// Await waits until the partition may serve a read at rd's consistency, for a read of what
// it publishes without reading storage (its statistics).
func (rd Reader) Await() error { return rd.p.await(rd.c) }

// Read is Partition.Read at rd's consistency.
func (rd Reader) Read(e epk.EPK, id string, dst []byte) (Doc, error) {
	return rd.p.readAt(rd.c, e, id, dst)
}

// Scan is Partition.Scan at rd's consistency.
func (rd Reader) Scan(ranges []epk.Range, from uint64, fn func(d Doc) bool) error {
	return rd.p.scanAt(rd.c, ranges, from, fn)
}

// ScanItems is Partition.ScanItems at rd's consistency.
func (rd Reader) ScanItems(lo, hi ItemPos, reverse bool, fn func(d Doc) bool) error {
	return rd.p.scanItems(rd.c, lo, hi, reverse, fn)
}

// IndexScan is Partition.IndexScan at rd's consistency.
func (rd Reader) IndexScan(path string, lo, hi []byte, ranges []epk.Range, from uint64, fn func(d Doc) bool) error {
	return rd.p.indexScan(rd.c, path, lo, hi, ranges, from, fn)
}

// IndexScanValues is Partition.IndexScanValues at rd's consistency.
func (rd Reader) IndexScanValues(path string, values [][]byte, ranges []epk.Range, from uint64, fn func(d Doc) bool) error {
	return rd.p.indexScanValues(rd.c, path, values, ranges, from, fn)
}

// FullTextStats is Partition.FullTextStats at rd's consistency.
func (rd Reader) FullTextStats(path string, tokens []string, r epk.Range) (FullTextStats, bool, error) {
	return rd.p.fullTextStats(rd.c, path, tokens, r)
}

// IndexOrdered is Partition.IndexOrdered at rd's consistency.
func (rd Reader) IndexOrdered(r OrderedRead, fn func(d Doc, value []byte) bool) (ok bool, err error) {
	return rd.p.indexOrdered(rd.c, r, fn)
}

// ReadLog is Partition.ReadLog at rd's consistency.
func (rd Reader) ReadLog(q LogRead, fn func(*LogChange) bool) (through uint64, err error) {
	return rd.p.readLog(rd.c, q, fn)
}
