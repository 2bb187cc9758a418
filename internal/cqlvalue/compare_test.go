package cqlvalue

import (
	"bytes"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestCompareOrder checks sequences given in Cassandra's order: each element sorts before the
// next (or equals it, where marked).
func TestCompareOrder(t *testing.T) {
	f64 := func(f float64) []byte { return EncodeDouble(f) }
	f32 := func(f float32) []byte { return EncodeFloat(f) }
	dec := func(s string) []byte { b, _ := parseDecimal(s); return b }
	vi := func(s string) []byte { v, _ := new(big.Int).SetString(s, 10); return bigToBytes(v) }
	u := func(s string) []byte { b, _ := parseUUID(s); return b[:] }
	tests := []struct {
		typ    string
		values [][]byte
		equal  bool // all equal instead of increasing
	}{
		{typ: "int", values: [][]byte{{}, EncodeInt(math.MinInt32), EncodeInt(-1), EncodeInt(0), EncodeInt(1), EncodeInt(math.MaxInt32)}},
		{typ: "bigint", values: [][]byte{EncodeBigint(math.MinInt64), EncodeBigint(-1), EncodeBigint(0), EncodeBigint(math.MaxInt64)}},
		{typ: "double", values: [][]byte{{}, f64(math.Inf(-1)), f64(-1e300), f64(-1), f64(math.Copysign(0, -1)), f64(0), f64(5e-324), f64(1), f64(math.Inf(1)), f64(math.NaN())}},
		{typ: "double", values: [][]byte{f64(math.NaN()), {0xFF, 0xF8, 0, 0, 0, 0, 0, 1}}, equal: true},
		{typ: "float", values: [][]byte{f32(float32(math.Inf(-1))), f32(-1), f32(float32(math.Copysign(0, -1))), f32(0), f32(1), f32(float32(math.Inf(1))), f32(float32(math.NaN()))}},
		{typ: "varint", values: [][]byte{{}, vi("-100000000000000000000"), vi("-129"), vi("-128"), vi("-1"), vi("0"), vi("1"), vi("127"), vi("128"), vi("100000000000000000000")}},
		{typ: "varint", values: [][]byte{{0x01}, {0x00, 0x01}, {0x00, 0x00, 0x01}}, equal: true},
		{typ: "decimal", values: [][]byte{dec("-1e10"), dec("-10.5"), dec("-10.25"), dec("-0.001"), dec("0"), dec("0.0001"), dec("0.001"), dec("1"), dec("1.05"), dec("1.5"), dec("10"), dec("1e10")}},
		{typ: "decimal", values: [][]byte{dec("1.0"), dec("1"), dec("1.000"), dec("0.1e1"), dec("100e-2")}, equal: true},
		{typ: "decimal", values: [][]byte{dec("0"), dec("0.00"), dec("0e5")}, equal: true},
		{typ: "text", values: [][]byte{{}, []byte("A"), []byte("B"), []byte("a"), []byte("a\x00"), []byte("ab"), []byte("é")}},
		{typ: "boolean", values: [][]byte{{}, {0}, {1}}},
		{typ: "boolean", values: [][]byte{{1}, {2}}, equal: true},
		{typ: "inet", values: [][]byte{{1, 2, 3, 4}, {1, 2, 3, 5}, {2, 0, 0, 0}, unhex(t, "20010db8000000000000000000000001"), {255, 255, 255, 255}}},
		{typ: "date", values: [][]byte{EncodeInt(0), EncodeInt(1), EncodeInt(math.MaxInt32), {0x80, 0, 0, 0}, {0xFF, 0xFF, 0xFF, 0xFF}}},
		// uuid: by version, then v1 by time, then unsigned bytes.
		{typ: "uuid", values: [][]byte{{},
			u("ffffffff-ffff-1000-0000-000000000000"), // v1, time 0x000ffff ffffffff
			u("00000000-0000-1001-0000-000000000000"), // v1, later time (time_hi 1)
			u("00000000-0000-1001-8000-000000000000"), // same time, larger low bits
			u("00000000-0000-4000-0000-000000000000"), // v4
			u("00000000-0000-4000-ff00-000000000000"),
			u("00000001-0000-4000-0000-000000000000"),
		}},
		// timeuuid: by time, then the low bytes signed (0x80 is the smallest byte).
		{typ: "timeuuid", values: [][]byte{
			u("00000001-0000-1000-8080-808080808080"),
			u("00000001-0000-1000-ff00-000000000000"),
			u("00000001-0000-1000-0000-000000000000"),
			u("00000001-0000-1000-7f7f-7f7f7f7f7f7f"),
			u("00000000-0001-1000-8080-808080808080"),
			u("00000000-0000-1001-8080-808080808080"),
		}},
		{typ: "frozen<list<int>>", values: [][]byte{EncodeList(), EncodeList(EncodeInt(-1)), EncodeList(EncodeInt(1)), EncodeList(EncodeInt(1), EncodeInt(0)), EncodeList(EncodeInt(2))}},
		{typ: "frozen<map<int, text>>", values: [][]byte{EncodeList(),
			EncodeMap(Native(Int), [][]byte{EncodeInt(1)}, [][]byte{[]byte("a")}),
			EncodeMap(Native(Int), [][]byte{EncodeInt(1), EncodeInt(3)}, [][]byte{[]byte("a"), []byte("")}),
			EncodeMap(Native(Int), [][]byte{EncodeInt(1)}, [][]byte{[]byte("b")}),
			EncodeMap(Native(Int), [][]byte{EncodeInt(2)}, [][]byte{[]byte("")}),
		}},
		{typ: "tuple<int, text>", values: [][]byte{{}, EncodeTuple(nil), EncodeTuple([]byte{}), EncodeTuple(EncodeInt(1)), EncodeTuple(EncodeInt(1), nil), EncodeTuple(EncodeInt(1), []byte("a")), EncodeTuple(EncodeInt(2), nil)}},
	}
	for _, tc := range tests {
		typ := mustType(t, tc.typ)
		for i := 0; i+1 < len(tc.values); i++ {
			a, b := tc.values[i], tc.values[i+1]
			want := -1
			if tc.equal {
				want = 0
			}
			if got := Compare(typ, a, b); got != want {
				t.Errorf("%s: Compare(%s, %s) = %d, want %d", tc.typ, Format(typ, a), Format(typ, b), got, want)
			}
			if got := Compare(typ, b, a); got != -want {
				t.Errorf("%s: Compare(%s, %s) = %d, want %d", tc.typ, Format(typ, b), Format(typ, a), got, -want)
			}
			ka, kb := AppendKey(nil, typ, a, false), AppendKey(nil, typ, b, false)
			if got := bytes.Compare(ka, kb); got != want {
				t.Errorf("%s: keys of %s and %s compare %d, want %d", tc.typ, Format(typ, a), Format(typ, b), got, want)
			}
		}
	}
}

// keyTypes are the types the key property test draws values of.
var keyTypes = []string{
	"ascii", "bigint", "blob", "boolean", "counter", "date", "decimal", "double", "float", "inet",
	"int", "smallint", "text", "time", "timestamp", "timeuuid", "tinyint", "uuid", "varint", "duration",
	"frozen<list<int>>", "frozen<set<text>>", "frozen<map<int, frozen<list<varint>>>>",
	"tuple<int, text, double>", "tuple<frozen<list<decimal>>, tuple<int, blob>>",
}

// TestAppendKeyProperty: for random values of every type, the keys compare as Compare, reversed
// with desc, and concatenated keys compare component-wise.
func TestAppendKeyProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, name := range keyTypes {
		typ := mustType(t, name)
		for i := 0; i < 3000; i++ {
			a, b := randValue(r, typ, 0), randValue(r, typ, 0)
			if r.IntN(8) == 0 {
				b = a
			}
			if err := Validate(typ, a); err != nil {
				t.Fatalf("%s: generated an invalid value %x: %v", name, a, err)
			}
			want := Compare(typ, a, b)
			if Compare(typ, b, a) != -want {
				t.Fatalf("%s: Compare not antisymmetric on %s, %s", name, Format(typ, a), Format(typ, b))
			}
			for _, desc := range []bool{false, true} {
				ka, kb := AppendKey(nil, typ, a, desc), AppendKey(nil, typ, b, desc)
				w := want
				if desc {
					w = -w
				}
				if got := bytes.Compare(ka, kb); got != w {
					t.Fatalf("%s desc=%v: Compare(%s, %s) = %d but keys %x, %x compare %d", name, desc, Format(typ, a), Format(typ, b), want, ka, kb, got)
				}
				// Two components: (a, x) against (b, y), x and y of another type.
				x, y := EncodeInt(r.Int32N(3)), EncodeInt(r.Int32N(3))
				ca := AppendKey(AppendKey(nil, typ, a, desc), Native(Int), x, false)
				cb := AppendKey(AppendKey(nil, typ, b, desc), Native(Int), y, false)
				wc := w
				if wc == 0 {
					wc = Compare(Native(Int), x, y)
				}
				if got := bytes.Compare(ca, cb); got != wc {
					t.Fatalf("%s desc=%v: composite of %s,%x vs %s,%x compares %d, want %d", name, desc, Format(typ, a), x, Format(typ, b), y, got, wc)
				}
			}
		}
	}
	// Null sorts first (last when desc).
	if bytes.Compare(AppendNullKey(nil, false), AppendKey(nil, Native(Int), nil, false)) >= 0 ||
		bytes.Compare(AppendNullKey(nil, true), AppendKey(nil, Native(Int), nil, true)) <= 0 {
		t.Error("null key does not sort first")
	}
}
