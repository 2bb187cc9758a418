package partition

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/partita-db/partita/internal/epk"
)

// The binary encoding of a log entry, as a replicated partition appends it to its group's log.
// Every replica decodes the same bytes into the same entry, so what it applies follows from
// the log alone. All integers are varints; a string or byte slice is uvarint(length) then its
// bytes; a list is uvarint(count) then its elements.
//
//	entry   = version(1) kind(1) uvarint(epoch) uvarint(proposal) payload
//	write   = uvarint(LSN) varint(TS) flags(1: images) uvarint(after.LSN) varint(after.items)
//	          varint(after.bytes) uvarint(after.seq) list(change)
//	change  = bytes(EPK) bytes(id) bytes(renamed) uvarint(seq) flags(1: new, delete, expired)
//	          bytes(value) varint(logical.items) varint(logical.bytes) uvarint(prev.LSN)
//	          uvarint(prev.index) [bytes(prevJSON): only with images and a previous version]
//	          list(bytes: indexDel) list(bytes: indexAdd) list(bytes: uniqueDel)
//	          list(bytes: uniqueAdd)
//	lease   = uvarint(epoch)
//	policy  = bytes(policy JSON)
//	reindex = uvarint(cursor) varint(done) byte(end) list(bytes(EPK) uvarint(seq) list(bytes: del)
//	          list(bytes: add))
//	purge   = uvarint(through) list(bytes(EPK) uvarint(LSN) uvarint(index))
//	split-start = bytes(at) uvarint(left) uvarint(right)
//	split-commit, split-abort = (nothing)
//	vector-build = bytes(path) byte(started) uvarint(from) uvarint(cursor) varint(done) byte(end)
//	          list(uvarint(seq) bytes(float32 little-endian...))
//	recheck = (nothing)
//
// The version byte comes first so that a later encoding can be told apart: a replica refuses
// an entry of a version it does not know rather than misread it (a cluster upgrades its nodes
// before it writes a new version). Decoding is strict: trailing bytes, a count larger than
// what is left, or an unknown kind or flag are errors, so that every entry has one encoding.

// codecVersion is the encoding entries are written in.
const codecVersion = 1

// Flags of a change.
const (
	changeNew = 1 << iota
	changeDelete
	changeExpired
	changeFlags = changeNew | changeDelete | changeExpired
)

// ErrBadEntry is what decodeEntryBytes returns for bytes that are not an entry.
var ErrBadEntry = errors.New("partition: malformed log entry")

// encodeEntry appends the encoding of e to dst.
func encodeEntry(dst []byte, e *entry) []byte {
	dst = append(dst, codecVersion, byte(e.kind))
	dst = binary.AppendUvarint(dst, e.epoch)
	dst = binary.AppendUvarint(dst, e.proposal)
	switch e.kind {
	case entryWrite:
		dst = appendCommand(dst, e.cmd)
	case entryLease:
		dst = binary.AppendUvarint(dst, e.lease)
	case entryPolicy:
		dst = appendBytes(dst, e.policy.Policy)
	case entryReindex:
		r := e.reindex
		dst = binary.AppendUvarint(dst, r.Cursor)
		dst = binary.AppendVarint(dst, r.Done)
		dst = append(dst, boolByte(r.End))
		dst = binary.AppendUvarint(dst, uint64(len(r.Items)))
		for _, x := range r.Items {
			dst = appendBytes(dst, []byte(x.EPK))
			dst = binary.AppendUvarint(dst, x.Seq)
			dst = appendList(dst, x.Del)
			dst = appendList(dst, x.Add)
		}
	case entryVectorBuild:
		b := e.build
		dst = appendBytes(dst, []byte(b.Path))
		dst = append(dst, boolByte(b.Started))
		dst = binary.AppendUvarint(dst, b.From)
		dst = binary.AppendUvarint(dst, b.Cursor)
		dst = binary.AppendVarint(dst, b.Done)
		dst = append(dst, boolByte(b.End))
		dst = binary.AppendUvarint(dst, uint64(len(b.Items)))
		for _, x := range b.Items {
			dst = binary.AppendUvarint(dst, x.Seq)
			dst = binary.AppendUvarint(dst, uint64(4*len(x.Vec)))
			for _, f := range x.Vec {
				dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(f))
			}
		}
	case entryPurge:
		dst = binary.AppendUvarint(dst, e.purge.Through)
		dst = binary.AppendUvarint(dst, uint64(len(e.purge.Refs)))
		for _, r := range e.purge.Refs {
			dst = appendBytes(dst, []byte(r.EPK))
			dst = r.logPos.append(dst)
		}
	case entrySplitStart:
		dst = appendBytes(dst, []byte(e.split.At))
		dst = binary.AppendUvarint(dst, uint64(e.split.Left))
		dst = binary.AppendUvarint(dst, uint64(e.split.Right))
	}
	return dst
}

func appendCommand(dst []byte, c *Command) []byte {
	dst = binary.AppendUvarint(dst, c.LSN)
	dst = binary.AppendVarint(dst, c.TS)
	dst = append(dst, boolByte(c.Images))
	dst = binary.AppendUvarint(dst, c.After.LSN)
	dst = encodeCounts(dst, c.After.counts)
	dst = binary.AppendUvarint(dst, c.After.Seq)
	dst = binary.AppendUvarint(dst, uint64(len(c.Changes)))
	for i := range c.Changes {
		ch := &c.Changes[i]
		dst = appendBytes(dst, []byte(ch.EPK))
		dst = appendBytes(dst, []byte(ch.ID))
		dst = appendBytes(dst, []byte(ch.Renamed))
		dst = binary.AppendUvarint(dst, ch.Seq)
		var flags byte
		if ch.New {
			flags |= changeNew
		}
		if ch.Delete {
			flags |= changeDelete
		}
		if ch.Expired {
			flags |= changeExpired
		}
		dst = append(dst, flags)
		dst = appendBytes(dst, ch.Value)
		dst = encodeCounts(dst, ch.Logical)
		dst = ch.Prev.append(dst)
		if c.Images && ch.Prev.lsn != 0 {
			dst = appendBytes(dst, ch.PrevJSON)
		}
		dst = appendList(dst, ch.IndexDel)
		dst = appendList(dst, ch.IndexAdd)
		dst = appendList(dst, ch.UniqueDel)
		dst = appendList(dst, ch.UniqueAdd)
	}
	return dst
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

func appendList(dst []byte, l [][]byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(l)))
	for _, b := range l {
		dst = appendBytes(dst, b)
	}
	return dst
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// decodeEntryBytes decodes an entry. Its byte slices point into v, which the caller must not
// change while the entry is in use.
func decodeEntryBytes(v []byte) (*entry, error) {
	f := fields{v: v, ok: true}
	if ver := f.byte(); ver != codecVersion {
		if !f.ok {
			return nil, ErrBadEntry
		}
		return nil, fmt.Errorf("%w: encoding version %d is not known to this build", ErrBadEntry, ver)
	}
	e := &entry{kind: entryKind(f.byte())}
	e.epoch, e.proposal = f.uvarint(), f.uvarint()
	switch e.kind {
	case entryWrite:
		e.cmd = f.command()
	case entryLease:
		e.lease = f.uvarint()
	case entryPolicy:
		e.policy = &policyChange{Policy: f.bytes()}
	case entryReindex:
		r := &reindexStep{Cursor: f.uvarint(), Done: f.varint(), End: f.bool()}
		n := f.count(4)
		for range n {
			x := reindexed{EPK: string(f.bytes()), Seq: f.uvarint()}
			x.Del, x.Add = f.list(), f.list()
			r.Items = append(r.Items, x)
		}
		e.reindex = r
	case entryVectorBuild:
		b := &vectorBuildStep{Path: string(f.bytes()), Started: f.bool(), From: f.uvarint(), Cursor: f.uvarint(), Done: f.varint(), End: f.bool()}
		n := f.count(2)
		for range n {
			x := builtVector{Seq: f.uvarint()}
			raw := f.bytes()
			if len(raw)%4 != 0 {
				return nil, ErrBadEntry
			}
			x.Vec = make([]float32, len(raw)/4)
			for i := range x.Vec {
				x.Vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
			b.Items = append(b.Items, x)
		}
		e.build = b
	case entryPurge:
		p := &purgeStep{Through: f.uvarint()}
		n := f.count(3)
		for range n {
			p.Refs = append(p.Refs, logRef{EPK: string(f.bytes()), logPos: f.logPos()})
		}
		e.purge = p
	case entrySplitStart:
		e.split = &splitPlan{At: epk.EPK(f.bytes()), Left: f.uint32(), Right: f.uint32()}
	case entrySplitCommit, entrySplitAbort, entryRecheck:
	default:
		return nil, fmt.Errorf("%w: unknown kind %d", ErrBadEntry, e.kind)
	}
	if !f.ok || len(f.v) != 0 {
		return nil, ErrBadEntry
	}
	return e, nil
}

func (f *fields) bool() bool {
	switch f.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	f.ok = false
	return false
}

// count reads a count of elements that take at least min bytes each, refusing one larger
// than what is left.
func (f *fields) count(min int) int {
	n := f.uvarint()
	if n > uint64(len(f.v)/min) {
		f.ok = false
		return 0
	}
	return int(n)
}

func (f *fields) list() [][]byte {
	n := f.count(1)
	if n == 0 {
		return nil
	}
	l := make([][]byte, n)
	for i := range l {
		l[i] = f.bytes()
	}
	return l
}

func (f *fields) command() *Command {
	c := &Command{LSN: f.uvarint(), TS: f.varint(), Images: f.bool()}
	c.After.LSN = f.uvarint()
	c.After.counts = counts{Items: f.varint(), Bytes: f.varint()}
	c.After.Seq = f.uvarint()
	n := f.count(14) // the fewest bytes a change takes
	if n > 0 {
		c.Changes = make([]Change, n)
	}
	for i := range c.Changes {
		ch := &c.Changes[i]
		ch.EPK, ch.ID, ch.Renamed = string(f.bytes()), string(f.bytes()), string(f.bytes())
		ch.Seq = f.uvarint()
		flags := f.byte()
		if flags&^changeFlags != 0 {
			f.ok = false
		}
		ch.New, ch.Delete, ch.Expired = flags&changeNew != 0, flags&changeDelete != 0, flags&changeExpired != 0
		if v := f.bytes(); len(v) > 0 {
			ch.Value = v
		}
		ch.Logical = counts{Items: f.varint(), Bytes: f.varint()}
		ch.Prev = f.logPos()
		if c.Images && ch.Prev.lsn != 0 {
			if v := f.bytes(); len(v) > 0 {
				ch.PrevJSON = v
			}
		}
		ch.IndexDel, ch.IndexAdd = f.list(), f.list()
		ch.UniqueDel, ch.UniqueAdd = f.list(), f.list()
		if !f.ok {
			return nil
		}
	}
	return c
}
