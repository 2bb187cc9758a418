package document

import (
	"testing"

	"github.com/partita-db/partita/internal/value"
)

func TestLookup(t *testing.T) {
	body := []byte(` { "a" : { "b" : [1, {"c":2}], "c": "x\"}" , "d":{} }, "e\u002ff": 3, "a~[": null,
		"dup": 1, "dup": {"k": true}, "s": "a" } `)
	for _, c := range []struct {
		segs []string
		raw  string
		ok   bool
	}{
		{[]string{"a", "b"}, `[1, {"c":2}]`, true},
		{[]string{"a", "c"}, `"x\"}"`, true},
		{[]string{"a", "d"}, `{}`, true},
		{[]string{"e/f"}, `3`, true},
		{[]string{"a~["}, `null`, true},
		{[]string{"dup", "k"}, `true`, true}, // the later key
		{[]string{"a", "b", "c"}, ``, false}, // arrays are not walked into
		{[]string{"s", "x"}, ``, false},
		{[]string{"a", "missing"}, ``, false},
		{[]string{"A"}, ``, false},
	} {
		raw, ok := Lookup(body, c.segs)
		if ok != c.ok || string(raw) != c.raw {
			t.Errorf("%q: %q %v, want %q %v", c.segs, raw, ok, c.raw, c.ok)
		}
	}
}

// Lookup finds what value.Parse and Get find, in any JSON object value.Parse accepts.
func FuzzLookup(f *testing.F) {
	f.Add([]byte(`{"a":{"b":1},"a":{"c":[2]}}`), "a", "c")
	f.Add([]byte(`{"x y":{"\u0041":"v"}}`), "x y", "A")
	f.Fuzz(func(t *testing.T, body []byte, s1, s2 string) {
		v, err := value.Parse(body)
		if err != nil || v.Kind() != value.Object {
			return
		}
		for _, segs := range [][]string{{s1}, {s1, s2}} {
			want := v
			for _, s := range segs {
				want = want.Get(s)
			}
			raw, ok := Lookup(body, segs)
			if ok != (want.Kind() != value.Undefined) {
				t.Fatalf("%q in %s: found %v, Get gives %v", segs, body, ok, want)
			}
			if !ok {
				continue
			}
			got, err := value.Parse(raw)
			if err != nil || !value.Equal(got, want) {
				t.Fatalf("%q in %s: %q (%v), Get gives %v", segs, body, raw, err, want)
			}
		}
	})
}
