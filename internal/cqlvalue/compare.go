package cqlvalue

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"math/big"
	"strings"
)

// Compare orders two valid, non-null serialized values of t as Cassandra orders them (its
// AbstractType comparators); it returns -1, 0 or +1. Empty values sort before all others.
//
//   - integers, counter and timestamp signed; date (2^31 is the epoch) and time unsigned;
//   - float and double as Java's Float.compare/Double.compare: -0 < 0, NaN after +Infinity, all
//     NaNs equal;
//   - varint and decimal numerically (1.0 and 1.00 are equal, as BigDecimal.compareTo says);
//   - ascii, text, blob, inet (4-byte and 16-byte addresses alike) and duration by unsigned
//     bytes, a prefix first;
//   - boolean false before true;
//   - uuid (UUIDType): by version, then by timestamp for version 1 or by the high 64 bits
//     unsigned otherwise, then by the low 64 bits unsigned;
//   - timeuuid (TimeUUIDType): by timestamp, then by the low 8 bytes as signed bytes;
//   - lists and sets by element, then the shorter first; maps by key then value per entry;
//     tuples and UDTs by component, a null component first, fewer components first.
//
// Malformed input does not panic; its order is unspecified.
func Compare(t *Type, a, b []byte) int {
	if len(a) == 0 || len(b) == 0 {
		return cmp.Compare(len(a), len(b))
	}
	switch t.Kind {
	case Tinyint, Smallint, Int, Bigint, Counter, Timestamp:
		if len(a) != len(b) {
			break
		}
		return cmp.Compare(signedInt(a), signedInt(b))
	case Boolean:
		return cmp.Compare(min(a[0], 1), min(b[0], 1))
	case Float:
		if len(a) != 4 || len(b) != 4 {
			break
		}
		return compareFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(a))), float64(math.Float32frombits(binary.BigEndian.Uint32(b))))
	case Double:
		if len(a) != 8 || len(b) != 8 {
			break
		}
		return compareFloat(math.Float64frombits(binary.BigEndian.Uint64(a)), math.Float64frombits(binary.BigEndian.Uint64(b)))
	case Varint:
		return bigFromBytes(a).Cmp(bigFromBytes(b))
	case Decimal:
		if len(a) < 4 || len(b) < 4 {
			break
		}
		return compareDecimal(a, b)
	case UUID:
		if len(a) != 16 || len(b) != 16 {
			break
		}
		return bytes.Compare(uuidKey(a), uuidKey(b))
	case Timeuuid:
		if len(a) != 16 || len(b) != 16 {
			break
		}
		return bytes.Compare(timeuuidKey(a), timeuuidKey(b))
	case List, Set:
		return compareSeq(t.Elems[:1], a, b)
	case Map:
		return compareSeq(t.Elems, a, b)
	case Tuple, UDT:
		return compareComponents(t, a, b)
	}
	// Byte order: ascii, text, blob, inet, duration, date and time (unsigned big-endian), and the
	// fallback for malformed values.
	return bytes.Compare(a, b)
}

func signedInt(b []byte) int64 {
	var v int64
	if b[0]&0x80 != 0 {
		v = -1
	}
	for _, c := range b {
		v = v<<8 | int64(c)
	}
	return v
}

// compareFloat is Java's Double.compare: NaN above everything and equal to itself, -0 below 0.
func compareFloat(x, y float64) int {
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn || yn:
		return cmp.Compare(b2i(xn), b2i(yn))
	case x == 0 && y == 0:
		return cmp.Compare(b2i(!math.Signbit(x)), b2i(!math.Signbit(y)))
	}
	return cmp.Compare(x, y)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// decimalDigits splits a decimal value into its sign, its significant digits (no leading or
// trailing zeros; empty for zero) and its exponent e: |value| = 0.digits × 10^e.
func decimalDigits(b []byte) (sign int, digits string, exp int64) {
	u, scale := decimalParts(b)
	sign = u.Sign()
	if sign == 0 {
		return 0, "", 0
	}
	s := new(big.Int).Abs(u).String()
	trimmed := strings.TrimRight(s, "0")
	return sign, trimmed, int64(len(s)) - int64(scale)
}

func compareDecimal(a, b []byte) int {
	sa, da, ea := decimalDigits(a)
	sb, db, eb := decimalDigits(b)
	if sa != sb || sa == 0 {
		return cmp.Compare(sa, sb)
	}
	c := cmp.Compare(ea, eb)
	if c == 0 {
		c = strings.Compare(da, db)
	}
	return c * sa
}

// uuidKey rearranges a UUID so that its bytes compare as UUIDType orders UUIDs: the version
// first, then the 60-bit timestamp of a version 1 UUID or the other high bits, then the low 64
// bits unsigned.
func uuidKey(u []byte) []byte {
	msb := binary.BigEndian.Uint64(u)
	version := msb >> 12 & 0xF
	if version == 1 {
		msb = reorderTimestamp(msb)
	} else {
		msb = version<<60 | msb>>4&0x0FFFFFFFFFFFF000 | msb&0xFFF
	}
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 16), msb)
	return append(k, u[8:16]...)
}

// timeuuidKey rearranges a version 1 UUID so that its bytes compare as TimeUUIDType orders
// them: the timestamp, then the low 8 bytes as signed bytes.
func timeuuidKey(u []byte) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 16), reorderTimestamp(binary.BigEndian.Uint64(u)))
	for _, c := range u[8:16] {
		k = append(k, c^0x80)
	}
	return k
}

// reorderTimestamp moves a version 1 UUID's high bits (time_low, time_mid, version, time_hi)
// into the order version, time_hi, time_mid, time_low: the timestamp in order.
func reorderTimestamp(msb uint64) uint64 {
	return msb<<48 | msb<<16&0xFFFF00000000 | msb>>32
}

// compareSeq compares collections: entries in order (per entry the types of elems: one element,
// or key then value), then the shorter first.
func compareSeq(elems []*Type, a, b []byte) int {
	per := len(elems)
	ia, erra := splitCollection(a, per)
	ib, errb := splitCollection(b, per)
	if erra != nil || errb != nil {
		return bytes.Compare(a, b)
	}
	for i := 0; i < len(ia) && i < len(ib); i++ {
		if c := Compare(elems[i%per], ia[i], ib[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(ia), len(ib))
}

func compareComponents(t *Type, a, b []byte) int {
	ca, na, erra := splitComponents(a, len(t.Elems))
	cb, nb, errb := splitComponents(b, len(t.Elems))
	if erra != nil || errb != nil {
		return bytes.Compare(a, b)
	}
	for i := 0; i < len(ca) && i < len(cb); i++ {
		switch {
		case na[i] && nb[i]:
			continue
		case na[i]:
			return -1
		case nb[i]:
			return 1
		}
		if c := Compare(t.Elems[i], ca[i], cb[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(ca), len(cb))
}
