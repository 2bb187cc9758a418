package uniquekey

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

func TestParse(t *testing.T) {
	paths := func(n int) string {
		var ps []string
		for i := range n {
			ps = append(ps, fmt.Sprintf(`"/p%d"`, i))
		}
		return `{"uniqueKeys":[{"paths":[` + strings.Join(ps, ",") + `]}]}`
	}
	keys := func(n int) string {
		var ks []string
		for i := range n {
			ks = append(ks, fmt.Sprintf(`{"paths":["/k%d"]}`, i))
		}
		return `{"uniqueKeys":[` + strings.Join(ks, ",") + `]}`
	}
	for _, tc := range []struct {
		raw  string
		keys int    // keys of a valid policy
		bad  string // part of the BadRequest's message
	}{
		{raw: ``},
		{raw: `null`},
		{raw: `{}`},
		{raw: `{"uniqueKeys":[]}`},
		{raw: `{"uniqueKeys":null}`},
		{raw: `{"uniqueKeys":[{"paths":["/email"]},{"paths":["/first","/last"]}]}`, keys: 2},
		{raw: `{"uniqueKeys":[{"paths":["/a/b", "/\"odd/name\"/c", "/id"]}]}`, keys: 1},
		{raw: paths(16), keys: 1},
		{raw: paths(17), bad: "the limit is 16"},
		{raw: keys(10), keys: 10},
		{raw: keys(11), bad: "at most 10"},
		{raw: `{"uniqueKeys":[{"paths":[]}]}`, bad: "has no paths"},
		{raw: `{"uniqueKeys":[{"paths":["email"]}]}`, bad: "must start with /"},
		{raw: `{"uniqueKeys":[{"paths":["/"]}]}`, bad: "must start with /"},
		{raw: `{"uniqueKeys":[{"paths":["/a/*"]}]}`, bad: "property name"},
		{raw: `{"uniqueKeys":[{"paths":["/a/?"]}]}`, bad: "property name"},
		{raw: `{"uniqueKeys":[{"paths":["/tags/[]"]}]}`, bad: "property name"},
		{raw: `{"uniqueKeys":[{"paths":["/a//b"]}]}`, bad: "property name"},
		{raw: `{"uniqueKeys":[{"paths":["/\"a"]}]}`, bad: "quote is not closed"},
		{raw: `{"uniqueKeys":[{"paths":["/_ts"]}]}`, bad: "system property"},
		{raw: `{"uniqueKeys":[{"paths":["/a","/a"]}]}`, bad: "more than once"},
		{raw: `{"uniqueKeys":[{"paths":["/a","/\"a\""]}]}`, bad: "more than once"},
		{raw: `{"uniqueKeys":[{"paths":["/a","/b"]},{"paths":["/b","/a"]}]}`, bad: "same paths"},
		{raw: `{"uniqueKeys":"x"}`, bad: "not valid"},
		{raw: `[1]`, bad: "not valid"},
	} {
		p, err := Parse([]byte(tc.raw))
		switch {
		case tc.bad != "":
			if !errors.Is(err, fault.BadRequest) || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("Parse(%s) = %v, want BadRequest saying %q", tc.raw, err, tc.bad)
			}
		case err != nil:
			t.Errorf("Parse(%s): %v", tc.raw, err)
		case p.Len() != tc.keys || (tc.keys == 0) != (p == nil):
			t.Errorf("Parse(%s) has %d keys (nil: %v), want %d", tc.raw, p.Len(), p == nil, tc.keys)
		}
	}
}

func TestEqualAndJSON(t *testing.T) {
	parse := func(s string) *Policy {
		p, err := Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := parse(`{"uniqueKeys":[{"paths":["/email"]},{"paths":["/first","/last"]}]}`)
	for _, same := range []string{
		`{"uniqueKeys":[{"paths":["/last","/first"]},{"paths":["/email"]}]}`,
		string(a.JSON()),
	} {
		if !a.Equal(parse(same)) {
			t.Errorf("%s should equal %s", same, a.JSON())
		}
	}
	for _, other := range []string{``, `{"uniqueKeys":[{"paths":["/email"]}]}`, `{"uniqueKeys":[{"paths":["/email"]},{"paths":["/first"]}]}`} {
		if a.Equal(parse(other)) {
			t.Errorf("%s should not equal %s", other, a.JSON())
		}
	}
	if !parse(``).Equal(parse(`{"uniqueKeys":[]}`)) {
		t.Error("no policy and an empty one differ")
	}
	if got := string(parse(``).JSON()); got != `{"uniqueKeys":[]}` {
		t.Errorf("JSON of no policy = %s", got)
	}
	if got := string(a.JSON()); got != `{"uniqueKeys":[{"paths":["/email"]},{"paths":["/first","/last"]}]}` {
		t.Errorf("JSON = %s", got)
	}
}

// Entries are equal exactly when the values at the key's paths are, types included.
func TestEntries(t *testing.T) {
	p, err := Parse([]byte(`{"uniqueKeys":[{"paths":["/v"]},{"paths":["/a","/b/c"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	entry := func(doc string, key int) []byte {
		v, err := value.Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		es := p.Entries(v)
		if len(es) != 2 || Key(es[0]) != 0 || Key(es[1]) != 1 {
			t.Fatalf("entries of %s: %x", doc, es)
		}
		return es[key]
	}
	for _, tc := range []struct {
		a, b  string
		key   int
		equal bool
	}{
		{`{"v":1}`, `{"v":1.0}`, 0, true},
		{`{"v":0}`, `{"v":-0}`, 0, true},
		{`{"v":1}`, `{"v":"1"}`, 0, false},
		{`{"v":"a"}`, `{"v":"A"}`, 0, false},
		{`{"v":null}`, `{}`, 0, true}, // missing takes part like null
		{`{"v":null}`, `{"v":false}`, 0, false},
		{`{"v":[1,2]}`, `{"v":[1,2]}`, 0, true},
		{`{"v":[1,2]}`, `{"v":[2,1]}`, 0, false},
		{`{"v":{"x":1,"y":2}}`, `{"v":{"y":2,"x":1}}`, 0, true},
		{`{"v":{"x":1}}`, `{"v":[1]}`, 0, false},
		{`{"v":"a\u0000b"}`, `{"v":"a"}`, 0, false},
		{`{"a":"x","b":{"c":"y"}}`, `{"b":{"c":"y"},"a":"x"}`, 1, true},
		{`{"a":"xy","b":{"c":""}}`, `{"a":"x","b":{"c":"y"}}`, 1, false},
		{`{"a":"x"}`, `{"a":"x","b":3}`, 1, true}, // /b/c missing in both
		{`{"a":"x","b":{"c":null}}`, `{"a":"x"}`, 1, true},
		{`{"a":"x","b":{"c":1}}`, `{"a":"x"}`, 1, false},
	} {
		if got := bytes.Equal(entry(tc.a, tc.key), entry(tc.b, tc.key)); got != tc.equal {
			t.Errorf("key %d: %s and %s give equal entries: %v, want %v", tc.key, tc.a, tc.b, got, tc.equal)
		}
	}
	var none *Policy
	if none.Entries(value.NullV()) != nil || none.Len() != 0 {
		t.Error("a nil policy has entries")
	}
}

// A unique key policy comes from the client's container body: whatever it holds, parsing
// never panics, every refusal is a 400, and what is accepted keeps Cosmos's limits and reads
// back as the same policy from the JSON it is reported as.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `{"uniqueKeys":[]}`, `{"uniqueKeys":null}`, `{"uniqueKeys":[{"paths":["/email"]}]}`,
		`{"uniqueKeys":[{"paths":["/a","/b/c"]},{"paths":["/\"odd name\"/x"]}]}`, `{"uniqueKeys":[{"paths":["/a","/a"]}]}`,
		`{"uniqueKeys":[{"paths":["/a","/b"]},{"paths":["/b","/a"]}]}`, `{"uniqueKeys":[{"paths":[]}]}`, `{"uniqueKeys":[{}]}`,
		`{"uniqueKeys":[{"paths":["a"]}]}`, `{"uniqueKeys":[{"paths":["/"]}]}`, `{"uniqueKeys":[{"paths":["/a/*"]}]}`,
		`{"uniqueKeys":[{"paths":["/a/[]"]}]}`, `{"uniqueKeys":[{"paths":["/a/0"]}]}`, `{"uniqueKeys":[{"paths":["/\"a"]}]}`,
		`{"uniqueKeys":[{"paths":["/\"\""]}]}`, `{"uniqueKeys":[{"paths":["/a\u0000b"]},{"paths":["/a/b"]}]}`,
		"{\"uniqueKeys\":[{\"paths\":[\"/\xff\"]},{\"paths\":[\"/\xfe\"]}]}", `{"uniqueKeys":[{"paths":["/\ud800"]}]}`,
		`{"uniqueKeys":"x"}`, `{"uniqueKeys":[{"paths":"/a"}]}`, `{"uniqueKeys":[{"paths":[1]}]}`, `[]`, `"x"`, `1e400`,
		`{"uniqueKeys":[{"paths":["/a"]}],"uniqueKeys":[{"paths":["/b"]}]}`,
		`{"uniqueKeys":[` + strings.Repeat(`{"paths":["/a"]},`, 11) + `{"paths":["/z"]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := Parse(raw)
		if err != nil {
			if !errors.Is(err, fault.BadRequest) {
				t.Fatalf("%s: failure is not a 400: %v", raw, err)
			}
			return
		}
		if p.Len() > MaxKeys {
			t.Fatalf("%s: %d keys accepted", raw, p.Len())
		}
		for i := range p.Len() {
			if n := len(p.Paths(i)); n == 0 || n > MaxPaths {
				t.Fatalf("%s: key %d with %d paths accepted", raw, i, n)
			}
		}
		again, err := Parse(p.JSON())
		if err != nil || !again.Equal(p) || !p.Equal(again) {
			t.Fatalf("%s parsed, but its JSON %s reads back as %v, %v", raw, p.JSON(), again, err)
		}
	})
}
