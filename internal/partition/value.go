package partition

import (
	"encoding/binary"
	"errors"
	"math"
	"sync/atomic"
)

// A stored item value (the document, keyed by its creation sequence) is:
// uvarint(LSN) uvarint(log partition) uvarint(change index) uvarint(len(EPK)) EPK
// uvarint(len(id)) id JSON.
// The LSN is that of the command that wrote this version, and the etag is derived from it. The
// log partition and change index, with the LSN, name the version's log entry (see log.go); the
// partition is the one that wrote it, which after a split is an ancestor of the item's current
// partition. The EPK and id are the item's own, so that a document read by sequence (a scan in
// creation order, an index entry) says which item it is.
func encodeValue(dst []byte, at logPos, e, id string) []byte {
	dst = at.append(dst)
	dst = binary.AppendUvarint(dst, uint64(len(e)))
	dst = append(dst, e...)
	dst = binary.AppendUvarint(dst, uint64(len(id)))
	return append(dst, id...)
}

// stored is a decoded item value; its slices point into the value.
type stored struct {
	lsn  uint64
	log  logPos // where the log entry of this version is; log.lsn == lsn
	epk  []byte
	id   []byte
	json []byte
}

// doc is the version as a scan returns it.
func (s stored) doc(seq uint64) Doc {
	return Doc{JSON: s.json, LSN: s.lsn, Seq: seq, epk: s.epk, id: s.id}
}

var errBadValue = errors.New("partition: malformed stored item value")

func decodeValue(v []byte) (stored, error) {
	f := fields{v: v, ok: true}
	var s stored
	s.log = f.logPos()
	s.lsn = s.log.lsn
	s.epk, s.id = f.bytes(), f.bytes()
	if !f.ok {
		return stored{}, errBadValue
	}
	s.json = f.v
	return s, nil
}

// append writes p as uvarint(LSN) uvarint(partition) uvarint(index).
func (p logPos) append(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, p.lsn)
	dst = binary.AppendUvarint(dst, uint64(p.part))
	return binary.AppendUvarint(dst, uint64(p.i))
}

// fields reads the varints, log positions and length-prefixed strings that stored values and
// log entries are made of, from the front of v. Once a read fails ok is false, and every
// later read returns zero.
type fields struct {
	v  []byte
	ok bool
}

func (f *fields) uvarint() uint64 {
	x, n := binary.Uvarint(f.v)
	if n <= 0 {
		f.ok = false
		return 0
	}
	f.v = f.v[n:]
	return x
}

func (f *fields) varint() int64 {
	x, n := binary.Varint(f.v)
	if n <= 0 {
		f.ok = false
		return 0
	}
	f.v = f.v[n:]
	return x
}

func (f *fields) bytes() []byte {
	l := f.uvarint()
	if !f.ok || l > uint64(len(f.v)) {
		f.ok = false
		return nil
	}
	b := f.v[:l:l]
	f.v = f.v[l:]
	return b
}

func (f *fields) logPos() logPos {
	lsn, part, i := f.uvarint(), f.uvarint(), f.uvarint()
	if part > math.MaxUint32 || i > math.MaxUint16 {
		f.ok = false
	}
	return logPos{lsn: lsn, part: uint32(part), i: uint16(i)}
}

// ETag is the etag of the item version written at lsn. LSNs only grow within a partition and
// the children of a split continue from their parent's, so successive versions of one item
// never share an etag.
func ETag(lsn uint64) string {
	// "00000000-0000-0000-HHHH-LLLLLLLLLLLL": the LSN's top 16 bits, then its low 48, in hex.
	// Formatted by hand: every read and write returns an etag.
	const digits = "0123456789abcdef"
	b := []byte("00000000-0000-0000-0000-000000000000")
	for i, shift := len(b)-1, 0; shift < 64; i, shift = i-1, shift+4 {
		if b[i] == '-' {
			i--
		}
		b[i] = digits[lsn>>shift&0xf]
	}
	return string(b)
}

// counts is a pair of item count and byte count, as stored for a logical partition and, with
// the LSN before it, for a physical partition.
type counts struct {
	Items int64
	Bytes int64
}

func (c counts) add(items, bytes int64) counts {
	return counts{Items: c.Items + items, Bytes: c.Bytes + bytes}
}

func encodeCounts(dst []byte, c counts) []byte {
	dst = binary.AppendVarint(dst, c.Items)
	return binary.AppendVarint(dst, c.Bytes)
}

func decodeCounts(v []byte) (counts, []byte, error) {
	items, n := binary.Varint(v)
	if n <= 0 {
		return counts{}, nil, errors.New("partition: bad counts")
	}
	bytes, m := binary.Varint(v[n:])
	if m <= 0 {
		return counts{}, nil, errors.New("partition: bad counts")
	}
	return counts{Items: items, Bytes: bytes}, v[n+m:], nil
}

// state is a partition's LSN and totals, persisted with every command.
type state struct {
	LSN uint64
	counts
	// Seq is the highest creation sequence the partition (or its ancestors) handed out; the
	// container's Sequence restarts above the highest of its partitions'.
	Seq uint64
}

func encodeState(dst []byte, s state) []byte {
	dst = binary.AppendUvarint(dst, s.LSN)
	dst = encodeCounts(dst, s.counts)
	return binary.AppendUvarint(dst, s.Seq)
}

func decodeState(v []byte) (state, error) {
	lsn, n := binary.Uvarint(v)
	if n <= 0 {
		return state{}, errors.New("partition: bad state record")
	}
	c, rest, err := decodeCounts(v[n:])
	if err != nil {
		return state{}, err
	}
	seq, m := binary.Uvarint(rest)
	if m <= 0 {
		return state{}, errors.New("partition: bad state record")
	}
	return state{LSN: lsn, counts: c, Seq: seq}, nil
}

// Sequence hands out a container's creation sequences; the partitions of a container share
// one. A sequence is unique within the container and only grows, so the items of a physical
// partition, and of each of its children after a split, sort by creation.
type Sequence struct {
	last atomic.Uint64
}

func (s *Sequence) next() uint64 { return s.last.Add(1) }

// atLeast raises the sequence to n, for a partition opened with a persisted state.
func (s *Sequence) atLeast(n uint64) {
	for {
		cur := s.last.Load()
		if cur >= n || s.last.CompareAndSwap(cur, n) {
			return
		}
	}
}
