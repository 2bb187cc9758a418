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
