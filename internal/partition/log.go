package partition

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/storage"
)

// The log is a partition's change feed: one entry per change, keyed by the LSN of its command
// and its place in it, written in the command's batch, so there is never a write without its
// entry nor an entry without its write.
//
// An entry names the item and the version it replaced; it does not copy the document. While a
// version is current its JSON is the document itself; when a later change replaces or deletes
// it, that change's batch writes the version's JSON as the entry's image (when the partition
// keeps images, for the all-versions feed). So a create costs a small entry, and a replace one
// more copy of the version it replaces, which the all-versions feed must keep anyway.
//
// The children of a split log under their own ids and continue their parent's LSNs. A child
// reads its ancestors' logs first (Config.Lineage), keeping the changes of its own range, so a
// position its parent handed out is valid in both children and no change is lost or repeated.

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

// logPos names a log entry: the partition whose log holds it, the LSN of its command and its
// index among the command's changes. The zero logPos names none.
type logPos struct {
	part uint32
	lsn  uint64
	i    uint16
}

// logEntry is a decoded entry value:
// op(1, with logExpired on an expiry's delete) uvarint(seq) varint(ts) uvarint(prev.lsn) uvarint(prev.part) uvarint(prev.i)
// uvarint(len(EPK)) EPK uvarint(len(id)) id.
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

// logChange writes the entry of change i of c, and the image of the version it replaces, into b.
func (p *Partition) logChange(b *storage.Batch, key []byte, c *Command, i int) ([]byte, error) {
	ch := &c.Changes[i]
	op := LogReplace
	switch {
	case ch.Delete:
		op = LogDelete
	case ch.New:
		op = LogCreate
	}
	key = storage.LogKey(key[:0], p.container, p.id, c.LSN, uint16(i))
	n := len(key)
	key = appendEntry(key, op, ch.Seq, c.TS, ch.Prev, ch.EPK, ch.ID)
	if ch.Expired {
		key[n] |= logExpired
	}
	if err := b.Set(key[:n], key[n:]); err != nil {
		return key, err
	}
	if ch.Prev.lsn == 0 || !p.keepImages {
		return key, nil
	}
	key = storage.LogImageKey(key[:0], p.container, ch.Prev.part, ch.Prev.lsn, ch.Prev.i)
	return key, b.Set(key, ch.PrevJSON)
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
	// A read that reaches the end has seen every change up to the LSN of the snapshot's state
	// record, which each group's batch writes with its last command's LSN, and none past it.
	// The applied LSN alone would not do: the writer stores it after the batch is visible, so
	// a snapshot may hold a command past it, which a read would pass now and again after it.
	// Read before the snapshot, it is what a snapshot without a state record holds.
	applied := p.applied.Load()
	snap := p.db.NewSnapshot()
	defer snap.Close()
	snapLSN, err := p.snapshotLSN(snap, applied)
	if err != nil {
		return 0, err
	}
	through = max(snapLSN, q.After)
	if q.AllVersions {
		for _, part := range p.logs {
			v, err := snap.Get(nil, storage.RetainedKey(p.container, part))
			if storage.IsNotFound(err) {
				continue
			}
			if err != nil {
				return 0, err
			}
			if h, n := binary.Uvarint(v); n > 0 && h > q.After {
				return 0, ErrLogPurged
			}
		}
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
	var (
		c       LogChange
		stopAt  uint64 // once fn said enough: the LSN whose changes are still passed
		stopped bool
		buf     []byte
		// epkBuf and idBuf hold a change's EPK and id while the iterator reads its image.
		epkBuf, idBuf []byte
	)
	for _, part := range p.logs {
		start, end := storage.LogSpan(p.container, part, q.After)
		it, err := snap.NewIter(start, end)
		if err != nil {
			return 0, err
		}
		// The iterator's key and value are only valid until it moves: each change is passed
		// to fn before the iterator steps past it, and the entry's EPK and id are copied when
		// it must step to the entry's image first.
		ok, onNext := it.First(), false
		for ok {
			_, lsn, i, image, err := storage.ParseLogKey(it.Key())
			if err != nil {
				it.Close()
				return 0, err
			}
			if image { // the image of an entry that was not selected
				ok = it.Next()
				continue
			}
			if stopped && lsn != stopAt {
				it.Close()
				return stopAt, nil
			}
			e, err := decodeEntry(it.Value())
			if err != nil {
				it.Close()
				return 0, err
			}
			if k := epk.EPK(e.epk); k < lo || k >= hi || e.ts < q.Since || e.op == LogDelete && !q.AllVersions {
				ok = it.Next()
				continue
			}
			// A version is current when the document still names this entry as its own.
			cur, found, err := docs.get(e.seq)
			if err != nil {
				it.Close()
				return 0, err
			}
			c = LogChange{LSN: lsn, Op: e.op, TS: e.ts, EPK: e.epk, ID: e.id, PrevLSN: e.prev.lsn, Expired: e.expired,
				Current: found && cur.log == logPos{part: part, lsn: lsn, i: i} && e.op != LogDelete}
			switch {
			case c.Current && !q.AllVersions && live.expired(cur.json):
				ok = it.Next()
				continue
			case c.Current:
				c.JSON = cur.json
			case !q.AllVersions:
				ok = it.Next()
				continue
			case e.op == LogDelete:
				if e.prev.lsn != 0 {
					buf = storage.LogImageKey(buf[:0], p.container, e.prev.part, e.prev.lsn, e.prev.i)
					if v, err := snap.Get(nil, buf); err == nil {
						c.Prev = v
					} else if !storage.IsNotFound(err) {
						it.Close()
						return 0, err
					}
				}
			default: // a replaced version: its image, if kept, is the next key
				epkBuf = append(epkBuf[:0], e.epk...)
				idBuf = append(idBuf[:0], e.id...)
				c.EPK, c.ID = epkBuf, idBuf
				if ok = it.Next(); ok {
					if _, l, j, img, _ := storage.ParseLogKey(it.Key()); img && l == lsn && j == i {
						c.JSON = it.Value()
					} else {
						onNext = true // no image kept: the iterator is on the next entry already
					}
				}
			}
			if !fn(&c) && !stopped {
				stopped, stopAt = true, lsn
			}
			if ok && !onNext {
				ok = it.Next()
			}
			onNext = false
		}
		err = it.Error()
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return 0, err
		}
	}
	if stopped {
		return stopAt, nil
	}
	return through, nil
}

// snapshotLSN is the LSN of the last command snap holds: its state record's, or, when the
// partition had committed none yet, applied, read before snap was taken (its start LSN).
func (p *Partition) snapshotLSN(snap *storage.Snapshot, applied uint64) (uint64, error) {
	v, err := snap.Get(nil, storage.PartitionKey(p.container, p.id))
	if storage.IsNotFound(err) {
		return applied, nil
	}
	if err != nil {
		return 0, err
	}
	st, err := decodeState(v)
	return st.LSN, err
}

// PurgeLog removes from the logs of a container (of its live partitions and of the ancestors
// they still read) the changes committed before cutoff (Unix seconds) that no longer hold a
// current version, with their images, and records for each log how far it was purged. Changes
// that hold current versions stay, for the latest-version feed. It returns how many entries it
// removed. It runs beside the writers: they only add entries and write the images of entries
// that are current, which it never removes.
func PurgeLog(db *storage.DB, container uint32, cutoff int64) (removed int, err error) {
	lo, hi := storage.LogContainerSpan(container)
	it, err := db.NewIter(lo, hi)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	dlo, dhi := storage.ContainerDocSpan(container)
	docs, err := db.NewIter(dlo, dhi)
	if err != nil {
		return 0, err
	}
	defer docs.Close()
	b := db.NewBatch()
	defer func() { b.Close() }()
	var (
		key      []byte
		part     uint32
		horizon  uint64
		havePart bool
	)
	flush := func() error {
		if havePart && horizon > 0 {
			if err := b.Set(storage.RetainedKey(container, part), binary.AppendUvarint(nil, horizon)); err != nil {
				return err
			}
		}
		if b.Count() == 0 {
			return nil
		}
		// Unsynced: a purge lost in a crash is only done again.
		if err := b.CommitUnsynced(); err != nil {
			return err
		}
		b.Close()
		b = db.NewBatch()
		return nil
	}
	for ok := it.First(); ok; {
		pt, lsn, i, image, err := storage.ParseLogKey(it.Key())
		if err != nil {
			return removed, err
		}
		if !havePart || pt != part {
			if err := flush(); err != nil {
				return removed, err
			}
			part, horizon, havePart = pt, 0, true
		}
		if image {
			ok = it.Next()
			continue
		}
		e, err := decodeEntry(it.Value())
		if err != nil {
			return removed, err
		}
		if e.ts >= cutoff { // the rest of this log is recent: go on with the next one
			_, end := storage.LogSpan(container, pt, 0)
			ok = it.SeekGE(end)
			continue
		}
		horizon = lsn
		current := false
		if e.op != LogDelete {
			key = storage.DocKey(key[:0], container, e.seq)
			if docs.SeekGE(key) && bytes.Equal(docs.Key(), key) {
				d, err := decodeValue(docs.Value())
				if err != nil {
					return removed, err
				}
				current = d.log == logPos{part: pt, lsn: lsn, i: i}
			}
		}
		if !current {
			if err := b.Delete(storage.LogKey(key[:0], container, pt, lsn, i)); err != nil {
				return removed, err
			}
			if err := b.Delete(storage.LogImageKey(key[:0], container, pt, lsn, i)); err != nil {
				return removed, err
			}
			removed++
			if b.Count() >= 4096 {
				if err := flush(); err != nil {
					return removed, err
				}
			}
		}
		ok = it.Next()
	}
	if err := it.Error(); err != nil {
		return removed, err
	}
	return removed, flush()
}
