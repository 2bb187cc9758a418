package epk

import (
	"encoding/binary"
	"math"
)

// Cassandra's Murmur3Partitioner places a row by the token of its partition key: the first
// 64 bits of MurmurHash3 x64 128 (seed 0) of the key's serialized bytes, read as a signed
// integer, with the one value -2^63 moved to 2^63-1 so that the ring is (-2^63, 2^63-1].
// The hash is Cassandra's variant: tail bytes are sign-extended, as Java's bytes are.

// Token is the token of a partition key given as its serialized bytes: the value's own
// serialization for a single-column key, CompositeKey's for a compound one.
func Token(key []byte) int64 {
	m := murmur128{signedTail: true}
	m.write(key)
	h1, _ := m.sum()
	if t := int64(h1); t != math.MinInt64 {
		return t
	}
	return math.MaxInt64
}

// CompositeKey serializes the components of a compound partition key as Cassandra hashes
// them: for each, a 2-byte big-endian length, the bytes, and one 0x00 byte. A component is
// at most 65,535 bytes; ok is false for a longer one.
func CompositeKey(components [][]byte) (key []byte, ok bool) {
	n := 0
	for _, c := range components {
		if len(c) > math.MaxUint16 {
			return nil, false
		}
		n += 3 + len(c)
	}
	key = make([]byte, 0, n)
	for _, c := range components {
		key = binary.BigEndian.AppendUint16(key, uint16(len(c)))
		key = append(key, c...)
		key = append(key, 0)
	}
	return key, true
}

// A CQL table's rows are placed by token the way a container's items are placed by EPK: each
// physical partition owns one contiguous range of the EPK space, so it owns one contiguous
// arc of the token ring. TokenEPK lays the ring over the space that hash version 2 fills, in
// order: with u = token + 2^63 (0 .. 2^64-1), the EPK is the 16-byte big-endian form of
// u·2^62, below 40 00..00 as every v2 EPK is. So the ranges a container gets for v2 keys
// (InitialRanges(SchemeV2, n), and splits in the middle of the space in use) are equal arcs
// of the ring, and any EPK boundary, token image or not, cuts the ring at FirstToken.

// TokenEPK is the EPK at which the rows of token t are placed.
func TokenEPK(t int64) EPK {
	u := uint64(t) ^ 1<<63
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], u>>2)
	binary.BigEndian.PutUint64(b[8:], u<<62)
	return EPK(b[:])
}

// FirstToken is the smallest token whose EPK is at or above e: a range of EPKs [a, b) holds
// the tokens from FirstToken(a) up to, not including, FirstToken(b). ok is false when no
// token is at or above e (e past the last token's EPK, such as Max).
func FirstToken(e EPK) (t int64, ok bool) {
	var b [16]byte
	n := copy(b[:], e)
	past := false // e goes on past 16 bytes with something other than zeros
	for i := n; i < len(e); i++ {
		past = past || e[i] != 0
	}
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	if hi >= 1<<62 {
		return 0, false // at or past 40 00..00, beyond the last token's EPK
	}
	u := hi<<2 | lo>>62
	if lo&(1<<62-1) != 0 || past {
		if u == math.MaxUint64 {
			return 0, false
		}
		u++
	}
	return int64(u ^ 1<<63), true
}
