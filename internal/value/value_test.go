package value

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func mustParse(t *testing.T, s string) Value {
	t.Helper()
	v, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%s): %v", s, err)
	}
	return v
}

func TestParseRoundTrip(t *testing.T) {
	for _, s := range []string{
		`null`, `true`, `false`, `0`, `-1.5`, `1e+21`, `1e-7`, `"a\"b\\c\n\u0001"`, `[]`, `{}`,
		`[1,"x",[true,null],{"k":{"n":[]}}]`, `{"b":1,"a":2}`, `"é😀"`,
	} {
		v := mustParse(t, s)
		if got := v.String(); got != s {
			t.Errorf("Parse(%s).String() = %s", s, got)
		}
	}
	for _, s := range []string{``, `nul`, `01`, `1.`, `-`, `+1`, `"abc`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `"\x"`, "\"\x01\"", `1 2`} {
		if _, err := Parse([]byte(s)); err == nil {
			t.Errorf("Parse(%q) succeeded", s)
		}
	}
}

// Escaped surrogates decode as encoding/json decodes them: a pair to one character, and a lone
// surrogate to U+FFFD without swallowing the escape that follows it.
func TestParseSurrogates(t *testing.T) {
	for _, s := range []string{
		`"\ud83d\ude00"`, `"\ud800\u0041"`, `"\udc00\ud83d\ude00"`, `"\ud800"`, `"\ud800x"`,
		`"\ud800\ud800\udc00"`, `"a\udfffb"`, "\"\xff\"",
	} {
		var want string
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatalf("encoding/json rejects %s: %v", s, err)
		}
		if got := mustParse(t, s).Str(); got != want {
			t.Errorf("Parse(%s) = %q, encoding/json gives %q", s, got, want)
		}
	}
}

func TestAppendNumber(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-42, "-42"}, {0.1, "0.1"},
		{1e20, "100000000000000000000"}, {1e21, "1e+21"}, {1.5e-7, "1.5e-7"}, {0.000001, "0.000001"},
		{123456789.125, "123456789.125"}, {math.NaN(), "null"}, {math.Inf(1), "null"},
		{-1.79769e+308, "-1.79769e+308"},
	}
	for _, c := range cases {
		if got := string(AppendNumber(nil, c.f)); got != c.want {
			t.Errorf("AppendNumber(%v) = %s, want %s", c.f, got, c.want)
		}
	}
}

// Key and Equal must agree, including on the values JSON has no text for.
func TestKeyMatchesEqual(t *testing.T) {
	vals := []Value{
		Undef(), NullV(), Bool(false), Bool(true), Num(0), Num(math.Copysign(0, -1)), Num(1), Num(1.5),
		Str(""), Str("1"), Str("a"),
		Arr(nil), Arr([]Value{Num(1)}), Arr([]Value{Num(1), Undef()}), Arr([]Value{Str("1")}),
		Obj(nil), Obj([]Member{{"a", Num(1)}}), Obj([]Member{{"a", Num(1)}, {"b", Undef()}}),
		Obj([]Member{{"b", Undef()}, {"a", Num(1)}}), Obj([]Member{{"a", Undef()}}),
		Obj([]Member{{"a", Num(1)}, {"b", Num(2)}}), Obj([]Member{{"b", Num(2)}, {"a", Num(1)}}),
		Obj([]Member{{"a", Obj([]Member{{"x", NullV()}})}}),
	}
	for _, a := range vals {
		for _, b := range vals {
			if eq, keq := Equal(a, b), Key(a) == Key(b); eq != keq {
				t.Errorf("Equal(%v, %v) = %v but keys equal = %v", a, b, eq, keq)
			}
		}
	}
	if !Equal(Obj([]Member{{"a", Num(1)}, {"b", Undef()}}), Obj([]Member{{"a", Num(1)}})) {
		t.Error("an undefined member must not count")
	}
	if Equal(Obj([]Member{{"a", Undef()}}), Obj([]Member{{"b", Num(1)}})) {
		t.Error("{} equals {b: 1}")
	}
}

func TestCompareTypeOrder(t *testing.T) {
	ordered := []Value{
		Undef(), NullV(), Bool(false), Bool(true), Num(-1), Num(0), Num(2), Str(""), Str("A"), Str("a"),
		Str("é"), Arr(nil), Arr([]Value{Num(1)}), Arr([]Value{Num(1), Num(0)}), Arr([]Value{Num(2)}),
		Obj(nil), Obj([]Member{{"a", Num(1)}}), Obj([]Member{{"a", Num(2)}}), Obj([]Member{{"b", Num(0)}}),
	}
	for i := range ordered {
		for j := range ordered {
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got := Compare(ordered[i], ordered[j]); got != want {
				t.Errorf("Compare(%v, %v) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

func TestObjAndAccessors(t *testing.T) {
	o := Obj([]Member{{"a", Num(1)}, {"b", Num(2)}, {"a", Num(3)}})
	if o.Len() != 2 || o.Get("a").Num() != 3 || o.Members()[0].Key != "a" {
		t.Errorf("duplicate keys: %v", o)
	}
	if !o.Get("zz").IsUndefined() || !Num(1).Get("a").IsUndefined() {
		t.Error("Get of a missing key")
	}
	a := mustParse(t, `[10, 20]`)
	if a.Index(1).Num() != 20 || !a.Index(2).IsUndefined() || !a.Index(-1).IsUndefined() {
		t.Error("Index")
	}
	if !Num(3).IsInteger() || Num(3.5).IsInteger() || Num(math.Inf(1)).IsInteger() || Str("3").IsInteger() {
		t.Error("IsInteger")
	}
	if !NullV().IsPrimitive() || Undef().IsPrimitive() || Arr(nil).IsPrimitive() {
		t.Error("IsPrimitive")
	}
	// Undefined members and elements are left out of JSON.
	v := Obj([]Member{{"a", Undef()}, {"b", Arr([]Value{Undef(), Num(1)})}})
	if got := v.String(); got != `{"b":[1]}` {
		t.Errorf("String = %s", got)
	}
}

// Parse is the only validation of item bodies, so it must accept exactly what encoding/json
// accepts when it decodes into an interface{} (which refuses numbers past the double range),
// except nesting deeper than maxDepth.
func FuzzParseAcceptsWhatEncodingJSONAccepts(f *testing.F) {
	for _, s := range []string{`{"id":"a","n":[1,2.5e3,{"x":null}]}`, `"\ud800\u0041"`, "\"\xff\"", `[1,]`, `-01`, ` {} `,
		`[1e400]`, `{"n":-1e309}`, `1e-400`, `[` + strings.Repeat("9", 400) + `]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := Parse(b)
		var v any
		valid := json.Valid(b) && json.Unmarshal(b, &v) == nil
		if valid != (err == nil) && !(valid && depth(b) > maxDepth) {
			t.Fatalf("encoding/json says valid=%v, Parse says %v, for %q", valid, err, b)
		}
	})
}

// depth is the deepest nesting of brackets in b outside strings.
func depth(b []byte) int {
	d, deepest, inStr := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case !inStr && (c == '[' || c == '{'):
			d++
			deepest = max(deepest, d)
		case !inStr && (c == ']' || c == '}'):
			d--
		}
	}
	return deepest
}
