package cql

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks Parse and ParseScript on arbitrary text: they never panic or hang, every
// failure is a BadRequest with a position (checkError), and every accepted statement prints to
// text that parses back to the same printed form (roundTrips). The seeds are the inputs of the
// datadriven files.
func FuzzParse(f *testing.F) {
	for _, s := range seedInputs(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		st, err := Parse(src)
		if err != nil {
			if e := checkError(err); e != nil {
				t.Fatalf("%q: %v", src, e)
			}
		} else if e := roundTrips(st); e != nil {
			t.Fatalf("%q: %v", src, e)
		}
		sts, err := ParseScript(src)
		if err != nil {
			if e := checkError(err); e != nil {
				t.Fatalf("script %q: %v", src, e)
			}
			return
		}
		for _, st := range sts {
			if e := roundTrips(st); e != nil {
				t.Fatalf("script %q: %v", src, e)
			}
		}
	})
}

// seedInputs are the inputs of the parse and script commands under testdata.
func seedInputs(tb testing.TB) []string {
	paths, err := filepath.Glob("testdata/*")
	if err != nil {
		tb.Fatal(err)
	}
	var seeds []string
	for _, path := range paths {
		if fi, err := os.Stat(path); err != nil || fi.IsDir() {
			continue
		}
		text, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		for _, block := range strings.Split(string(text), "\n\n") {
			lines := strings.Split(strings.TrimSpace(block), "\n")
			var in []string
			cmd := false
			for _, l := range lines {
				switch {
				case strings.HasPrefix(l, "#"):
				case l == "parse" || l == "script" || l == "tokens":
					cmd = true
				case l == "----":
					if cmd {
						seeds = append(seeds, strings.Join(in, "\n"))
					}
					cmd, in = false, nil
				case cmd:
					in = append(in, l)
				}
			}
		}
	}
	if len(seeds) < 50 {
		tb.Fatalf("only %d seeds found under testdata", len(seeds))
	}
	return seeds
}

// TestNestingIsBounded checks that deep nesting fails with a clear error instead of exhausting
// the stack, in terms, types and selectors.
func TestNestingIsBounded(t *testing.T) {
	deep := 10000
	cases := []string{
		"INSERT INTO t (a) VALUES (" + strings.Repeat("[", deep) + strings.Repeat("]", deep) + ")",
		"INSERT INTO t (a) VALUES (" + strings.Repeat("(", deep) + "1" + strings.Repeat(")", deep) + ")",
		"INSERT INTO t (a) VALUES (" + strings.Repeat("f(", deep) + strings.Repeat(")", deep) + ")",
		"CREATE TABLE t (a " + strings.Repeat("frozen<", deep) + "int" + strings.Repeat(">", deep) + " PRIMARY KEY)",
		"SELECT " + strings.Repeat("f(", deep) + "a" + strings.Repeat(")", deep) + " FROM t",
		"SELECT * FROM t WHERE a = " + strings.Repeat("{", deep),
	}
	for _, src := range cases {
		_, err := Parse(src)
		if err == nil || !strings.Contains(err.Error(), "nests more than 64 levels") {
			t.Errorf("%.40s...: %v", src, err)
		}
		if e := checkError(err); e != nil {
			t.Error(e)
		}
	}
	// 64 levels are fine.
	ok := "INSERT INTO t (a) VALUES (" + strings.Repeat("[", 60) + strings.Repeat("]", 60) + ")"
	if _, err := Parse(ok); err != nil {
		t.Errorf("60 levels: %v", err)
	}
}
