package cosmos

import (
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/partita-db/partita/internal/epk"
)

func TestParsePartitionKey(t *testing.T) {
	for h, want := range map[string]epk.Key{
		`["x"]`:                  {epk.String("x")},
		`[5]`:                    {epk.Number(5)},
		`[-1.5e3]`:               {epk.Number(-1500)},
		`[null]`:                 {epk.Null()},
		`[{}]`:                   {epk.Undefined()},
		`[true, false]`:          {epk.Bool(true), epk.Bool(false)},
		`["a","b",3]`:            {epk.String("a"), epk.String("b"), epk.Number(3)},
		`["\U0001f600\x7f\a"]`:   {epk.String("😀\x7f\a")},
		`["\ud83d\ude00\u00e9"]`: {epk.String("😀é")},
		`[]`:                     {},
	} {
		got, err := parsePartitionKey(h)
		if err != nil {
			t.Errorf("%s: %v", h, err)
			continue
		}
		if len(got) != len(want) {
			t.Errorf("%s: %+v, want %+v", h, got, want)
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: [%d] = %+v, want %+v", h, i, got[i], want[i])
			}
		}
	}
	for _, bad := range []string{``, `x`, `["x"`, `["x" "y"]`, `[{"a":1}]`, `["\q"]`, `[1]x`, `[nul]`, `["\U00110000"]`} {
		if _, err := parsePartitionKey(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// Go's %+q quoting, which the Go SDK uses, must come back as the same string.
func FuzzParsePartitionKey(f *testing.F) {
	f.Add("plain")
	f.Add("😀\x7f\a\"\\")
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := parsePartitionKey(s); err != nil { // arbitrary input must not panic
			_ = err
		}
		h := "[" + strconv.QuoteToASCII(s) + "]"
		got, err := parsePartitionKey(h)
		if err != nil {
			t.Fatalf("%s: %v", h, err)
		}
		if len(got) != 1 || got[0].Str != s && utf8.ValidString(s) {
			t.Fatalf("%s decoded to %+v, want %q", h, got, s)
		}
	})
}
