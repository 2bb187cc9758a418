package cqlvalue

import (
	"bytes"
	"testing"

	"github.com/partita-db/partita/internal/cql"
)

// fuzzTypes are the types the fuzz targets pick from by index.
var fuzzTypes = append([]string{"map<text, frozen<set<int>>>", "list<duration>", "map<int, duration>"}, keyTypes...)

// FuzzValidate: Validate never panics; a value it accepts can be normalized (to a fixed point),
// compared, keyed and formatted.
func FuzzValidate(f *testing.F) {
	f.Add(uint8(0), []byte{0, 0, 0, 1, 0, 0, 0, 1, 0x61, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 1})
	f.Add(uint8(3), []byte{0, 0, 0, 1})
	f.Add(uint8(9), []byte{0, 0, 0, 2, 0x96})
	f.Add(uint8(1), []byte{0, 0, 0, 1, 0, 0, 0, 3, 2, 0, 1})
	f.Add(uint8(20), []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 3})
	f.Add(uint8(22), []byte{0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 0})
	f.Add(uint8(25), []byte{0, 0, 0, 4, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	types := make([]*Type, len(fuzzTypes))
	for i, s := range fuzzTypes {
		types[i] = mustType(f, s)
	}
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		typ := types[int(which)%len(types)]
		_ = Format(typ, b)
		_ = AppendKey(nil, typ, b, false)
		_ = Compare(typ, b, b)
		if Validate(typ, b) != nil {
			return
		}
		n, err := Normalize(typ, b)
		if err != nil {
			t.Fatalf("%s: Normalize refused a valid value: %v", typ, err)
		}
		n2, err := Normalize(typ, n)
		if err != nil || !bytes.Equal(n, n2) {
			t.Fatalf("%s: Normalize not a fixed point: %x, %x, %v", typ, n, n2, err)
		}
		if Compare(typ, n, n) != 0 {
			t.Fatalf("%s: %x differs from itself", typ, n)
		}
		if !bytes.Equal(AppendKey(nil, typ, n, true), AppendKey(nil, typ, n, true)) {
			t.Fatalf("%s: unstable key", typ)
		}
	})
}

// FuzzEncodeLiteral: any term the parser accepts encodes into any type without panicking, and
// what Encode returns is valid and formats into a literal that reads back as an equal value.
func FuzzEncodeLiteral(f *testing.F) {
	for _, s := range []string{"1", "-1.5e3", "'2011-02-03 04:05:00+0000'", "{'a': {1, 2}}", "[1, 2]", "(1, 'a', 2.5)",
		"0xcafe", "1h30m", "now()", "todate(now())", "(int) ?", "{}", "a4a70900-24e1-11df-8924-001ff3591711", "NaN", "'::1'"} {
		f.Add(uint8(0), s)
	}
	types := make([]*Type, len(fuzzTypes))
	for i, s := range fuzzTypes {
		types[i] = mustType(f, s)
	}
	f.Fuzz(func(t *testing.T, which uint8, lit string) {
		typ := types[int(which)%len(types)]
		st, err := cql.Parse("INSERT INTO t (c) VALUES (" + lit + ")")
		if err != nil {
			return
		}
		ins, ok := st.(*cql.Insert)
		if !ok || len(ins.Values) != 1 {
			return
		}
		bind := func(*cql.BindMarker) (Value, error) { return Value{Bytes: EncodeInt(7)}, nil }
		v, err := Encode(typ, "c", ins.Values[0], bind)
		if err != nil || v.Null || v.Unset {
			if err != nil && !cql.IsInvalid(err) {
				t.Fatalf("%s as %s: not an invalid-statement error: %v", lit, typ, err)
			}
			return
		}
		if err := Validate(typ, v.Bytes); err != nil {
			t.Fatalf("%s as %s: encoded an invalid value %x: %v", lit, typ, v.Bytes, err)
		}
		text := Format(typ, v.Bytes)
		again, err := encodeLit(t, typ, text)
		if err != nil || Compare(typ, again.Bytes, v.Bytes) != 0 && !hasNaN(text) {
			t.Fatalf("%s as %s: formatted as %s, which reads back as %x (%v), not %x", lit, typ, text, again.Bytes, err, v.Bytes)
		}
	})
}

func hasNaN(s string) bool { return bytes.Contains([]byte(s), []byte("NaN")) }
