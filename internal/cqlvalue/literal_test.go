package cqlvalue

import (
	"encoding/hex"
	"testing"

	"github.com/partita-db/partita/internal/cql"
)

func TestEncodeLiterals(t *testing.T) {
	tests := []struct {
		typ, lit string
		hex      string // the serialization, when given
		format   string // Format of the value ("null" for a null value)
		err      string
	}{
		{typ: "int", lit: "42", hex: "0000002a", format: "42"},
		{typ: "int", lit: "-1", hex: "ffffffff", format: "-1"},
		{typ: "int", lit: "99999999999", err: "Unable to make int from '99999999999'"},
		{typ: "int", lit: "'foo'", err: `Invalid STRING constant (foo) for "c" of type int`},
		{typ: "int", lit: "1.5", err: `Invalid FLOAT constant (1.5) for "c" of type int`},
		{typ: "int", lit: "true", err: `Invalid BOOLEAN constant (true) for "c" of type int`},
		{typ: "bigint", lit: "9223372036854775807", hex: "7fffffffffffffff", format: "9223372036854775807"},
		{typ: "bigint", lit: "9223372036854775808", err: "Unable to make long from '9223372036854775808'"},
		{typ: "counter", lit: "5", hex: "0000000000000005", format: "5"},
		{typ: "counter", lit: "null", err: "Invalid null value for counter increment/decrement"},
		{typ: "smallint", lit: "-32768", hex: "8000", format: "-32768"},
		{typ: "smallint", lit: "32768", err: "Unable to make short from '32768'"},
		{typ: "tinyint", lit: "127", hex: "7f", format: "127"},
		{typ: "tinyint", lit: "128", err: "Unable to make byte from '128'"},
		{typ: "varint", lit: "-129", hex: "ff7f", format: "-129"},
		{typ: "varint", lit: "128", hex: "0080", format: "128"},
		{typ: "varint", lit: "123456789012345678901234567890", format: "123456789012345678901234567890"},
		{typ: "decimal", lit: "1.50", hex: "000000020096", format: "1.50"},
		{typ: "decimal", lit: "-12", hex: "00000000f4", format: "-12"},
		{typ: "decimal", lit: "1e3", hex: "fffffffd01", format: "1E+3"},
		{typ: "decimal", lit: "0.0000001", format: "1E-7"},
		{typ: "decimal", lit: "NaN", err: "unable to make BigDecimal from 'NaN'"},
		{typ: "double", lit: "1.5", hex: "3ff8000000000000", format: "1.5"},
		{typ: "double", lit: "3", format: "3.0"},
		{typ: "double", lit: "1e10", format: "1.0E10"},
		{typ: "double", lit: "NaN", format: "NaN"},
		{typ: "double", lit: "-Infinity", format: "-Infinity"},
		{typ: "double", lit: "1e999", format: "Infinity"},
		{typ: "float", lit: "0.1", hex: "3dcccccd", format: "0.1"},
		{typ: "float", lit: "'x'", err: `Invalid STRING constant (x) for "c" of type float`},
		{typ: "boolean", lit: "true", hex: "01", format: "true"},
		{typ: "boolean", lit: "FALSE", hex: "00", format: "false"},
		{typ: "boolean", lit: "1", err: `Invalid INTEGER constant (1) for "c" of type boolean`},
		{typ: "text", lit: "'it''s'", hex: "69742773", format: "'it''s'"},
		{typ: "text", lit: "'héllo'", format: "'héllo'"},
		{typ: "text", lit: "''", hex: "", format: "''"},
		{typ: "text", lit: "1", err: `Invalid INTEGER constant (1) for "c" of type text`},
		{typ: "ascii", lit: "'abc'", hex: "616263", format: "'abc'"},
		{typ: "ascii", lit: "'héllo'", err: "Invalid ASCII character in string literal: héllo"},
		{typ: "blob", lit: "0xCAFE", hex: "cafe", format: "0xcafe"},
		{typ: "blob", lit: "0x", hex: "", format: "0x"},
		{typ: "blob", lit: "0xabc", err: "cannot parse 'abc' as hex bytes"},
		{typ: "blob", lit: "'cafe'", err: `Invalid STRING constant (cafe) for "c" of type blob`},
		{typ: "uuid", lit: "a4a70900-24e1-11df-8924-001ff3591711", format: "a4a70900-24e1-11df-8924-001ff3591711"},
		{typ: "uuid", lit: "550e8400-e29b-41d4-a716-446655440000", hex: "550e8400e29b41d4a716446655440000", format: "550e8400-e29b-41d4-a716-446655440000"},
		{typ: "timeuuid", lit: "550e8400-e29b-41d4-a716-446655440000", err: "TimeUUID supports only version 1 UUIDs"},
		{typ: "timeuuid", lit: "a4a70900-24e1-11df-8924-001ff3591711", format: "a4a70900-24e1-11df-8924-001ff3591711"},
		{typ: "uuid", lit: "'550e8400-e29b-41d4-a716-446655440000'", err: `Invalid STRING constant (550e8400-e29b-41d4-a716-446655440000) for "c" of type uuid`},
		{typ: "timestamp", lit: "'2011-02-03 04:05:00+0000'", hex: "0000012de9b1cde0", format: "'2011-02-03 04:05:00.000+0000'"},
		{typ: "timestamp", lit: "'2011-02-03T04:05:00.000Z'", format: "'2011-02-03 04:05:00.000+0000'"},
		{typ: "timestamp", lit: "'2011-02-03 04:05+01:00'", format: "'2011-02-03 03:05:00.000+0000'"},
		{typ: "timestamp", lit: "'2011-02-03T04:05:06.789-0130'", format: "'2011-02-03 05:35:06.789+0000'"},
		{typ: "timestamp", lit: "'2011-02-03'", format: "'2011-02-03 00:00:00.000+0000'"},
		{typ: "timestamp", lit: "'2011-02-03+0100'", format: "'2011-02-02 23:00:00.000+0000'"},
		{typ: "timestamp", lit: "1296705900000", format: "'2011-02-03 04:05:00.000+0000'"},
		{typ: "timestamp", lit: "'1296705900000'", format: "'2011-02-03 04:05:00.000+0000'"},
		{typ: "timestamp", lit: "-1", format: "'1969-12-31 23:59:59.999+0000'"},
		{typ: "timestamp", lit: "'2011-02-30'", err: "Unable to coerce '2011-02-30' to a formatted date (long)"},
		{typ: "timestamp", lit: "'2011-02-03 25:00'", err: "Unable to coerce '2011-02-03 25:00' to a formatted date (long)"},
		{typ: "timestamp", lit: "'yesterday'", err: "Unable to coerce 'yesterday' to a formatted date (long)"},
		{typ: "date", lit: "'2011-02-03'", format: "'2011-02-03'"},
		{typ: "date", lit: "'1970-01-01'", hex: "80000000", format: "'1970-01-01'"},
		{typ: "date", lit: "2147483648", hex: "80000000", format: "'1970-01-01'"},
		{typ: "date", lit: "0", hex: "00000000"},
		{typ: "date", lit: "4294967296", err: "Unable to make unsigned int (for date) from: '4294967296'"},
		{typ: "date", lit: "'2011-2-3'", err: "Unable to coerce '2011-2-3' to a formatted date (long)"},
		{typ: "time", lit: "'04:05:06.123456789'", format: "'04:05:06.123456789'"},
		{typ: "time", lit: "'04:05:06'", hex: "00000d6001e7f400", format: "'04:05:06.000000000'"},
		{typ: "time", lit: "'04:05:06.5'", format: "'04:05:06.500000000'"},
		{typ: "time", lit: "1000", format: "'00:00:00.000001000'"},
		{typ: "time", lit: "86400000000000", err: "Unable to make long (for time) from: '86400000000000'"},
		{typ: "time", lit: "'24:00:00'", err: "Unable to coerce '24:00:00' to a formatted time (long)"},
		{typ: "inet", lit: "'1.2.3.4'", hex: "01020304", format: "'1.2.3.4'"},
		{typ: "inet", lit: "'::1'", hex: "00000000000000000000000000000001", format: "'::1'"},
		{typ: "inet", lit: "'example.com'", err: "Unable to make inet address from 'example.com'"},
		{typ: "duration", lit: "1h30m", format: "1h30m"},
		{typ: "duration", lit: "-2y3mo1w2d", format: "-2y3mo9d"},
		{typ: "duration", lit: "1ms2us3ns", format: "1ms2us3ns"},
		{typ: "duration", lit: "5", err: "Unable to convert '5' to a duration"},
		{typ: "duration", lit: "'1h'", err: `Invalid STRING constant (1h) for "c" of type duration`},
		{typ: "int", lit: "1h", err: `Invalid DURATION constant (1h) for "c" of type int`},
		{typ: "int", lit: "null", format: "null"},
		{typ: "list<int>", lit: "[3, 1, 3]", hex: "00000003" + "0000000400000003" + "0000000400000001" + "0000000400000003", format: "[3, 1, 3]"},
		{typ: "list<int>", lit: "[]", format: "null"},
		{typ: "list<int>", lit: "[1, null]", err: "null is not supported inside collections"},
		{typ: "list<int>", lit: "[1, 'a']", err: `Invalid STRING constant (a) for "value(c)" of type int`},
		{typ: "list<int>", lit: "{1}", err: "Invalid set literal for c of type list<int>"},
		{typ: "list<int>", lit: "1", err: `Invalid INTEGER constant (1) for "c" of type list<int>`},
		{typ: "set<int>", lit: "{3, 1, 3, 2}", format: "{1, 2, 3}"},
		{typ: "set<int>", lit: "{}", format: "null"},
		{typ: "set<text>", lit: "{'b', 'a', ''}", format: "{'', 'a', 'b'}"},
		{typ: "set<int>", lit: "[1]", err: "Invalid list literal for c of type set<int>"},
		{typ: "map<text, int>", lit: "{'b': 2, 'a': 1, 'b': 3}", format: "{'a': 1, 'b': 3}"},
		{typ: "map<text, int>", lit: "{}", format: "null"},
		{typ: "map<text, int>", lit: "{'a': null}", err: "null is not supported inside collections"},
		{typ: "map<int, int>", lit: "{'a': 1}", err: `Invalid STRING constant (a) for "key(c)" of type int`},
		{typ: "map<text, frozen<set<int>>>", lit: "{'x': {2, 1}}", format: "{'x': {1, 2}}"},
		{typ: "frozen<list<frozen<map<int, text>>>>", lit: "[{2: 'b', 1: 'a'}]", format: "[{1: 'a', 2: 'b'}]"},
		{typ: "tuple<int, text>", lit: "(1, 'a')", hex: "00000004000000010000000161", format: "(1, 'a')"},
		{typ: "tuple<int, text>", lit: "(1, null)", format: "(1, null)"},
		{typ: "tuple<int, text>", lit: "(1)", format: "(1)"},
		{typ: "tuple<int, text>", lit: "(1, 'a', 2)", err: "Invalid tuple literal for c: too many elements. Type frozen<tuple<int, text>> expects 2 but got 3"},
		{typ: "tuple<int, text>", lit: "(1, 2)", err: `Invalid INTEGER constant (2) for "c[1]" of type text`},
		{typ: "int", lit: "(1, 2)", err: "Invalid tuple literal for c of type int"},
		{typ: "int", lit: "(int) 5", format: "5"},
		{typ: "text", lit: "(ascii) 'a'", format: "'a'"},
		{typ: "bigint", lit: "(int) 5", err: "Cannot assign value of type int to c of type bigint"},
		{typ: "blob", lit: "(int) 5", hex: "00000005"},
		{typ: "bigint", lit: "tounixtimestamp('2011-02-03 04:05:00+0000')", err: "Ambiguous call to function system.tounixtimestamp: use type casts to disambiguate"},
		{typ: "bigint", lit: "tounixtimestamp((timestamp) '2011-02-03 04:05:00+0000')", format: "1296705900000"},
		{typ: "bigint", lit: "tounixtimestamp((date) '2011-02-03')", format: "1296691200000"},
		{typ: "timestamp", lit: "totimestamp('2011-02-03')", format: "'2011-02-03 00:00:00.000+0000'"},
		{typ: "date", lit: "todate('2011-02-03 04:05:00+0000')", format: "'2011-02-03'"},
		{typ: "date", lit: "todate(-1)", format: "'1969-12-31'"},
		{typ: "timestamp", lit: "totimestamp(a4a70900-24e1-11df-8924-001ff3591711)", format: "'2010-03-01 03:22:19.305+0000'"},
		{typ: "timeuuid", lit: "mintimeuuid('2013-01-01 00:05+0000')", format: "e23f1e00-53a6-11e2-8080-808080808080"},
		{typ: "timeuuid", lit: "maxtimeuuid('2013-01-01 00:05+0000')", format: "e23f450f-53a6-11e2-7f7f-7f7f7f7f7f7f"},
		{typ: "int", lit: "now()", err: "Type error: cannot assign result of function system.now (type timeuuid) to c (type int)"},
		{typ: "int", lit: "foo()", err: "Unknown function foo"},
		{typ: "timeuuid", lit: "now(1)", err: "Invalid number of arguments in call to function system.now: 0 required but 1 provided"},
		{typ: "timestamp", lit: "totimestamp((date) null)", format: "null"},
		{typ: "timestamp", lit: "totimestamp(null)", err: "Ambiguous call to function system.totimestamp: use type casts to disambiguate"},
	}
	for _, tc := range tests {
		typ := mustType(t, tc.typ)
		v, err := encodeLit(t, typ, tc.lit)
		if tc.err != "" {
			if got := msg(err); got != tc.err {
				t.Errorf("%s as %s: error %q, want %q", tc.lit, tc.typ, got, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s as %s: %v", tc.lit, tc.typ, err)
			continue
		}
		if v.Null {
			if tc.format != "null" {
				t.Errorf("%s as %s: null, want %s", tc.lit, tc.typ, tc.format)
			}
			continue
		}
		if tc.hex != "" && hex.EncodeToString(v.Bytes) != tc.hex {
			t.Errorf("%s as %s: bytes %x, want %s", tc.lit, tc.typ, v.Bytes, tc.hex)
		}
		if err := Validate(typ, v.Bytes); err != nil {
			t.Errorf("%s as %s: encoded an invalid value: %v", tc.lit, tc.typ, err)
		}
		if tc.format != "" {
			f := Format(typ, v.Bytes)
			if f != tc.format {
				t.Errorf("%s as %s: Format %s, want %s", tc.lit, tc.typ, f, tc.format)
			}
			// The printed literal reads back as the same value.
			if again, err := encodeLit(t, typ, f); err != nil || Compare(typ, again.Bytes, v.Bytes) != 0 {
				t.Errorf("%s as %s: Format %s reads back as %x, %v", tc.lit, tc.typ, f, again.Bytes, err)
			}
		}
	}
}

func TestEncodeBindMarkers(t *testing.T) {
	typ := mustType(t, "set<int>")
	term, _ := parseTerm(t, "?")
	bound := Value{Bytes: EncodeList(EncodeInt(3), EncodeInt(1), EncodeInt(3))}
	bind := func(m *cql.BindMarker) (Value, error) { return bound, nil }
	v, err := Encode(typ, "c", term, bind)
	if err != nil || Format(typ, v.Bytes) != "{1, 3}" {
		t.Errorf("bound set: %s, %v", Format(typ, v.Bytes), err)
	}
	bound = Value{Bytes: []byte{0, 0, 0, 1, 0, 0, 0, 2, 0, 1}}
	if _, err := Encode(typ, "c", term, bind); msg(err) != "Expected 4 or 0 byte int (2)" {
		t.Errorf("bad bound set: %v", err)
	}
	for _, b := range []Value{{Null: true}, {Unset: true}} {
		bound = b
		if v, err := Encode(typ, "c", term, bind); err != nil || v.Null != b.Null || v.Unset != b.Unset {
			t.Errorf("bound %+v: %+v, %v", b, v, err)
		}
	}
	// A bind marker inside a literal: an unset element is refused.
	list := mustType(t, "list<int>")
	term, _ = parseTerm(t, "[1, ?]")
	bound = Value{Unset: true}
	if _, err := Encode(list, "c", term, bind); msg(err) != "Invalid unset value in collection" {
		t.Errorf("unset in list: %v", err)
	}
	// A bound value for mintimeuuid's timestamp.
	term, _ = parseTerm(t, "mintimeuuid(?)")
	bound = Value{Bytes: EncodeBigint(1356998700000)}
	v, err = Encode(Native(Timeuuid), "c", term, bind)
	if err != nil || Format(Native(Timeuuid), v.Bytes) != "e23f1e00-53a6-11e2-8080-808080808080" {
		t.Errorf("mintimeuuid(?): %s %v", Format(Native(Timeuuid), v.Bytes), err)
	}
}

func TestValueFunctions(t *testing.T) {
	var prev []byte
	for i := 0; i < 100; i++ {
		v, err := encodeLit(t, Native(Timeuuid), "now()")
		if err != nil || Validate(Native(Timeuuid), v.Bytes) != nil {
			t.Fatalf("now(): %x %v", v.Bytes, err)
		}
		if prev != nil && Compare(Native(Timeuuid), prev, v.Bytes) >= 0 {
			t.Fatalf("now() went back: %x then %x", prev, v.Bytes)
		}
		prev = v.Bytes
	}
	v, err := encodeLit(t, Native(UUID), "now()")
	if err != nil || v.Bytes[6]>>4 != 1 {
		t.Errorf("now() into uuid: %x %v", v.Bytes, err)
	}
	v, err = encodeLit(t, Native(UUID), "uuid()")
	if err != nil || v.Bytes[6]>>4 != 4 || v.Bytes[8]>>6 != 2 {
		t.Errorf("uuid(): %x %v", v.Bytes, err)
	}
	for _, c := range []struct{ typ, lit string }{
		{"timestamp", "currenttimestamp()"}, {"date", "currentdate()"}, {"time", "currenttime()"},
		{"timestamp", "totimestamp(now())"}, {"date", "todate(now())"}, {"bigint", "tounixtimestamp(now())"},
		{"date", "todate(currenttimestamp())"}, {"timeuuid", "currenttimeuuid()"},
	} {
		typ := mustType(t, c.typ)
		v, err := encodeLit(t, typ, c.lit)
		if err != nil || Validate(typ, v.Bytes) != nil || len(v.Bytes) == 0 {
			t.Errorf("%s: %x %v", c.lit, v.Bytes, err)
		}
	}
}
