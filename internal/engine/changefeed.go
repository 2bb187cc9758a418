package engine

import (
	"errors"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/ru"
)

// FeedStart is where a change feed read begins.
type FeedStart struct {
	// After, when HasAfter, continues a previous read: changes with larger LSNs. It is the LSN
	// a previous page returned, valid in the partition that returned it and, after splits, in
	// all its descendants.
	After    uint64
	HasAfter bool
	// Now starts after the changes committed so far.
	Now bool
	// Since, when not zero, skips changes committed before it (a point in time).
	Since time.Time
}

// FeedQuery is one page request of a change feed.
type FeedQuery struct {
	Range       epk.Range // the items whose changes are read; within one physical partition
	Start       FeedStart
	AllVersions bool // every change, deletes included; else the latest version of each item
	Max         int  // changes per page (0: DefaultPageSize); a command's changes stay together
	// Consistency is the client's (the zero value for a read that is not a client's).
	Consistency ReadConsistency
	// Priority is the client's request's priority level.
	Priority ru.Priority
	// delegated: another node sent the read here; it is not sent on (readsElsewhere), which
	// could send it back.
	delegated bool
}

// ChangeOp is what a change did.
type ChangeOp uint8

const (
	ChangeCreate ChangeOp = iota + 1
	ChangeReplace
	ChangeDelete
)

func (o ChangeOp) String() string {
	switch o {
	case ChangeCreate:
		return "create"
	case ChangeReplace:
		return "replace"
	case ChangeDelete:
		return "delete"
	}
	return "unknown"
}

// changeOps maps the partition's log operations to the engine's.
var changeOps = map[partition.LogOp]ChangeOp{
	partition.LogCreate: ChangeCreate, partition.LogReplace: ChangeReplace, partition.LogDelete: ChangeDelete,
}

// FeedChange is one change of a page.
type FeedChange struct {
	LSN     uint64
	Op      ChangeOp
	TS      int64  // commit time, Unix seconds
	ID      string // the item's id
	JSON    []byte // the version written; nil for a delete (and an all-versions image not kept)
	PrevLSN uint64 // the version replaced or deleted; 0 for a create
	Prev    []byte // for a delete in all-versions mode: the deleted version, when kept
	// Key is a deleted item's partition key, one value per path of PartitionKeyPaths, when
	// its deleted version was kept.
	Key epk.Key
	// Expired marks a delete made because the item's time to live ran out.
	Expired bool
}

// FeedPage is one page of a change feed.
type FeedPage struct {
	Changes []FeedChange
	// Through is the LSN the page read through: the next page asks for the changes after it.
	Through uint64
	// Partition is the physical partition read, and LSN its LSN, for the session token.
	Partition uint32
	LSN       uint64
	Charge    float64
}

// ChangeFeed reads one page of the changes to the items of q.Range, which must lie within
// one physical partition (the SDKs read the feed one partition key range, logical partition
// or feed range at a time). Changes come in LSN order, which within a logical partition is
// the order they were made in.
func (c *Container) ChangeFeed(q FeedQuery) (FeedPage, error) {
	c.splitMu.RLock()
	defer c.splitMu.RUnlock()
	if q.Max <= 0 {
		q.Max = DefaultPageSize
	}
	if q.AllVersions && c.e.opts.ChangeFeedRetention <= 0 {
		return FeedPage{Charge: ru.Miss()}, fault.New(fault.BadRequest,
			"The all-versions-and-deletes change feed is turned off on this server (--change-feed-retention 0)")
	}
	var p *partition.Partition
	rt := c.routes.Load()
	if q.Range.Min >= q.Range.Max { // an empty scope (a key outside the range named) has no changes
		q.Range.Max = q.Range.Min
		p = rt.lookup(q.Range.Min)
	}
	spans := func() (FeedPage, error) {
		return FeedPage{Charge: ru.Miss()}, fault.New(fault.BadRequest,
			"The change feed is read one partition key range at a time, and this request spans several; "+
				"name one with x-ms-documentdb-partitionkeyrangeid (GET .../pkranges lists them)")
	}
	for _, pp := range rt.parts {
		if pr := pp.Range(); q.Range.Min < q.Range.Max && pr.Min < q.Range.Max && q.Range.Min < pr.Max {
			if p != nil {
				return spans()
			}
			p = pp
		}
	}
	if rr, ok := rt.remoteAt(q.Range.Min); ok && p == nil {
		if q.Range.Max > rr.r.Max {
			return spans()
		}
		return remoteCalls{c: c, rr: rr}.feed(q)
	}
	if p == nil {
		return FeedPage{Charge: ru.Miss()}, fault.New(fault.BadRequest, "The change feed request names an empty range")
	}
	if _, ok := rt.remoteAt(p.Range().Max); ok && q.Range.Max > p.Range().Max {
		return spans()
	}
	return localCalls{c: c, p: p}.feed(q)
}

// readFeed reads a page of the change feed of q.Range from this node's replica p.
func (c *Container) readFeed(p *partition.Partition, q FeedQuery) (FeedPage, error) {
	if err := c.admit(q.Priority, p); err != nil {
		return FeedPage{}, err
	}
	page := FeedPage{Partition: p.ID()}
	read := partition.LogRead{Range: q.Range, AllVersions: q.AllVersions}
	switch {
	case q.Start.HasAfter:
		read.After = q.Start.After
	case q.Start.Now:
		read.After = p.Stats().LSN
	}
	if !q.Start.Since.IsZero() {
		read.Since = q.Start.Since.Unix()
	}
	bytes := 0
	through, err := c.reader(p, q.Consistency).ReadLog(read, func(ch *partition.LogChange) bool {
		fc := FeedChange{LSN: ch.LSN, Op: changeOps[ch.Op], TS: ch.TS, ID: string(ch.ID), PrevLSN: ch.PrevLSN, Expired: ch.Expired}
		if ch.JSON != nil {
			fc.JSON = append([]byte(nil), ch.JSON...)
		}
		if ch.Prev != nil {
			fc.Prev = append([]byte(nil), ch.Prev...)
			if ch.Op == partition.LogDelete {
				if _, key, err := document.Parse(fc.Prev, c.paths); err == nil {
					fc.Key = key
				}
			}
		}
		page.Changes = append(page.Changes, fc)
		bytes += len(fc.JSON) + len(fc.Prev)
		return len(page.Changes) < q.Max
	})
	if err != nil {
		page.Charge = ru.Miss() * q.Consistency.readFactor()
		spend(page.Charge, q.Priority, p)
		var fe *fault.Error
		if errors.Is(err, partition.ErrLogPurged) || errors.As(err, &fe) {
			return page, err // a refusal the client can act on (a session not available here, ...)
		}
		return page, fault.New(fault.Internal, "reading the change feed: %w", err)
	}
	page.Through = through
	page.LSN = p.Stats().LSN
	page.Charge = ru.Feed(len(page.Changes), bytes, 1) * q.Consistency.readFactor()
	spend(page.Charge, q.Priority, p)
	return page, nil
}

// purgeEvery is how often the change feed's retention is applied: a 24th of it, between a
// minute and an hour (retention 0: every minute).
func (e *Engine) purgeEvery() time.Duration {
	return min(max(e.opts.ChangeFeedRetention/24, time.Minute), time.Hour)
}

// purgeLogsOnce purges the logs of every container as of now.
func (e *Engine) purgeLogsOnce(now time.Time) {
	cutoff := now.Add(-max(e.opts.ChangeFeedRetention, 0)).Unix()
	e.mu.RLock()
	var cs []*Container
	for _, d := range e.dbs {
		for _, c := range d.containers {
			cs = append(cs, c)
		}
	}
	e.mu.RUnlock()
	for _, c := range cs {
		for _, p := range c.partitions() {
			select {
			case <-e.stop:
				return
			default:
			}
			if !e.keepsUp(p) {
				continue // its leader's node purges it, for every replica
			}
			// A split that closes p meanwhile refuses this; its children are purged next time.
			removed, _, err := p.PurgeLog(cutoff)
			if err != nil {
				if e.live(c) && fault.KindOf(err) != fault.Gone {
					e.log.Error("change feed retention", "container", c.rec.ID, "partition", p.ID(), "err", err)
				}
				continue
			}
			if removed > 0 {
				e.log.Info("change feed retention", "container", c.rec.ID, "partition", p.ID(), "removed", removed)
			}
		}
	}
}
