package cqlvalue

import (
	"encoding/hex"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct{ typ, hex, err string }{
		{"int", "00000001", ""},
		{"int", "", ""},
		{"int", "000001", "Expected 4 or 0 byte int (3)"},
		{"bigint", "0000000000000001", ""},
		{"bigint", "00", "Expected 8 or 0 byte long (1)"},
		{"counter", "00000001", "Expected 8 or 0 byte long (4)"},
		{"smallint", "", "Expected 2 bytes for a smallint (0)"},
		{"tinyint", "0102", "Expected 1 byte for a tinyint (2)"},
		{"float", "00", "Expected 4 or 0 byte value for a float (1)"},
		{"double", "", ""},
		{"boolean", "0000", "Expected 1 or 0 byte value (2)"},
		{"boolean", "05", ""},
		{"uuid", "00", "UUID should be 16 or 0 bytes (1)"},
		{"timeuuid", "a4a7090024e111df8924001ff3591711", ""},
		{"timeuuid", "550e8400e29b41d4a716446655440000", "Invalid version for TimeUUID type."},
		{"date", "", "Expected 4 byte long for date (0)"},
		{"time", "0000000000000000", ""},
		{"time", "ffffffffffffffff", "Time value -1 out of range: a time is 0 to 86399999999999 nanoseconds"},
		{"timestamp", "00000000", "Expected 8 or 0 byte long for date (4)"},
		{"inet", "0102030405", "Expected 4 or 16 byte inetaddress (5)"},
		{"ascii", "41ff", "Invalid byte for ascii: 255"},
		{"text", "c328", "String didn't validate."},
		{"blob", "ff00", ""},
		{"varint", "", ""},
		{"decimal", "000001", "Expected 0 or at least 4 bytes (3)"},
		{"decimal", "00000001", ""},
		{"duration", "000000", ""},
		{"duration", "", "Expected at least 3 bytes for a duration (0)"},
		{"duration", "020001", "The duration months, days and nanoseconds must be all of the same sign (1, 0, -1)"},
		{"duration", "00000000", "Invalid duration value: unexpected extraneous bytes"},
		{"duration", "0000ff", "Invalid duration value: not enough bytes"},
		{"list<int>", "0000000100000004 00000001", ""},
		{"list<int>", "", "Invalid list value: not enough bytes"},
		{"list<int>", "00000000", ""},
		{"list<int>", "00000001ffffffff", "null is not supported inside collections"},
		{"list<int>", "00000002 00000004 00000001", "Invalid list value: not enough bytes"},
		{"list<int>", "00000001 00000004 00000001 00", "Invalid list value: unexpected extraneous bytes after the value"},
		{"list<int>", "ffffffff", "Invalid list value: negative element count"},
		{"list<int>", "7fffffff", "Invalid list value: not enough bytes"},
		{"list<int>", "00000001 00000002 0001", "Expected 4 or 0 byte int (2)"},
		{"set<text>", "00000002 00000001 62 00000001 61", ""},
		{"map<text, int>", "00000001 00000001 61 00000004 00000001", ""},
		{"map<text, int>", "00000001 00000001 61", "Invalid map value: not enough bytes"},
		{"tuple<int, text>", "", ""},
		{"tuple<int, text>", "00000004 00000001 ffffffff", ""},
		{"tuple<int, text>", "00000004 00000001 ffffffff ffffffff", "Invalid frozen<tuple<int, text>> value: unexpected extraneous bytes after the value"},
		{"tuple<int, text>", "00000004 000001", "Invalid frozen<tuple<int, text>> value: not enough bytes"},
		{"tuple<int, frozen<list<int>>>", "ffffffff 00000004 00000000", ""},
	}
	for _, tc := range tests {
		b := unhex(t, tc.hex)
		err := Validate(mustType(t, tc.typ), b)
		if tc.err == "" && err != nil || tc.err != "" && msg(err) != tc.err {
			t.Errorf("%s %s: %v, want %q", tc.typ, tc.hex, err, tc.err)
		}
	}
}

func TestNormalize(t *testing.T) {
	typ := mustType(t, "map<int, frozen<set<int>>>")
	in := EncodeList( // keys 2, 1, 2 with sets {3,1}, {}, {5,5}
		EncodeInt(2), EncodeList(EncodeInt(3), EncodeInt(1)),
		EncodeInt(1), EncodeList(),
		EncodeInt(2), EncodeList(EncodeInt(5), EncodeInt(5)),
	)
	copy(in[:4], EncodeInt(3)) // three entries, not six elements
	out, err := Normalize(typ, in)
	if err != nil || Format(typ, out) != "{1: {}, 2: {5}}" {
		t.Errorf("Normalize: %s, %v", Format(typ, out), err)
	}
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	clean := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			clean = append(clean, s[i])
		}
	}
	b, err := hex.DecodeString(string(clean))
	if err != nil {
		t.Fatalf("bad hex %q", s)
	}
	return b
}
