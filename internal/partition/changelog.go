package partition

import (
	"encoding/binary"
	"errors"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/storage"
)

// The change log is a partition's change feed: one entry per change, keyed by the partition,
// the LSN of its command and its place in it, written in the command's batch, so there is
// never a write without its entry nor an entry without its write.
//
// An entry names the item and the version it replaced; it does not copy the document. While a
// version is current its JSON is the document itself; when a later change replaces or deletes
// it, that change's batch writes the version's JSON as an image, keyed by the item's EPK and
// the position of the entry that wrote it (when the partition keeps images, for the
// all-versions feed). So a create costs a small entry, and a replace one more copy of the
// version it replaces, which the all-versions feed must keep anyway.
//
// The children of a split continue their parent's LSNs, and the split gives each child the
// parent's entries of its range (split.go); images, keyed by EPK, stay where they are. A
// position the parent handed out is valid in both children, and no change is lost or
// repeated.

// LogOp is what a logged change did.
type LogOp uint8

const (
	LogCreate  LogOp = 1
	LogReplace LogOp = 2
	LogDelete  LogOp = 3
)

// logExpired is set in an entry's op byte when the change is a delete made because the item
// expired. Entries written before time to live existed never have it, so they read as before.
const logExpired = 0x80

func (o LogOp) String() string {
	switch o {
	case LogCreate:
		return "create"
	case LogReplace:
		return "replace"
	case LogDelete:
		return "delete"
	}
	return "unknown"
}

// logEntry is a decoded entry value:
// op(1, with logExpired on an expiry's delete) uvarint(seq) varint(ts) uvarint(prev.lsn)
// uvarint(prev.i) uvarint(len(EPK)) EPK uvarint(len(id)) id.
type logEntry struct {
	op   LogOp
	seq  uint64
	ts   int64
	prev logPos // the version this change replaced or deleted; zero for a create
	epk  []byte
	id   []byte
	// expired marks a delete made by time to live.
	expired bool
}

func appendEntry(dst []byte, op LogOp, seq uint64, ts int64, prev logPos, e, id string) []byte {
	dst = append(dst, byte(op))
	dst = binary.AppendUvarint(dst, seq)
	dst = binary.AppendVarint(dst, ts)
	dst = prev.append(dst)
	dst = binary.AppendUvarint(dst, uint64(len(e)))
	dst = append(dst, e...)
	dst = binary.AppendUvarint(dst, uint64(len(id)))
	return append(dst, id...)
}

var errBadEntry = errors.New("partition: malformed log entry")

func decodeEntry(v []byte) (logEntry, error) {
	if len(v) < 1 {
		return logEntry{}, errBadEntry
	}
	op, expired := LogOp(v[0]&^logExpired), v[0]&logExpired != 0
	if op < LogCreate || op > LogDelete || expired && op != LogDelete {
		return logEntry{}, errBadEntry
	}
	f := fields{v: v[1:], ok: true}
	e := logEntry{op: op, expired: expired, seq: f.uvarint(), ts: f.varint(), prev: f.logPos()}
	e.epk, e.id = f.bytes(), f.bytes()
	if !f.ok || len(f.v) != 0 {
		return logEntry{}, errBadEntry
	}
	return e, nil
}

// entryOf is the log entry of change i of c: its value, appended to dst.
func entryOf(dst []byte, c *Command, i int) []byte {
	ch := &c.Changes[i]
	op := LogReplace
	switch {
	case ch.Delete:
		op = LogDelete
	case ch.New:
		op = LogCreate
	}
	n := len(dst)
	dst = appendEntry(dst, op, ch.Seq, c.TS, ch.Prev, ch.EPK, ch.ID)
	if ch.Expired {
		dst[n] |= logExpired
	}
	return dst
}

// stageLog adds the entry of change i of c, and the image of the version it replaces.
func (a *applyBatch) stageLog(c *Command, i int) error {
	p := a.p
	ch := &c.Changes[i]
	a.key = storage.LogKey(a.key[:0], p.container, p.id, c.LSN, uint16(i))
	n := len(a.key)
	a.key = entryOf(a.key, c, i)
	if err := a.b.Set(a.key[:n], a.key[n:]); err != nil {
		return err
	}
	ch.dropPrev = ch.Prev.lsn != 0 && ch.Prev.lsn <= a.st.Purged
	if ch.dropPrev {
		// Past the purge point no all-versions read reaches the replaced version's entry, and
		// the latest-version feed wants only current ones: it goes now, with no image, so
		// retention never has to look behind its purge point again.
		a.key = storage.LogKey(a.key[:0], p.container, p.id, ch.Prev.lsn, ch.Prev.i)
		return a.b.Delete(a.key)
	}
	if ch.Prev.lsn == 0 || !c.Images {
		return nil
	}
	a.key = storage.ImageKey(a.key[:0], p.container, ch.EPK, ch.Prev.lsn, ch.Prev.i)
	return a.b.Set(a.key, ch.PrevJSON)
}

// LogChange is one change as the change feed reads it. Its slices are valid during the call
// that passes it only.
type LogChange struct {
	LSN     uint64
	Op      LogOp
	TS      int64 // when the change was committed, in Unix seconds
	EPK, ID []byte
	// JSON is the version the change wrote; nil for a delete, and for a version whose image
	// was not kept.
	JSON []byte
	// Current reports that JSON is still the item's current version.
	Current bool
	// PrevLSN is the LSN of the version the change replaced or deleted, 0 for a create.
	PrevLSN uint64
	// Prev is that version's JSON, for a delete read with LogRead.AllVersions, when kept.
	Prev []byte
	// Expired marks a delete made because the item's time to live ran out.
	Expired bool
}

// LogRead says which changes ReadLog returns.
type LogRead struct {
	After uint64    // only changes with a larger LSN
	Range epk.Range // only changes to items in this range (clipped to the partition's)
	Since int64     // only changes committed at or after this Unix second; 0 for all
	// AllVersions returns every change, deletes included, each with the version it wrote.
	// Otherwise only changes that wrote a version that is still current are returned: the
	// latest version of each changed item, once, at the place of its last change.
	AllVersions bool
}

// ErrLogPurged is what ReadLog returns for an all-versions read that would need changes
// retention has already removed.
var ErrLogPurged = fault.New(fault.BadRequest, "The change feed continuation is older than the container's "+
	"all-versions-and-deletes retention, which has removed the changes after it; start again from now")

// ReadLog calls fn with the changes q selects, in LSN order (within an LSN, in the command's
// order). When fn returns false, the rest of that LSN's changes are still passed (a command's
// changes are never split across pages) and then the read stops. It returns the LSN the read
// got through: the next read should start after it. It is the LSN of the last change passed
// when the read stopped early, and otherwise the partition's LSN, so that a read that found
// nothing new moves on.
func (p *Partition) ReadLog(q LogRead, fn func(*LogChange) bool) (through uint64, err error) {
	return p.readLog(Consistency{}, q, fn)
}

func (p *Partition) readLog(cons Consistency, q LogRead, fn func(*LogChange) bool) (through uint64, err error) {
	// A read that reaches the end has seen every change up to the LSN of the snapshot's state
	// record, which each batch writes with its last command's LSN, and none past it. The
	// applied LSN alone would not do: it is stored after the batch is visible, so a snapshot
	// may hold a command past it, which a read would pass now and again after it. Read before
	// the snapshot, it is what a snapshot without a state record holds.
	if err := p.await(cons); err != nil {
		return 0, err
	}
	applied := p.applied.Load()
	snap, err := p.snapshot()
	if err != nil {
		return 0, err
	}
	defer snap.Close()
	snapSt, err := p.snapshotState(snap, applied)
	if err != nil {
		return 0, err
	}
	through = max(snapSt.LSN, q.After)
	if q.AllVersions && snapSt.Purged > q.After {
		return 0, ErrLogPurged
	}
	docs, err := p.docReader(snap)
	if err != nil {
		return 0, err
	}
	defer docs.close()
	// An expired item's versions stay in the all-versions feed until its expiry's delete; the
	// latest-version feed hides an expired item at once.
	live := docs.live
	docs.live = liveness{}
	lo, hi := max(q.Range.Min, p.rng.Min), min(q.Range.Max, p.rng.Max)
	// A range of few items reads the log no further than reading its items would cost, then
	// reads the items for the changes after the last LSN passed (logicalfeed.go).
	byItems, budget := false, uint64(0)
	if changes := through - q.After; !q.AllVersions && q.Since == 0 && changes > 0 {
		limit := min(changes, logicalFeedMax)
		n, err := p.itemsIn(snap, lo, hi, limit)
		if err != nil {
			return 0, err
		}
		byItems, budget = n <= limit, n
	}
	start, end := storage.LogSpan(p.container, p.id, q.After)
	it, err := snap.NewIter(start, end)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var (
		c       LogChange
		stopAt  uint64 // once fn said enough: the LSN whose changes are still passed
		stopped bool
		key     []byte
		read    uint64 // entries read
		last    = q.After
	)
	for it.First(); it.Valid(); it.Next() {
		_, lsn, i, err := storage.ParseLogKey(it.Key())
		if err != nil {
			return 0, err
		}
		if stopped && lsn != stopAt {
			return stopAt, nil
		}
		if byItems && lsn != last {
			if read >= budget { // every change up to last was passed: the items give the rest
				q.After = last
				return p.readLatestByItems(snap, docs, live, lo, hi, q, through, fn)
			}
			last = lsn
		}
		read++
		e, err := decodeEntry(it.Value())
		if err != nil {
			return 0, err
		}
		if k := epk.EPK(e.epk); k < lo || k >= hi || e.ts < q.Since || e.op == LogDelete && !q.AllVersions {
			continue
		}
		// A version is current when the document still names this entry as its own.
		cur, found, err := docs.get(e.epk, e.seq)
		if err != nil {
			return 0, err
		}
		c = LogChange{LSN: lsn, Op: e.op, TS: e.ts, EPK: e.epk, ID: e.id, PrevLSN: e.prev.lsn, Expired: e.expired,
			Current: found && cur.log == logPos{lsn: lsn, i: i} && e.op != LogDelete}
		switch {
		case c.Current && !q.AllVersions && live.expired(e.epk, cur):
			continue
		case c.Current:
			c.JSON = cur.json
		case !q.AllVersions:
			continue
		case e.op == LogDelete:
			if e.prev.lsn != 0 {
				key = storage.ImageKey(key[:0], p.container, string(e.epk), e.prev.lsn, e.prev.i)
				if v, err := snap.Get(nil, key); err == nil {
					c.Prev = v
				} else if !storage.IsNotFound(err) {
					return 0, err
				}
			}
		default: // a replaced version: its image, if kept
			key = storage.ImageKey(key[:0], p.container, string(e.epk), lsn, i)
			if v, err := snap.Get(nil, key); err == nil {
				c.JSON = v
			} else if !storage.IsNotFound(err) {
				return 0, err
			}
		}
		if !fn(&c) && !stopped {
			stopped, stopAt = true, lsn
		}
	}
	if err := it.Error(); err != nil {
		return 0, err
	}
	if stopped {
		return stopAt, nil
	}
	return through, nil
}

// snapshotState is the state record snap holds or, when the partition had committed nothing
// yet, its state with LSN applied (read before snap was taken).
func (p *Partition) snapshotState(snap *storage.Snapshot, applied uint64) (state, error) {
	v, err := snap.Get(nil, storage.PartitionKey(p.container, p.id))
	if storage.IsNotFound(err) {
		return state{LSN: applied}, nil
	}
	if err != nil {
		return state{}, err
	}
	return decodeState(v)
}

// PurgeLog applies retention to the partition's log: it removes the changes committed before
// cutoff (Unix seconds) that no longer hold a current version, with their images, and moves the
// purge point (the LSN before which all-versions reads are refused) up to the last of those
// changes. Changes that hold current versions stay, for the latest-version feed. It returns how
// many changes it removed and how many it read.
//
// Its cost follows the changes committed since the last pass, not the size of the log, in two
// phases, each committed by the writer as purge entries:
//
//  1. It reads the log from the purge point up to the first change at or after cutoff, and
//     moves the purge point there. From then on, a write that replaces or deletes a version
//     whose change is at or before the purge point removes that change itself (stageLog).
//  2. It reads the same changes again in a snapshot taken after that, and removes those that
//     hold no current version (steps of at most purgeStepMax). A change current in the
//     snapshot and replaced afterwards is removed by its replacing write, as in 1.
//
// So no change behind the purge point ever needs looking at again, except in logs written
// before writes removed them (an older release), and after a pass that failed in phase 2: the
// first pass of each partition after it is opened, and the pass after a failed one, read phase
// 2 from the start of the log.
func (p *Partition) PurgeLog(cutoff int64) (removed, read int, err error) {
	from, through, n, err := p.purgeHorizon(cutoff)
	read += n
	if err != nil || through == from && p.swept.Load() {
		return 0, read, err
	}
	if err := p.proposePurge(&purgeStep{Through: through}); err != nil {
		return 0, read, err
	}
	if !p.swept.Load() {
		from = 0
	}
	for {
		step, next, n, err := p.findPurge(from, through)
		read += n
		if err == nil && len(step.Refs) > 0 {
			if err = p.proposePurge(step); err == nil {
				removed += len(step.Refs)
			}
		}
		if err != nil {
			// What this pass left behind the purge point is read again by the next.
			p.swept.Store(false)
			return removed, read, err
		}
		if next >= through {
			p.swept.Store(true)
			return removed, read, nil
		}
		from = next
	}
}

// proposePurge has the writer commit a purge step, unless it would change nothing.
func (p *Partition) proposePurge(step *purgeStep) error {
	return p.propose(func(st state, _ *indexState) (*entry, error) {
		if step.Through <= st.Purged && len(step.Refs) == 0 {
			return nil, nil
		}
		return &entry{kind: entryPurge, purge: step}, nil
	})
}

// purgeStepMax bounds the changes one purge entry removes.
const purgeStepMax = 4096

// purgeHorizon reads the log after the purge point (from) and returns the LSN of the last
// change before cutoff there (through; from when there is none), and how many changes it read.
func (p *Partition) purgeHorizon(cutoff int64) (from, through uint64, read int, err error) {
	snap := p.db.NewSnapshot()
	defer snap.Close()
	st, err := p.snapshotState(snap, p.applied.Load())
	if err != nil {
		return 0, 0, 0, err
	}
	from, through = st.Purged, st.Purged
	start, end := storage.LogSpan(p.container, p.id, from)
	it, err := snap.NewIter(start, end)
	if err != nil {
		return 0, 0, 0, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		_, lsn, _, err := storage.ParseLogKey(it.Key())
		if err != nil {
			return 0, 0, read, err
		}
		ent, err := decodeEntry(it.Value())
		if err != nil {
			return 0, 0, read, err
		}
		read++
		if ent.ts >= cutoff {
			break
		}
		through = lsn
	}
	return from, through, read, it.Error()
}

// findPurge reads the log's changes after from, up to through, and returns the next step: up
// to purgeStepMax of them that hold no current version (never part of a command's changes
// only). next is the LSN it read through; at through, nothing is left.
func (p *Partition) findPurge(from, through uint64) (step *purgeStep, next uint64, read int, err error) {
	snap := p.db.NewSnapshot()
	defer snap.Close()
	docs, err := p.docReader(snap)
	if err != nil {
		return nil, 0, 0, err
	}
	defer docs.close()
	docs.live = liveness{}
	start, end := storage.LogSpan(p.container, p.id, from)
	it, err := snap.NewIter(start, end)
	if err != nil {
		return nil, 0, 0, err
	}
	defer it.Close()
	step, next = &purgeStep{Through: through}, through
	last := from // every change up to it has been read
	for it.First(); it.Valid(); it.Next() {
		_, lsn, i, err := storage.ParseLogKey(it.Key())
		if err != nil {
			return nil, 0, read, err
		}
		if lsn > through {
			break
		}
		if len(step.Refs) >= purgeStepMax && lsn != last {
			next = last
			break
		}
		ent, err := decodeEntry(it.Value())
		if err != nil {
			return nil, 0, read, err
		}
		read++
		last = lsn
		if ent.op != LogDelete {
			d, found, err := docs.get(ent.epk, ent.seq)
			if err != nil {
				return nil, 0, read, err
			}
			if found && d.log == (logPos{lsn: lsn, i: i}) {
				continue // current
			}
		}
		step.Refs = append(step.Refs, logRef{EPK: string(ent.epk), logPos: logPos{lsn: lsn, i: i}})
	}
	return step, next, read, it.Error()
}

// stagePurge removes a purge step's changes.
func (a *applyBatch) stagePurge(s *purgeStep) error {
	p := a.p
	for _, r := range s.Refs {
		a.key = storage.LogKey(a.key[:0], p.container, p.id, r.lsn, r.i)
		if err := a.b.Delete(a.key); err != nil {
			return err
		}
		a.key = storage.ImageKey(a.key[:0], p.container, r.EPK, r.lsn, r.i)
		if err := a.b.Delete(a.key); err != nil {
			return err
		}
	}
	a.st.Purged = max(a.st.Purged, s.Through)
	return nil
}
