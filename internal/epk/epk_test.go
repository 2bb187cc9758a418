package epk_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/epk"
)

func TestHexRoundTrip(t *testing.T) {
	cases := []struct {
		e   epk.EPK
		hex string
	}{
		{epk.Min, ""},
		{epk.Max, "FF"},
		{"\x00", "00"},
		{"\x05\xc0\x14", "05C014"},
		{"\x3f\xff\xab\xcd", "3FFFABCD"},
	}
	for _, c := range cases {
		if got := c.e.Hex(); got != c.hex {
			t.Errorf("Hex(%q) = %q, want %q", string(c.e), got, c.hex)
		}
		for _, in := range []string{c.hex, strings.ToLower(c.hex)} {
			got, err := epk.ParseHex(in)
			if err != nil || got != c.e {
				t.Errorf("ParseHex(%q) = %q, %v; want %q", in, string(got), err, string(c.e))
			}
		}
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	e := epk.EPK(all)
	back, err := epk.ParseHex(e.Hex())
	if err != nil || back != e {
		t.Errorf("round trip of all byte values failed: %v", err)
	}
}

func TestParseHexErrors(t *testing.T) {
	for _, in := range []string{"F", "ABC", "GG", "0x", "zz", "0 ", "é0", "1\x00"} {
		if _, err := epk.ParseHex(in); err == nil {
			t.Errorf("ParseHex(%q) succeeded, want error", in)
		} else if !errors.Is(err, epk.ErrInvalidHex) {
			t.Errorf("ParseHex(%q) error %v does not wrap ErrInvalidHex", in, err)
		}
	}
}

func FuzzHex(f *testing.F) {
	for _, s := range []string{"", "FF", "ff", "05C014", "3fFF", "F", "G0", "\xff\x00", "0x12"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := epk.ParseHex(s)
		if err != nil {
			if e != "" {
				t.Fatalf("ParseHex(%q) returned %q with error %v", s, string(e), err)
			}
			// Hex of arbitrary bytes must parse back.
			raw := epk.EPK(s)
			back, err := epk.ParseHex(raw.Hex())
			if err != nil || back != raw {
				t.Fatalf("Hex/ParseHex round trip of raw %q failed: %v", s, err)
			}
			return
		}
		if len(e) != len(s)/2 {
			t.Fatalf("ParseHex(%q) gave %d bytes", s, len(e))
		}
		if h := e.Hex(); h != strings.ToUpper(s) {
			t.Fatalf("ParseHex(%q).Hex() = %q, want %q", s, h, strings.ToUpper(s))
		}
		back, err := epk.ParseHex(e.Hex())
		if err != nil || back != e {
			t.Fatalf("round trip of %q failed: %v", s, err)
		}
	})
}

// A container with the system key reads no value, and a null one, as its none logical
// partition, the undefined key; every other key as it is.
func TestSystemNone(t *testing.T) {
	undefined := epk.Key{epk.Undefined()}
	for _, tc := range []struct {
		in, want epk.Key
	}{
		{nil, undefined}, {epk.Key{}, undefined}, {epk.Key{epk.Null()}, undefined}, {undefined, undefined},
		{epk.Key{epk.String("a")}, epk.Key{epk.String("a")}}, {epk.Key{epk.Bool(false)}, epk.Key{epk.Bool(false)}},
	} {
		if got := epk.SystemNone(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SystemNone(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
