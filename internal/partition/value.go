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
	dst = binary.AppendUvarint(dst, at.lsn)
	dst = binary.AppendUvarint(dst, uint64(at.part))
	dst = binary.AppendUvarint(dst, uint64(at.i))
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
	var s stored
	var n int
	if s.lsn, n = binary.Uvarint(v); n <= 0 {
		return s, errBadValue
	}
	v = v[n:]
	part, n := binary.Uvarint(v)
	if n <= 0 || part > math.MaxUint32 {
		return s, errBadValue
	}
	v = v[n:]
	i, n := binary.Uvarint(v)
	if n <= 0 || i > math.MaxUint16 {
		return s, errBadValue
	}
	v = v[n:]
	s.log = logPos{part: uint32(part), lsn: s.lsn, i: uint16(i)}
	for _, field := range []*[]byte{&s.epk, &s.id} {
		l, n := binary.Uvarint(v)
		if n <= 0 || uint64(len(v)-n) < l {
			return s, errBadValue
		}
		*field, v = v[n:n+int(l)], v[n+int(l):]
	}
	s.json = v
	return s, nil
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
