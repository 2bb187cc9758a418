package value

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestAppendOrderedFollowsCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vals := []Value{NullV(), Bool(false), Bool(true), Num(0), Num(-0.5), Num(1e300), Num(-1e300), Str(""), Str("a"), Str("a\x00"), Str("ab"), Str("b")}
	for range 300 {
		switch r.IntN(2) {
		case 0:
			vals = append(vals, Num(r.NormFloat64()*1000))
		default:
			b := make([]byte, r.IntN(4))
			for i := range b {
				b[i] = []byte{0, 1, 'a', 0xFF}[r.IntN(4)]
			}
			vals = append(vals, Str(string(b)))
		}
	}
	sort.Slice(vals, func(i, j int) bool { return Compare(vals[i], vals[j]) < 0 })
	for i := 1; i < len(vals); i++ {
		a, _ := AppendOrdered(nil, vals[i-1])
		b, _ := AppendOrdered(nil, vals[i])
		if c := bytes.Compare(a, b); c > 0 || c == 0 && Compare(vals[i-1], vals[i]) != 0 {
			t.Fatalf("%s (%x) and %s (%x) encode out of order", vals[i-1], a, vals[i], b)
		}
		if a[0] < OrderedTypeStart(vals[i-1].Kind()) || a[0] >= OrderedTypeEnd(vals[i-1].Kind()) {
			t.Fatalf("%s encodes outside its type's bytes", vals[i-1])
		}
	}
}

func TestTerms(t *testing.T) {
	v, _ := Parse([]byte(`{"a":{"b":1,"c/d":[true,{"e":null}]},"s":"x","o":{},"l":[]}`))
	var got []string
	Terms(v, func(path string, leaf Value) { got = append(got, path+"="+leaf.String()) })
	want := []string{`/a={"b":1,"c/d":[true,{"e":null}]}`, "/a/b=1", `/a/c~1d=[true,{"e":null}]`, "/a/c~1d/[]=true",
		`/a/c~1d/[]={"e":null}`, "/a/c~1d/[]/e=null", `/s="x"`, "/o={}", "/l=[]"}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v, want %v", got, want)
		}
	}
}

func TestAppendIndexedCutsLongStrings(t *testing.T) {
	long := strings.Repeat("x", MaxIndexedString) + "tail"
	cut, _ := AppendIndexed(nil, Str(long))
	prefix, _ := AppendOrdered(nil, Str(long[:MaxIndexedString]))
	if string(cut) != string(prefix) {
		t.Fatalf("a long string is indexed as %x, want its prefix %x", cut, prefix)
	}
	short, _ := AppendIndexed(nil, Str("abc"))
	whole, _ := AppendOrdered(nil, Str("abc"))
	if string(short) != string(whole) {
		t.Fatalf("a short string is indexed as %x, want %x", short, whole)
	}
}

// SplitTermPath reads back what TermPath writes, and refuses what it never writes.
func TestSplitTermPath(t *testing.T) {
	for _, segs := range [][]string{{"a"}, {"a", "b"}, {"x/y", "~0", "[]", "a~1[b", "", "~"}} {
		path := TermPath(segs)
		got, ok := SplitTermPath(path)
		if !ok || !slices.Equal(got, segs) {
			t.Errorf("%q from %q: %q %v", path, segs, got, ok)
		}
	}
	for _, path := range []string{"", "a", "/tags/[]", "/[]/b"} {
		if segs, ok := SplitTermPath(path); ok {
			t.Errorf("%q: %q", path, segs)
		}
	}
}
