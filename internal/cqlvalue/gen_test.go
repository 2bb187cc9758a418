package cqlvalue

import (
	"math"
	"math/big"
	"math/rand/v2"
)

// randValue draws a valid value of t, with the edge cases of its type often.
func randValue(r *rand.Rand, t *Type, depth int) []byte {
	empty := r.IntN(20) == 0
	switch t.Kind {
	case Ascii:
		return randBytes(r, 0x7F)
	case Text:
		texts := []string{"", "a", "é", "ab", "a\x00b", "\x00", "\x00\x01", "b"}
		return []byte(texts[r.IntN(len(texts))])
	case Blob:
		return randBytes(r, 0xFF)
	case Boolean:
		return [][]byte{{0}, {1}, {7}, {}}[r.IntN(4)]
	case Tinyint, Smallint, Int, Bigint, Counter, Timestamp:
		if t.Kind != Tinyint && t.Kind != Smallint && empty {
			return []byte{}
		}
		b := make([]byte, fixedSize(t.Kind))
		for i := range b {
			b[i] = []byte{0, 0xFF, 0x80, 0x7F, byte(r.Uint32())}[r.IntN(5)]
		}
		return b
	case Date:
		return EncodeInt([]int32{0, -1, math.MinInt32, r.Int32(), r.Int32N(3)}[r.IntN(5)])
	case Time:
		return EncodeBigint([]int64{0, maxTimeNanos, r.Int64N(maxTimeNanos), r.Int64N(3)}[r.IntN(4)])
	case Float:
		if empty {
			return []byte{}
		}
		fs := []float32{0, float32(math.Copysign(0, -1)), 1, -1, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), r.Float32(), -r.Float32() * 1e30}
		return EncodeFloat(fs[r.IntN(len(fs))])
	case Double:
		if empty {
			return []byte{}
		}
		fs := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), r.Float64(), -r.Float64() * 1e300, 5e-324}
		return EncodeDouble(fs[r.IntN(len(fs))])
	case Varint:
		if empty {
			return []byte{}
		}
		v := randBig(r)
		b := bigToBytes(v)
		if r.IntN(4) == 0 { // a non-minimal encoding of the same number
			pad := byte(0)
			if v.Sign() < 0 {
				pad = 0xFF
			}
			b = append([]byte{pad}, b...)
		}
		return b
	case Decimal:
		if empty {
			return []byte{}
		}
		scale := []int32{0, 1, 2, -1, -3, 10, r.Int32N(40) - 20, math.MaxInt32, math.MinInt32}[r.IntN(9)]
		return append(EncodeInt(scale), bigToBytes(randBig(r))...)
	case Inet:
		if r.IntN(2) == 0 {
			return randFixed(r, 4)
		}
		return randFixed(r, 16)
	case UUID:
		if empty {
			return []byte{}
		}
		u := randFixed(r, 16)
		u[6] = u[6]&0x0F | byte(r.IntN(3)*3+1)<<4 // versions 1, 4 and 7
		return u
	case Timeuuid:
		u := randFixed(r, 16)
		u[6] = u[6]&0x0F | 0x10
		return u
	case Duration:
		d := duration{r.Int32N(3), r.Int32N(3), r.Int64N(3)}
		if r.IntN(2) == 0 {
			d = duration{-d.months, -d.days, -d.nanos}
		}
		return d.append(nil)
	case List, Set, Map:
		n := r.IntN(4)
		if depth > 2 {
			n = 0
		}
		var items [][]byte
		for i := 0; i < n; i++ {
			items = append(items, randValue(r, t.Elems[0], depth+1))
			if t.Kind == Map {
				items = append(items, randValue(r, t.Elems[1], depth+1))
			}
		}
		per := 1
		if t.Kind == Map {
			per = 2
		}
		return normalize(t, joinCollection(items, per))
	case Tuple, UDT:
		n := len(t.Elems)
		if r.IntN(5) == 0 {
			n = r.IntN(n + 1)
		}
		out := []byte{}
		for i := 0; i < n; i++ {
			if r.IntN(6) == 0 {
				out = appendItem(out, nil, true)
			} else {
				out = appendItem(out, randValue(r, t.Elems[i], depth+1), false)
			}
		}
		return out
	}
	panic("randValue: " + t.String())
}

// randBytes is a short byte string of values up to max, zeros and max often.
func randBytes(r *rand.Rand, max byte) []byte {
	b := make([]byte, r.IntN(4))
	for i := range b {
		b[i] = []byte{0, 1, max, byte(r.UintN(uint(max) + 1))}[r.IntN(4)]
	}
	return b
}

// randFixed is n bytes, mostly zeros, so that values share prefixes.
func randFixed(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		if r.IntN(3) == 0 {
			b[i] = []byte{1, 0x7F, 0x80, 0xFF, byte(r.Uint32())}[r.IntN(5)]
		}
	}
	return b
}

// randBig is a number of a random size and sign, small ones often.
func randBig(r *rand.Rand) *big.Int {
	v := new(big.Int).Lsh(big.NewInt(r.Int64N(1000)), uint(r.IntN(4)*r.IntN(40)))
	if r.IntN(2) == 0 {
		v.Neg(v)
	}
	return v
}
