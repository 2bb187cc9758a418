package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Export, import into a new container, export again: the files are byte-equal, in both
// formats. Items that share an id (in different logical partitions) and values JSON can write
// in several ways (escapes, numbers) included.
func TestExportRoundTrip(t *testing.T) {
	ep := testServer(t, false)
	dir := t.TempDir()
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, `{"id":"i%03d","pk":"p%d","n":%d,"f":1.0e2,"s":"caf\u00e9 \"q\" <&>","o":{"a":[1,{"b":null}],"t":true}}`+"\n", i, i%7, i)
	}
	for _, pk := range []string{"z", "a", "m"} {
		fmt.Fprintf(&b, `{"id":"same","pk":%q}`+"\n", pk)
	}
	src := filepath.Join(dir, "src.jsonl")
	os.WriteFile(src, []byte(b.String()), 0o644)
	if _, err := load(t, ep, "c1", src); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"jsonl", "json"} {
		first := filepath.Join(dir, "first."+format)
		second := filepath.Join(dir, "second."+format)
		_, stderr, err := run(t, exportCommand(), "", "--endpoint", ep, "--db", "db", "--container", "c1", "--format", format, "-o", first)
		if err != nil || !strings.Contains(stderr, "exported 203 items") {
			t.Fatalf("export: %v %s", err, stderr)
		}
		if _, err := load(t, ep, "c2-"+format, first); err != nil {
			t.Fatal(err)
		}
		if _, _, err := run(t, exportCommand(), "", "--endpoint", ep, "--db", "db", "--container", "c2-"+format, "--format", format, "-o", second); err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(first)
		z, _ := os.ReadFile(second)
		if !bytes.Equal(a, z) {
			t.Fatalf("%s round trip differs:\n%s\n---\n%s", format, a, z)
		}
		if bytes.Contains(a, []byte(`"_rid"`)) {
			t.Fatalf("system properties exported without --system-properties")
		}
		if format == "json" {
			var items []map[string]any
			if err := json.Unmarshal(a, &items); err != nil || len(items) != 203 {
				t.Fatalf("the json export is not an array of 203 items: %v", err)
			}
		} else if lines := strings.Split(strings.TrimSuffix(string(a), "\n"), "\n"); len(lines) != 203 ||
			lines[0] != `{"id":"i000","pk":"p0","n":0,"f":100,"s":"café \"q\" <&>","o":{"a":[1,{"b":null}],"t":true}}` {
			t.Fatalf("%d lines, first %q", len(lines), lines[0])
		}
	}

	// Small pages (the query continued 29 times) give the same bytes.
	first, _ := os.ReadFile(filepath.Join(dir, "first.jsonl"))
	out, stderr, err := run(t, exportCommand(), "", "--endpoint", ep, "--db", "db", "--container", "c1", "--page-size", "7")
	if err != nil || out != string(first) {
		t.Fatalf("paged export differs (%v, %s)", err, stderr)
	}

	// To stdout, with the system properties, a query's results.
	out, _, err = run(t, exportCommand(), "", "--endpoint", ep, "--db", "db", "--container", "c1", "--system-properties",
		"--query", "SELECT * FROM c WHERE c.id = 'same'")
	if err != nil || strings.Count(out, "\n") != 3 || strings.Count(out, `"_etag"`) != 3 {
		t.Fatalf("query export %q: %v", out, err)
	}
	// An empty container exports as an empty array (the failed import created it).
	if _, err := load(t, ep, "empty", filepath.Join(dir, "none.jsonl")); err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("importing a missing file: %v", err)
	}
	out, _, err = run(t, exportCommand(), "", "--endpoint", ep, "--db", "db", "--container", "empty", "--format", "json")
	if err != nil || out != "[]\n" {
		t.Fatalf("empty export %q: %v", out, err)
	}
}
