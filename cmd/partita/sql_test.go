package main

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// chargeOf reads the request charge from the statistics line printed after a statement.
func chargeOf(t *testing.T, stderr string) float64 {
	t.Helper()
	m := regexp.MustCompile(`\((\d+) items, ([0-9.]+) RU, \d+ pages, `).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no statistics line in %q", stderr)
	}
	ru, _ := strconv.ParseFloat(m[2], 64)
	return ru
}

// One-shot statements (-e): a table or JSON, with the charge, item count and time on stderr; an
// error fails the command with the server's message.
func TestSQLOneShot(t *testing.T) {
	ep := testServer(t, false)
	if _, err := load(t, ep, "c", writeItems(t, 50)); err != nil {
		t.Fatal(err)
	}
	base := []string{"--endpoint", ep, "--db", "db", "--container", "c"}

	// A table: the union of the results' properties as columns, nested values as compact JSON.
	out, errOut, err := run(t, sqlCommand(), "", append(base, "-e", "SELECT c.id, c.n, c.nested FROM c WHERE c.n < 3 ORDER BY c.n")...)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || strings.Fields(lines[0])[0] != "id" || strings.Fields(lines[0])[2] != "nested" ||
		!strings.HasPrefix(lines[3], "i00001") || !strings.Contains(lines[3], `{"x":1.5,"tags":["a","b"]}`) {
		t.Fatalf("table:\n%s", out)
	}
	if chargeOf(t, errOut) <= 0 || !strings.Contains(errOut, "(3 items,") {
		t.Fatalf("statistics: %q", errOut)
	}

	// JSON, with a parameter.
	out, _, err = run(t, sqlCommand(), "", append(base, "--format", "json", "--param", "@lo=47",
		"-e", "SELECT VALUE c.n FROM c WHERE c.n >= @lo ORDER BY c.n")...)
	if err != nil {
		t.Fatal(err)
	}
	var ns []int
	if err := json.Unmarshal([]byte(out), &ns); err != nil || len(ns) != 3 || ns[0] != 47 || ns[2] != 49 {
		t.Fatalf("json %q: %v %v", out, ns, err)
	}

	// JSON as the server wrote it, without HTML escapes.
	if out, _, err := run(t, sqlCommand(), "", append(base, "--format", "json", "-e", `SELECT VALUE "<&>"`)...); err != nil || out != "[\n  \"<&>\"\n]\n" {
		t.Fatalf("json %q, %v", out, err)
	}

	// Every page is fetched, and the charge summed over them.
	if _, errOut, err := run(t, sqlCommand(), "", append(base, "--page-size", "8", "-e", "SELECT * FROM c WHERE c.n >= 0 ORDER BY c.n")...); err != nil ||
		!strings.Contains(errOut, "(50 items,") || !strings.Contains(errOut, "RU, 7 pages,") {
		t.Fatalf("all pages: %v %q", err, errOut)
	}

	// --max-items stops after that many, even across pages.
	out, _, err = run(t, sqlCommand(), "", append(base, "--format", "json", "--max-items", "7", "-e", "SELECT * FROM c")...)
	var items []map[string]any
	if err != nil || json.Unmarshal([]byte(out), &items) != nil || len(items) != 7 {
		t.Fatalf("max-items: %d items, %v", len(items), err)
	}

	// An error: the server's message, position included, and a failed command (exit status 1).
	_, _, err = run(t, sqlCommand(), "", append(base, "-e", "SELECT * FROM c WHERE")...)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "line 1, column 22") {
		t.Fatalf("error: %v", err)
	}
	// A bad parameter is refused before anything is sent.
	if _, _, err := run(t, sqlCommand(), "", append(base, "--param", "@s=text", "-e", "SELECT 1")...); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("bad param: %v", err)
	}
}

// Statements read from stdin (not a terminal) may span lines and end with ';' or a blank
// line; commands switch format and container; the first error stops the script.
func TestSQLScriptFromStdin(t *testing.T) {
	ep := testServer(t, false)
	if _, err := load(t, ep, "c", writeItems(t, 30)); err != nil {
		t.Fatal(err)
	}
	if _, err := load(t, ep, "d", writeItems(t, 5)); err != nil {
		t.Fatal(err)
	}
	script := `SELECT VALUE COUNT(1)
  FROM c -- a comment; with a semicolon
  WHERE c.n >= 10; SELECT VALUE 'a;b';
\format json
SELECT VALUE c.n
FROM c
WHERE c.n < 2
ORDER BY c.n

\c d
SELECT VALUE COUNT(1) FROM c;
SELECT * FROM c WHERE nonsense(;
SELECT 1;
`
	out, errOut, err := run(t, sqlCommand(), script, "--endpoint", ep, "--db", "db", "--container", "c")
	if err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("the bad statement did not fail the script: %v", err)
	}
	want := "(value)\n-------\n20\n(value)\n-------\na;b\n[\n  0,\n  1\n]\n[\n  5\n]\n"
	if out != want {
		t.Fatalf("output\n%q\nwant\n%q", out, want)
	}
	if n := strings.Count(errOut, " RU, "); n != 4 {
		t.Fatalf("%d statistics lines (want 4, none for the failed statement or after it): %q", n, errOut)
	}
}

func TestStatementSplitting(t *testing.T) {
	var s statements
	var got []string
	for _, l := range []string{`SELECT "x;" FROM c`, `WHERE c.a = 'it''s;' ;SELECT 2;`, `\q`, `SELECT`, ``, `3`} {
		got = append(got, s.line(l)...)
	}
	got = append(got, s.flush()...)
	want := []string{"SELECT \"x;\" FROM c\nWHERE c.a = 'it''s;'", "SELECT 2", `\q`, "SELECT", "3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
