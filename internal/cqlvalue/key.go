package cqlvalue

import (
	"encoding/binary"
	"math"
	"math/big"
)

// Key components. Each component is a marker byte then, for a value, a body:
//
//	0x00          null (a null tuple or UDT component; AppendNullKey at top level)
//	0x01          the empty value (zero bytes)
//	0x02 body     a value
//
// Every encoding is prefix-free (fixed size, or terminated), so a concatenation of components
// compares component by component, and inverting all bytes of a component (desc) reverses its
// order exactly.
const (
	keyNull  = 0x00
	keyEmpty = 0x01
	keyValue = 0x02
	// In composite bodies, keyMore precedes each element or component and keyEnd closes the
	// sequence: a shorter sequence sorts first.
	keyEnd  = 0x01
	keyMore = 0x02
)

// AppendKey appends to dst an order-preserving, self-delimiting encoding of the valid non-null
// value b of type t: for values a and b of one type, bytes.Compare of their encodings has the
// sign of Compare(t, a, b), reversed when desc; and since no encoding is a prefix of another,
// concatenated components compare component-wise (a clustering key is the concatenation of its
// columns' components, each with its own direction).
//
// Values that Compare calls equal encode equally (decimal 1.0 and 1.00, varint 0x0001 and
// 0x01, NaNs): the encoding identifies a clustering, it is not a way back to the value. Malformed
// values (not Validate'd) get some encoding, without panicking.
func AppendKey(dst []byte, t *Type, b []byte, desc bool) []byte {
	start := len(dst)
	dst = appendKey(dst, t, b)
	if desc {
		invert(dst[start:])
	}
	return dst
}

// AppendNullKey appends the component of a null value, which sorts before every value (after
// every value when desc).
func AppendNullKey(dst []byte, desc bool) []byte {
	if desc {
		return append(dst, ^byte(keyNull))
	}
	return append(dst, keyNull)
}

func invert(b []byte) {
	for i := range b {
		b[i] = ^b[i]
	}
}

func appendKey(dst []byte, t *Type, b []byte) []byte {
	if len(b) == 0 {
		return append(dst, keyEmpty)
	}
	dst = append(dst, keyValue)
	switch t.Kind {
	case Tinyint, Smallint, Int, Bigint, Counter, Timestamp:
		if n := fixedSize(t.Kind); len(b) == n {
			dst = append(dst, b[0]^0x80)
			return append(dst, b[1:]...)
		}
	case Date, Time:
		if n := fixedSize(t.Kind); len(b) == n {
			return append(dst, b...)
		}
	case Boolean:
		return append(dst, min(b[0], 1))
	case Float:
		if len(b) == 4 {
			f := math.Float32frombits(binary.BigEndian.Uint32(b))
			bits := math.Float32bits(f)
			if f != f {
				bits = 0x7FC00000
			}
			if bits&(1<<31) != 0 {
				bits = ^bits
			} else {
				bits |= 1 << 31
			}
			return binary.BigEndian.AppendUint32(dst, bits)
		}
	case Double:
		if len(b) == 8 {
			bits := binary.BigEndian.Uint64(b)
			if f := math.Float64frombits(bits); f != f {
				bits = 0x7FF8000000000000
			}
			if bits&(1<<63) != 0 {
				bits = ^bits
			} else {
				bits |= 1 << 63
			}
			return binary.BigEndian.AppendUint64(dst, bits)
		}
	case UUID:
		if len(b) == 16 {
			return append(dst, uuidKey(b)...)
		}
	case Timeuuid:
		if len(b) == 16 {
			return append(dst, timeuuidKey(b)...)
		}
	case Varint:
		return appendVarintKey(dst, bigFromBytes(b))
	case Decimal:
		if len(b) >= 4 {
			return appendDecimalKey(dst, b)
		}
	case List, Set:
		if items, err := splitCollection(b, 1); err == nil {
			for _, it := range items {
				dst = appendKey(append(dst, keyMore), t.Elems[0], it)
			}
			return append(dst, keyEnd)
		}
	case Map:
		if items, err := splitCollection(b, 2); err == nil {
			for i := 0; i < len(items); i += 2 {
				dst = appendKey(append(dst, keyMore), t.Elems[0], items[i])
				dst = appendKey(dst, t.Elems[1], items[i+1])
			}
			return append(dst, keyEnd)
		}
	case Tuple, UDT:
		if comps, nulls, err := splitComponents(b, len(t.Elems)); err == nil {
			for i, c := range comps {
				dst = append(dst, keyMore)
				if nulls[i] {
					dst = append(dst, keyNull)
				} else {
					dst = appendKey(dst, t.Elems[i], c)
				}
			}
			return append(dst, keyEnd)
		}
	}
	// Byte order (ascii, text, blob, inet, duration), and malformed values.
	return appendBytesKey(dst, b)
}

// fixedSize is the serialized size of a fixed-size integer kind.
func fixedSize(k Kind) int {
	switch k {
	case Tinyint:
		return 1
	case Smallint:
		return 2
	case Int, Date:
		return 4
	}
	return 8
}

// appendBytesKey appends b in byte order, terminated: 0x00 is escaped as 0x00 0xFF and the end
// is 0x00 0x01, which sorts before any continuation.
func appendBytesKey(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, c)
		if c == 0 {
			dst = append(dst, 0xFF)
		}
	}
	return append(dst, 0x00, 0x01)
}

// Numbers of any size: a sign class (negative, zero, positive), then for positives a body that
// grows with the magnitude, for negatives the same body inverted.
const (
	keyNegative = 0x01
	keyZero     = 0x02
	keyPositive = 0x03
)

// appendVarintKey: the magnitude's byte count as a fixed 4 bytes, then its bytes (no leading
// zeros): more bytes is a larger magnitude, equal counts compare by bytes.
func appendVarintKey(dst []byte, v *big.Int) []byte {
	if v.Sign() == 0 {
		return append(dst, keyZero)
	}
	mag := new(big.Int).Abs(v).Bytes()
	class := byte(keyPositive)
	if v.Sign() < 0 {
		class = keyNegative
	}
	dst = append(dst, class)
	start := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(mag)))
	dst = append(dst, mag...)
	if v.Sign() < 0 {
		invert(dst[start:])
	}
	return dst
}

// appendDecimalKey: |value| = 0.digits × 10^exp with digits free of leading and trailing zeros;
// the exponent (8 bytes, sign bit flipped), then the digits as ASCII, then 0x00. A larger
// exponent is a larger magnitude; equal exponents compare by digits, a prefix first.
func appendDecimalKey(dst, b []byte) []byte {
	sign, digits, exp := decimalDigits(b)
	if sign == 0 {
		return append(dst, keyZero)
	}
	class := byte(keyPositive)
	if sign < 0 {
		class = keyNegative
	}
	dst = append(dst, class)
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, uint64(exp)^1<<63)
	dst = append(dst, digits...)
	dst = append(dst, 0x00)
	if sign < 0 {
		invert(dst[start:])
	}
	return dst
}
