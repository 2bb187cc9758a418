package cosmos

import (
	"encoding/json"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/value"
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
		`["\ud800\u0041"]`:       {epk.String("\uFFFDA")},
		`["\udc00\ud800"]`:       {epk.String("\uFFFD\uFFFD")},
		`["\xc3\xa9\xff"]`:       {epk.String("é\uFFFD")},
		"[\"\xff\\xff\"]":        {epk.String("\uFFFD\uFFFD")},
		"[\"a\tb\"]":             {epk.String("a\tb")},
		`["it\'s"]`:              {epk.String("it's")},
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
	for _, bad := range []string{`["\u12"]`, `["\u12`, `["\x4"]`, `["\`, `["\ud800\u12"]`, ``, `x`, `["x"`, `["x" "y"]`, `[{"a":1}]`, `["\q"]`, `[1]x`, `[nul]`, `["\U00110000"]`} {
		if _, err := parsePartitionKey(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// Go's %+q quoting, which the Go SDK uses, must come back as the same string, or for invalid
// UTF-8 as the string the body holds.
func FuzzParsePartitionKey(f *testing.F) {
	f.Add("plain")
	f.Add("😀\x7f\a\"\\")
	f.Add("\xc3\xa9\xff\xed\xa0\x80")
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := parsePartitionKey(s); err != nil { // arbitrary input must not panic
			_ = err
		}
		h := "[" + strconv.QuoteToASCII(s) + "]"
		got, err := parsePartitionKey(h)
		if err != nil {
			t.Fatalf("%s: %v", h, err)
		}
		// What encoding/json, as the SDK uses for the body, makes of s: invalid UTF-8 is U+FFFD.
		var want string
		body, _ := json.Marshal(s)
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Str != want {
			t.Fatalf("%s decoded to %+v, want %q", h, got, want)
		}
	})
}

// A key must hash alike whether it came in the header or in the item: a lone high surrogate
// followed by another escape once lost that escape's character in the header only.
func TestPartitionKeyHeaderMatchesBody(t *testing.T) {
	fromHeader, err := parsePartitionKey(`["\ud800\u0041"]`)
	if err != nil {
		t.Fatal(err)
	}
	_, fromBody, err := document.Parse([]byte(`{"id":"a","pk":"\ud800\u0041"}`), [][]string{{"pk"}})
	if err != nil {
		t.Fatal(err)
	}
	want := epk.Key{epk.String("\uFFFDA")}
	if len(fromHeader) != 1 || fromHeader[0] != want[0] || len(fromBody) != 1 || fromBody[0] != want[0] {
		t.Fatalf("header gives %+v, body gives %+v, want %+v", fromHeader, fromBody, want)
	}
	if epk.HashV2(fromHeader) != epk.HashV2(fromBody) {
		t.Fatal("the header's key and the body's hash differently")
	}
}

// Every reader of quoted strings decodes the same text to the same string: the JSON parser,
// SQL string literals, the partition key header and the item scanner's id, key and names.
func TestQuotedStringsDecodeAlike(t *testing.T) {
	for _, lit := range []string{ // as written between the quotes
		`plain`,
		`a\"b\\c\/d\b\f\n\r\t`,
		`\u00e9\u20AC\u0000x\ufffd`,
		`\ud83d\ude00`, `\uD83D\uDE00`, `\udbff\udfff`,
		`\ud800`, `\udc00`, `\ud800x`, `\ud800\n`,
		`\ud800\u0041`, `\udc00\ud800`, `\ude00\ud83d`,
		`\ud800\ud800\udc00`, `\udc00\ud800\udc00`, `\ud800\u0041\udc00`,
		"é😀\x7f",
		"\xff", "a\xc3\\u00e9", "\xed\xa0\x80", "\xf0\x9f\x98", "\xe2\x82\\u00ac",
	} {
		v, err := value.Parse([]byte(`"` + lit + `"`))
		if err != nil {
			t.Errorf("value.Parse %q: %v", lit, err)
			continue
		}
		want := v.Str()
		if !utf8.ValidString(want) {
			t.Errorf("value.Parse %q: invalid UTF-8 %q", lit, want)
		}
		for _, sql := range []string{`SELECT VALUE "` + lit + `"`, `SELECT VALUE '` + lit + `'`} {
			q, err := query.Parse(sql)
			if err != nil {
				t.Errorf("%q: %v", sql, err)
				continue
			}
			if l, ok := q.Select.Value.(query.Literal); !ok || l.Val.Str() != want {
				t.Errorf("%q: got %#v, want %q", sql, q.Select.Value, want)
			}
		}
		if k, err := parsePartitionKey(`["` + lit + `"]`); err != nil || len(k) != 1 || k[0] != epk.String(want) {
			t.Errorf("header %q: got %+v, %v, want %q", lit, k, err, want)
		}
		// The same string as the partition key, as a property name on the key's path, and as
		// the id where it is a valid id.
		body := `{"id":"a","pk":"` + lit + `","n":{"` + lit + `":"x"}}`
		id := "a"
		if document.ValidateID(want) == nil {
			body, id = `{"id":"`+lit+`","pk":"`+lit+`","n":{"`+lit+`":"x"}}`, want
		}
		it, k, err := document.Parse([]byte(body), [][]string{{"pk"}, {"n", want}})
		if err != nil {
			t.Errorf("document %q: %v", body, err)
			continue
		}
		if it.ID != id || len(k) != 2 || k[0] != epk.String(want) || k[1] != epk.String("x") {
			t.Errorf("document %q: id %q, key %+v; want id %q, key [%q x]", body, it.ID, k, id, want)
		}
	}
}
