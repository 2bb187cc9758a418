package cqlvalue

import (
	"encoding/binary"
	"errors"
	"math/big"
	"math/bits"
)

// The byte-level pieces of the native protocol v4 serializations: collection framing, the
// variable-length integers of duration, and the big numbers of varint and decimal.

// errShort is reported for a serialization cut short.
var errShort = errors.New("not enough bytes")

// readItem reads one [int32 length][bytes] item of a collection, tuple or UDT from b. A negative
// length is a null item: item is nil and null true.
func readItem(b []byte) (item, rest []byte, null bool, err error) {
	if len(b) < 4 {
		return nil, nil, false, errShort
	}
	n := int32(binary.BigEndian.Uint32(b))
	b = b[4:]
	if n < 0 {
		return nil, b, true, nil
	}
	if int64(n) > int64(len(b)) {
		return nil, nil, false, errShort
	}
	return b[:n:n], b[n:], false, nil
}

// appendItem appends item with its int32 length; null appends length -1.
func appendItem(dst, item []byte, null bool) []byte {
	if null {
		return binary.BigEndian.AppendUint32(dst, 0xFFFFFFFF)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(item)))
	return append(dst, item...)
}

// splitCollection splits a list or set serialization into its elements, or a map's into keys
// and values alternately (per = 2). Elements may not be null.
func splitCollection(b []byte, per int) ([][]byte, error) {
	if len(b) < 4 {
		return nil, errShort
	}
	n := int32(binary.BigEndian.Uint32(b))
	if n < 0 {
		return nil, errors.New("negative element count")
	}
	b = b[4:]
	// Each item takes at least 4 bytes: bound the allocation by what b can hold.
	if int64(n)*int64(per) > int64(len(b)/4) {
		return nil, errShort
	}
	items := make([][]byte, 0, int(n)*per)
	for i := 0; i < int(n)*per; i++ {
		item, rest, null, err := readItem(b)
		if err != nil {
			return nil, err
		}
		if null {
			return nil, errNullInCollection
		}
		items = append(items, item)
		b = rest
	}
	if len(b) > 0 {
		return nil, errExtraneous
	}
	return items, nil
}

var (
	errNullInCollection = errors.New("null is not supported inside collections")
	errExtraneous       = errors.New("unexpected extraneous bytes after the value")
)

// joinCollection serializes items (elements, or keys and values alternately) as a collection of
// n entries.
func joinCollection(items [][]byte, per int) []byte {
	size := 4
	for _, it := range items {
		size += 4 + len(it)
	}
	dst := make([]byte, 0, size)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(items)/per))
	for _, it := range items {
		dst = appendItem(dst, it, false)
	}
	return dst
}

// splitComponents splits a tuple or UDT serialization into at most n components; nulls are
// nil entries of the result with null[i] set. Fewer components than n are allowed (Cassandra
// lets a value have fewer fields than its type, after ALTER TYPE ADD).
func splitComponents(b []byte, n int) (comps [][]byte, nulls []bool, err error) {
	for len(b) > 0 {
		if len(comps) == n {
			return nil, nil, errExtraneous
		}
		item, rest, null, err := readItem(b)
		if err != nil {
			return nil, nil, err
		}
		comps = append(comps, item)
		nulls = append(nulls, null)
		b = rest
	}
	return comps, nulls, nil
}

// Cassandra's unsigned vint: the count of leading 1 bits of the first byte is the number of
// extra bytes; the rest of the first byte and the extra bytes are the value, big-endian.

func appendUvint(dst []byte, v uint64) []byte {
	size := 1
	for size < 9 && v>>(7*size) != 0 {
		size++
	}
	if size == 1 {
		return append(dst, byte(v))
	}
	var buf [9]byte
	for i := size - 1; i >= 0; i-- {
		buf[i] = byte(v)
		v >>= 8
	}
	buf[0] |= ^byte(0xFF >> (size - 1))
	return append(dst, buf[:size]...)
}

func readUvint(b []byte) (uint64, []byte, error) {
	if len(b) == 0 {
		return 0, nil, errShort
	}
	extra := bits.LeadingZeros8(^b[0])
	if len(b) < 1+extra {
		return 0, nil, errShort
	}
	v := uint64(b[0] & byte(0xFF>>extra))
	if extra == 8 {
		v = 0
	}
	for i := 1; i <= extra; i++ {
		v = v<<8 | uint64(b[i])
	}
	return v, b[1+extra:], nil
}

// appendVint writes a signed vint (zigzag).
func appendVint(dst []byte, v int64) []byte { return appendUvint(dst, uint64(v<<1)^uint64(v>>63)) }

func readVint(b []byte) (int64, []byte, error) {
	u, rest, err := readUvint(b)
	return int64(u>>1) ^ -int64(u&1), rest, err
}

// bigFromBytes reads a varint: a big-endian two's-complement integer of any length (empty is 0).
func bigFromBytes(b []byte) *big.Int {
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(len(b))*8))
	}
	return v
}

// bigToBytes is the minimal two's-complement form of v (at least one byte), as Java's
// BigInteger.toByteArray gives it.
func bigToBytes(v *big.Int) []byte {
	if v.Sign() >= 0 {
		b := v.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -v - 1 has the complement bits of v.
	m := new(big.Int).Neg(v)
	m.Sub(m, big.NewInt(1))
	b := m.Bytes()
	for i := range b {
		b[i] = ^b[i]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xFF}, b...)
	}
	return b
}

// decimalParts reads a decimal: int32 scale, then the unscaled varint; value = unscaled×10^-scale.
func decimalParts(b []byte) (unscaled *big.Int, scale int32) {
	return bigFromBytes(b[4:]), int32(binary.BigEndian.Uint32(b))
}
