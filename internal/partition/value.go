package partition

import (
	"encoding/binary"
	"errors"
)

// A stored item value is: docRID(8) uvarint(LSN) JSON.
// docRID is the item's own half of its _rid; it stays with the item across replaces. The LSN
// is that of the command that wrote this version, and the etag is derived from it.
const docRIDLen = 8

func encodeValue(dst []byte, docRID [docRIDLen]byte, lsn uint64, json []byte) []byte {
	dst = append(dst, docRID[:]...)
	dst = binary.AppendUvarint(dst, lsn)
	return append(dst, json...)
}

func decodeValue(v []byte) (docRID [docRIDLen]byte, lsn uint64, json []byte, err error) {
	if len(v) < docRIDLen+1 {
		return docRID, 0, nil, errors.New("partition: stored item value too short")
	}
	copy(docRID[:], v)
	lsn, n := binary.Uvarint(v[docRIDLen:])
	if n <= 0 {
		return docRID, 0, nil, errors.New("partition: stored item value has a bad LSN")
	}
	return docRID, lsn, v[docRIDLen+n:], nil
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
}

func encodeState(dst []byte, s state) []byte {
	dst = binary.AppendUvarint(dst, s.LSN)
	return encodeCounts(dst, s.counts)
}

func decodeState(v []byte) (state, error) {
	lsn, n := binary.Uvarint(v)
	if n <= 0 {
		return state{}, errors.New("partition: bad state record")
	}
	c, _, err := decodeCounts(v[n:])
	return state{LSN: lsn, counts: c}, err
}
