package cql

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/fault"
)

// TestParse runs the files under testdata. Commands:
//
//	parse
//	    parses the input as one statement and prints its canonical form and its bind markers
//	    (index, name, line:column), or the error; a parsed statement must print to text that
//	    parses to the same canonical form
//	script
//	    parses the input as a script and prints each statement's canonical form on its own line
//	tokens
//	    prints the lexer's tokens, one per line, as kind(value)@line:column
//
// testdata/fuzz holds the fuzzer's corpus, not scenario files.
func TestParse(t *testing.T) {
	paths, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		if filepath.Base(path) == "fuzz" {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) { runFile(t, path) })
	}
}

func runFile(t *testing.T, path string) {
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "parse":
			st, err := Parse(d.Input)
			if err != nil {
				return describeError(t, err)
			}
			return printed(t, st)
		case "script":
			sts, err := ParseScript(d.Input)
			if err != nil {
				return describeError(t, err)
			}
			var b strings.Builder
			for _, st := range sts {
				b.WriteString(printed(t, st))
			}
			return b.String()
		case "tokens":
			var b strings.Builder
			for _, tk := range lex(d.Input) {
				pos := fault.PosAt(d.Input, tk.off)
				fmt.Fprintf(&b, "%s(%s)@%d:%d\n", kindNames[tk.kind], tk.val, pos.Line, pos.Column)
			}
			return b.String()
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

var kindNames = map[tokKind]string{
	tkEOF: "eof", tkWord: "word", tkQuoted: "quoted", tkString: "string", tkInteger: "int",
	tkFloat: "float", tkHex: "hex", tkUUID: "uuid", tkDuration: "duration", tkBool: "bool",
	tkQuestion: "bind", tkPunct: "punct", tkError: "error",
}

// printed is a statement's canonical form and markers, after checking that the form round-trips.
func printed(t *testing.T, st Statement) string {
	t.Helper()
	s := st.String()
	if err := roundTrips(st); err != nil {
		t.Error(err)
	}
	var b strings.Builder
	b.WriteString(s + "\n")
	for _, m := range st.Markers() {
		fmt.Fprintf(&b, "  marker %d %q at %d:%d\n", m.Index, m.Name, m.Pos.Line, m.Pos.Column)
	}
	return b.String()
}

// roundTrips checks that st's canonical form parses to a statement with the same form and the
// same number of bind markers.
func roundTrips(st Statement) error {
	s := st.String()
	again, err := Parse(s)
	if err != nil {
		return fmt.Errorf("canonical form %q does not parse: %v", s, err)
	}
	if again.String() != s {
		return fmt.Errorf("canonical form does not round-trip:\n  %s\n  %s", s, again.String())
	}
	if len(again.Markers()) != len(st.Markers()) {
		return fmt.Errorf("%q: %d markers, then %d", s, len(st.Markers()), len(again.Markers()))
	}
	return nil
}

var errorMessage = regexp.MustCompile(`^(Syntax error|Invalid statement) at line (\d+), column (\d+): `)

// checkError checks the error contract: a *fault.Error of kind BadRequest whose Pos is set and
// agrees with its message, and which is a syntax error or an invalid statement as its message
// says.
func checkError(err error) error {
	var fe *fault.Error
	if !errors.As(err, &fe) || !errors.Is(err, fault.BadRequest) {
		return fmt.Errorf("not a fault BadRequest: %#v", err)
	}
	m := errorMessage.FindStringSubmatch(fe.Message)
	if m == nil || fe.Pos.Line < 1 || fe.Pos.Column < 1 ||
		m[2] != fmt.Sprint(fe.Pos.Line) || m[3] != fmt.Sprint(fe.Pos.Column) {
		return fmt.Errorf("position missing or disagreeing with the message: %+v", fe)
	}
	if syntax := m[1] == "Syntax error"; IsSyntax(err) != syntax || IsInvalid(err) == syntax {
		return fmt.Errorf("IsSyntax %v and IsInvalid %v for %q", IsSyntax(err), IsInvalid(err), fe.Message)
	}
	return nil
}

func describeError(t *testing.T, err error) string {
	t.Helper()
	if e := checkError(err); e != nil {
		t.Error(e)
	}
	return "error: " + fault.From(err).Message + "\n"
}
