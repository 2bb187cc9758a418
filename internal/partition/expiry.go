package partition

import (
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// Time to live. An item's expiry is never stored: it is computed, when the container has time
// to live on, from what the item's JSON says (its "_ts" and its own "ttl") and the container's
// default, as of the partition's clock. So a change of the default applies at once to every
// item, a restart or a split changes nothing, and a container with time to live off pays one
// atomic load per read.
//
// An expired item is absent for every read and write from the moment it expires. It is still
// stored until it is deleted by a command that logs the delete as expired: the engine's reaper
// (an Expire operation) or a create or upsert of the same id, which deletes the expired version
// first, in the same command.

// Default time-to-live settings of a container, as partitions hold them: TTLOff, TTLNoDefault,
// or a positive number of seconds after an item's last write.
const (
	TTLOff       int64 = 0  // items never expire; their "ttl" is ignored
	TTLNoDefault int64 = -1 // only items with a positive "ttl" of their own expire
)

// SetDefaultTTL changes the container's default time to live as this partition applies it
// (TTLOff, TTLNoDefault or seconds). Reads and writes after it see items expire accordingly.
func (p *Partition) SetDefaultTTL(d int64) {
	p.defaultTTL.Store(d)
	if d == TTLOff {
		p.dropExpiry() // nothing to reap; built again when time to live is on
	}
}

// now is the partition's clock in Unix seconds: the time writes stamp as _ts and expiry is
// judged by.
func (p *Partition) now() int64 {
	if p.clock != nil {
		return p.clock()
	}
	return time.Now().Unix()
}

// liveness judges, as of one instant, whether stored versions are gone: expired, or deleted
// with their logical partition (keydelete.go). Its zero value (time to live off, no key being
// deleted) judges every version live.
type liveness struct {
	def  int64 // the container's default; TTLOff when off
	now  int64
	gone keyDeletes // nil when no logical partition is being deleted
}

// liveness returns the judge of expiry as of now; it reads the clock only when time to live is
// on.
func (p *Partition) liveness() liveness {
	l := liveness{gone: p.keyDeletes()}
	if d := p.defaultTTL.Load(); d != TTLOff {
		l.def, l.now = d, p.now()
	}
	return l
}

// expiredAt reports whether version d of an item of the logical partition e is gone at now
// (Unix seconds); never when time to live is off and no key is being deleted, which costs two
// atomic loads.
func (p *Partition) expiredAt(now int64, e string, d stored) bool {
	l := liveness{def: p.defaultTTL.Load(), gone: p.keyDeletes()}
	if l.def != TTLOff {
		l.now = now
	}
	return l.expiredIn(e, d)
}

// expired reports whether version d of an item of the logical partition e is gone.
func (l liveness) expired(e []byte, d stored) bool {
	if l.gone != nil {
		if bound, ok := l.gone[string(e)]; ok && d.lsn() <= bound {
			return true
		}
	}
	return l.expiredJSON(d.json)
}

// expiredIn is expired of an EPK held as a string. Both forms are kept so that neither caller
// converts (a []byte converted for the map lookup alone is not copied).
func (l liveness) expiredIn(e string, d stored) bool {
	if l.gone != nil {
		if bound, ok := l.gone[e]; ok && d.lsn() <= bound {
			return true
		}
	}
	return l.expiredJSON(d.json)
}

// expiredJSON reports whether the version whose JSON is doc has outlived its time to live.
func (l liveness) expiredJSON(doc []byte) bool {
	if l.def == TTLOff {
		return false
	}
	ts, ttl, own := document.ExpiryFields(doc)
	if !own {
		ttl = l.def
	}
	return ttl > 0 && l.now >= ts+ttl
}

// expireChange appends to cmd the deletion of the current version cur (old decoded) of item
// (e, id), which is gone, and whose logical partition's statistics are lp, and returns those
// statistics after it. The deletion is logged as expired when time to live made the version
// gone, as a plain delete when the deletion of its logical partition did. ix is the index state the writer decides under: while a rebuild runs,
// the version's entries may follow an earlier policy. Its unique key entries go with it.
func (p *Partition) expireChange(cmd *Command, ix *indexState, e, id string, cur version, old stored, lp counts) (counts, error) {
	bad := func(err error) (counts, error) {
		return lp, fault.New(fault.Internal, "stored item is not valid JSON: %w", err)
	}
	terms := cur.terms
	if !cur.hasTerms || cur.pol != nil && cur.pol != ix.pol {
		var err error
		if terms, err = p.storedTerms(old.json, cur.seq, ix.pol); err != nil {
			return bad(err)
		}
	}
	size := int64(len(old.json))
	ch := Change{EPK: e, ID: id, Seq: cur.seq, Delete: true, Expired: p.liveness().expiredJSON(old.json), Prev: old.log, PrevJSON: old.json,
		Logical: lp.add(-1, -size)}
	if ix.settled() {
		ch.IndexDel, _ = termDiff(terms, nil)
	} else {
		var err error
		if ch.IndexDel, _, err = ix.writeDiff(old.json, terms, nil, p.fullText); err != nil {
			return bad(err)
		}
	}
	if p.unique != nil {
		if ch.UniqueDel = cur.uniq; ch.UniqueDel == nil {
			v, err := value.Parse(old.json)
			if err != nil {
				return bad(err)
			}
			ch.UniqueDel = p.unique.Entries(v)
		}
	}
	cmd.After.counts = cmd.After.add(-1, -size)
	cmd.Changes = append(cmd.Changes, ch)
	return ch.Logical, nil
}

// ExpiredItem names an item FindExpired found expired.
type ExpiredItem struct {
	EPK epk.EPK
	ID  string
	Seq uint64 // its creation sequence
}

// ExpiredScan is what a FindExpired call read.
type ExpiredScan struct {
	Done  bool // no more items have expired now
	Built bool // the call built the partition's expiry index (expiryindex.go) first
	Read  int  // documents read
	Bytes int  // their bytes
}

// writeOverExpired is what an operation does on finding the item's current version expired: a
// create, an upsert or an Expire deletes that version first, in the same command, so that the
// log shows the expiry before what follows; any other kind finds the item absent and changes
// nothing (the reaper deletes it later). It returns the item's version and statistics as the
// rest of the operation sees them.
func (p *Partition) writeOverExpired(cmd *Command, ix *indexState, w *Operation, cur version, old stored, lp counts) (version, stored, counts, error) {
	switch w.Kind {
	case Create, Upsert, Expire:
		var err error
		if lp, err = p.expireChange(cmd, ix, string(w.EPK), w.ID, cur, old, lp); err != nil {
			return cur, old, lp, err
		}
	}
	return version{}, stored{}, lp, nil
}
