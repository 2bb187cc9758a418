package value

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

var dialects = []struct {
	name string
	d    Dialect
}{{"JSON", DialectJSON}, {"SQL", DialectSQL}, {"Go", DialectGo}}

// in is what follows the opening quote; err, when set, is the expected reason, at off.
type unquoteCase struct {
	in    string
	quote byte // '"' when 0
	want  string
	end   int // len(in) when 0 and no error
	err   UnquoteReason
	off   int
}

func TestUnquote(t *testing.T) {
	all := []unquoteCase{
		{in: `"`, want: ""},
		{in: `abc"`, want: "abc"},
		{in: `ab"cd`, want: "ab", end: 3},
		{in: `a\"b"`, want: `a"b`},
		{in: `\\\/\b\f\n\r\t"`, want: "\\/\b\f\n\r\t"},
		{in: "\x7f é 😀\"", want: "\x7f é 😀"},
		{in: `\u00e9\u0041"`, want: "éA"},
		{in: `\u20AC\u20ac"`, want: "€€"},
		// surrogates: a pair makes one character; a lone half is U+FFFD and the next escape
		// is read on its own
		{in: `\ud83d\ude00"`, want: "😀"},
		{in: `\uD83D\uDE00"`, want: "😀"},
		{in: `\udbff\udfff"`, want: "\U0010FFFF"},
		{in: `\ud800\u0041"`, want: "\uFFFDA"},
		{in: `\udc00\ud800"`, want: "\uFFFD\uFFFD"},
		{in: `\udc00\ud800\udc00"`, want: "\uFFFD\U00010000"},
		{in: `\ud800\ud800\udc00"`, want: "\uFFFD\U00010000"},
		{in: `\ud800"`, want: "\uFFFD"},
		{in: `\ud800x"`, want: "\uFFFDx"},
		{in: `\ud800\n"`, want: "\uFFFD\n"},
		{in: `\ude00\ud83d"`, want: "\uFFFD\uFFFD"},
		{in: `\ud800\u12"`, err: ShortHex, off: 6},
		{in: `\ud800\u12"xyz`, err: BadHex, off: 6},
		{in: `\ud800\`, err: LoneBackslash, off: 6},
		// invalid UTF-8: U+FFFD for each bad byte
		{in: "\xff\"", want: "\uFFFD"},
		{in: "a\xc3\"", want: "a\uFFFD"},
		{in: "\xc3\xa9\xc3\"", want: "é\uFFFD"},
		{in: "\xed\xa0\x80\"", want: "\uFFFD\uFFFD\uFFFD"}, // an encoded surrogate
		{in: "\xe2\x82\\u00ac\"", want: "\uFFFD\uFFFD¬"},
		{in: "\xf0\x9f\x98\"", want: "\uFFFD\uFFFD\uFFFD"},
		{in: "\xef\xbf\xbd\"", want: "\uFFFD"},
		// truncated and bad escapes
		{in: ``, err: Unterminated, off: 0},
		{in: `abc`, err: Unterminated, off: 3},
		{in: `a\"`, err: Unterminated, off: 3},
		{in: `\`, err: LoneBackslash, off: 0},
		{in: `ab\`, err: LoneBackslash, off: 2},
		{in: `\u`, err: ShortHex, off: 0},
		{in: `x\u12`, err: ShortHex, off: 1},
		{in: `\u12"`, err: ShortHex, off: 0},
		{in: `\u12"x`, err: BadHex, off: 0},
		{in: `\uzzzz"`, err: BadHex, off: 0},
		{in: `\u+123"`, err: BadHex, off: 0},
		{in: `a\qb"`, err: UnknownEscape, off: 1},
		{in: `\0"`, err: UnknownEscape, off: 0},
		{in: "\\\xff\"", err: UnknownEscape, off: 0},
	}
	for _, d := range dialects {
		for _, c := range all {
			checkUnquote(t, d.name, d.d, c)
		}
	}

	perDialect := map[Dialect][]unquoteCase{
		DialectJSON: {
			{in: `\'"`, err: UnknownEscape},
			{in: `\a"`, err: UnknownEscape},
			{in: `\x41"`, err: UnknownEscape},
			{in: `\U0001F600"`, err: UnknownEscape},
			{in: "a\nb\"", err: ControlChar, off: 1},
			{in: "\x00\"", err: ControlChar},
			{in: "\x1f\"", err: ControlChar},
		},
		DialectSQL: {
			{in: `it\'s"`, want: "it's"},
			{in: `it\'s'`, quote: '\'', want: "it's"},
			{in: `a"b'`, quote: '\'', want: `a"b`},
			{in: `\"\u0027'`, quote: '\'', want: `"'`},
			{in: `\ud800\u0041'`, quote: '\'', want: "\uFFFDA"},
			{in: `a'b"`, want: "a'b"},
			{in: `abc"`, quote: '\'', err: Unterminated, off: 4},
			{in: `\a"`, err: UnknownEscape},
			{in: `\x41"`, err: UnknownEscape},
			{in: "a\tb'", quote: '\'', err: ControlChar, off: 1},
		},
		DialectGo: {
			{in: `\'\a\v"`, want: "'\a\v"},
			{in: `\x41\x7f"`, want: "A\x7f"},
			{in: `\xc3\xa9"`, want: "é"}, // \x escapes are bytes
			{in: `\xff"`, want: "\uFFFD"},
			{in: `a\xc3b"`, want: "a\uFFFDb"},
			{in: `\xe2\x82\u00ac"`, want: "\uFFFD\uFFFD¬"},
			{in: "\xc3\\xa9\"", want: "é"}, // raw and escaped bytes make one character
			{in: "\\xc3\xa9\xff\"", want: "é\uFFFD"},
			{in: `\U0001F600\U0001f600"`, want: "😀😀"},
			{in: `\U0010FFFF"`, want: "\U0010FFFF"},
			{in: `\U0000D800\u0041"`, want: "\uFFFDA"},
			{in: `\U00110000"`, err: RuneRange},
			{in: `\UFFFFFFFF"`, err: RuneRange},
			{in: `\x4"`, err: BadHex},
			{in: `\x4`, err: ShortHex},
			{in: `\U0001F60"`, err: BadHex},
			{in: `\U0001F60`, err: ShortHex},
			{in: `\xg0"`, err: BadHex},
			{in: "a\nb\x00\"", want: "a\nb\x00"},
			{in: `\q"`, err: UnknownEscape},
		},
	}
	for _, d := range dialects {
		for _, c := range perDialect[d.d] {
			checkUnquote(t, d.name, d.d, c)
		}
	}
}

func checkUnquote(t *testing.T, dialect string, d Dialect, c unquoteCase) {
	t.Helper()
	q := c.quote
	if q == 0 {
		q = '"'
	}
	wantEnd := c.end
	if wantEnd == 0 {
		wantEnd = len(c.in)
	}
	check := func(how, got string, end int, err error) {
		t.Helper()
		if c.err != 0 {
			var ue *UnquoteError
			if !errors.As(err, &ue) || ue.Reason != c.err || ue.Off != c.off {
				t.Errorf("%s %s %q: got %q, %d, %v; want %v at %d", dialect, how, c.in, got, end, err, c.err, c.off)
			}
			return
		}
		if err != nil || got != c.want || end != wantEnd {
			t.Errorf("%s %s %q: got %q, %d, %v; want %q, %d", dialect, how, c.in, got, end, err, c.want, wantEnd)
		}
	}
	s, end, err := Unquote(c.in, q, d)
	check("string", s, end, err)
	s, end, err = Unquote([]byte(c.in), q, d)
	check("[]byte", s, end, err)
	// Appending keeps what dst held, even bytes that are not UTF-8.
	out, end, err := AppendUnquoted([]byte("\xff<"), c.in, q, d)
	if err == nil {
		if string(out[:2]) != "\xff<" {
			t.Errorf("%s append %q: prefix became %q", dialect, c.in, out[:2])
		}
		out = out[2:]
	}
	check("append", string(out), end, err)
}

func TestUnquoteErrorMessage(t *testing.T) {
	_, _, err := Unquote(`ab\q"`, '"', DialectJSON)
	if err == nil || err.Error() != "invalid escape at offset 2" {
		t.Errorf("got %v", err)
	}
}

// The JSON parser keeps the offsets it has always reported.
func TestParseStringErrors(t *testing.T) {
	for in, want := range map[string]string{
		`"abc`:           "invalid JSON at offset 4: unterminated string",
		`"a\`:            "invalid JSON at offset 2: unterminated escape",
		`"a\q"`:          "invalid JSON at offset 4: invalid escape",
		`"a\u12"`:        "invalid JSON at offset 4: invalid \\u escape",
		`"\ud800\u12"`:   "invalid JSON at offset 9: invalid \\u escape",
		"\"a\x01\"":      "invalid JSON at offset 2: control character in string",
		"[\"\xff\x01\"]": "invalid JSON at offset 3: control character in string",
	} {
		_, err := Parse([]byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", in, err, want)
		}
	}
}

func TestUnquoteAllocates(t *testing.T) {
	plain := `a plain string of some length, with no escapes in it, é and 😀 too"`
	escaped := `line\none \"quoted\" caf\u00e9"`
	long := `\n` + strings.Repeat("x", 300) + `"`
	for _, c := range []struct {
		name string
		f    func()
		want float64
	}{
		{"string without escapes", func() { _, _, _ = Unquote(plain, '"', DialectJSON) }, 0},
		{"[]byte without escapes", func() { _, _, _ = Unquote([]byte(plain), '"', DialectJSON) }, 1},
		{"short string with escapes", func() { _, _, _ = Unquote(escaped, '"', DialectSQL) }, 1},
		{"long string with escapes", func() { _, _, _ = Unquote(long, '"', DialectGo) }, 2},
		{"Parse of a string with escapes", func() { _, _ = Parse([]byte(`"` + escaped)) }, 1},
	} {
		if got := testing.AllocsPerRun(100, c.f); got > c.want {
			t.Errorf("%s: %v allocations, want %v", c.name, got, c.want)
		}
	}
}

// FuzzUnquote checks the JSON dialect against encoding/json, and that the other dialects,
// which only add escapes, agree with it wherever it accepts the input.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{
		`abc"`, `\ud800\u0041"`, `\udc00\ud800"`, `\ud83d\ude00"`, "\xff\xc3\"", `\u12"`, `\'\x41\U0001F600"`,
		"\xe2\x82\\u00ac\"", `\ud800\`, "a\nb\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		got, end, err := Unquote(src, '"', DialectJSON)
		quoted := append([]byte{'"'}, src...)
		if err != nil {
			var ue *UnquoteError
			if !errors.As(err, &ue) || ue.Off < 0 || ue.Off > len(src) {
				t.Fatalf("%q: bad error %#v", src, err)
			}
			if json.Valid(quoted) {
				t.Fatalf("%q: encoding/json accepts it, Unquote says %v", quoted, err)
			}
		} else {
			var want string
			if jerr := json.Unmarshal(quoted[:end+1], &want); jerr != nil {
				t.Fatalf("%q: Unquote gives %q, encoding/json says %v", quoted[:end+1], got, jerr)
			}
			if got != want {
				t.Fatalf("%q: Unquote gives %q, encoding/json %q", quoted[:end+1], got, want)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("%q: invalid UTF-8 %q", src, got)
			}
		}
		for _, d := range dialects {
			for _, q := range []byte{'"', '\''} {
				s, e, derr := Unquote(string(src), q, d.d)
				if derr != nil && q == '"' && err == nil {
					t.Fatalf("%s %q: refused (%v) what JSON accepts", d.name, src, derr)
				}
				if derr == nil && !utf8.ValidString(s) {
					t.Fatalf("%s %q: invalid UTF-8 %q", d.name, src, s)
				}
				if q == '"' && err == nil && (s != got || e != end) {
					t.Fatalf("%s %q: %q, %d; JSON gives %q, %d", d.name, src, s, e, got, end)
				}
			}
		}
	})
}
