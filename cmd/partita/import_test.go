package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/client"
)

// Bad lines are reported with their line numbers and reasons; the good ones are imported.
func TestImportReportsBadLines(t *testing.T) {
	ep := testServer(t, false)
	input := strings.Join([]string{
		`{"id":"a","pk":"p1"}`,
		`not json`,
		`{"id":"b","pk":"p2"}`,
		`{"pk":"p3"}`,
		``,
		`{"id":5,"pk":"p4"}`,
		`{"id":"x/y","pk":"p5"}`,
		`[1,2]`,
		`{"id":"c","pk":{"nested":true}}`,
		`{"id":"d","pk":"p6"}`,
	}, "\n")
	file := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(file, []byte(input), 0o644)
	stderr, err := load(t, ep, "c", file)
	if err == nil || err.Error() != "5 items failed" {
		t.Fatalf("err %v\n%s", err, stderr)
	}
	for _, want := range []string{
		"imported 4 items, 5 failed",
		"invalid JSON: 1\n    line 2: The request body is not valid JSON",
		"bad id: 3\n    line 4: The item has no 'id' property",
		"line 6: The id of an item must be a string",
		"line 7: The id \"x/y\" contains the character '/'",
		"invalid item: 1\n    line 8: The item must be a JSON object",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stderr)
		}
	}
	// An object as partition key value files the item under the undefined key, as the
	// service does: it is imported.
	if n := count(t, ep, "c"); n != 4 {
		t.Fatalf("%d items imported, want 4", n)
	}
}

// A JSON array (pretty-printed, with brackets and quotes inside strings) imports like lines;
// a bad element is reported with the line it starts on.
func TestImportJSONArray(t *testing.T) {
	ep := testServer(t, false)
	input := `  [
  {"id": "a", "pk": "p1", "s": "a ] \" , [ {"},
  {
    "id": "b",
    "pk": "p2",
    "arr": [[1], {"x": "}"}]
  },
  {"pk": "no id"},
  {"id": "c", "pk": 3}
]
`
	file := filepath.Join(t.TempDir(), "items.json")
	os.WriteFile(file, []byte(input), 0o644)
	stderr, err := load(t, ep, "c", file)
	if err == nil || !strings.Contains(stderr, "imported 3 items, 1 failed") || !strings.Contains(stderr, "line 8: The item has no 'id'") {
		t.Fatalf("err %v\n%s", err, stderr)
	}
	out, _, err := run(t, sqlCommand(), "", "--endpoint", ep, "--db", "db", "--container", "c", "--format", "json",
		"-e", "SELECT VALUE [c.id, c.s, c.arr] FROM c WHERE c.id IN ('a', 'b') ORDER BY c.id")
	if err != nil || strings.Join(strings.Fields(out), "") != `[["a","a]\",[{"],["b",[[1],{"x":"}"}]]]` {
		t.Fatalf("stored %s, %v", out, err)
	}
	// An array that is not closed is reported; what came before it is imported.
	os.WriteFile(file, []byte(`[{"id":"z","pk":"z"}, {"id":"y"`), 0o644)
	if _, err := load(t, ep, "c2", file); err == nil || !strings.Contains(err.Error(), "line 1: the input ends inside an item") {
		t.Fatalf("unclosed array: %v", err)
	}
	if n := count(t, ep, "c2"); n != 1 {
		t.Fatalf("%d items before the break imported, want 1", n)
	}
}

// summaryRe reads the summary's first line.
var summaryRe = regexp.MustCompile(`imported ([0-9,]+) items(?:, ([0-9,]+) already there)?, ([0-9,]+) failed, ([0-9,]+) throttled retries, [0-9.]+ RU \(this run: ([0-9,]+) written`)

type importSummary struct{ imported, present, failed, throttled, thisRun int }

func parseSummary(t *testing.T, stderr string) importSummary {
	t.Helper()
	m := summaryRe.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no summary in %q", stderr)
	}
	n := func(s string) int { v, _ := strconv.Atoi(strings.ReplaceAll(s, ",", "")); return v }
	return importSummary{n(m[1]), n(m[2]), n(m[3]), n(m[4]), n(m[5])}
}

// An import interrupted partway (its context cancelled after a few bulk requests, as Ctrl-C
// does) leaves a checkpoint; running it again sends only what the checkpoint does not cover
// and ends with every item there exactly once. It runs in create mode, where an item the
// first run wrote after the checkpoint's prefix comes back 409 and is accepted as done only
// because its stored body is the line's.
func TestImportResumesAfterInterruption(t *testing.T) {
	ep := testServer(t, false)
	const n = 3000
	file := writeItems(t, n)
	c := testClient(t, ep)
	o := importOptions{db: "db", container: "c", source: file, mode: "create", workers: 3, giveUpAfter: time.Minute,
		progressEvery: time.Hour, createContainer: true, partitionKey: []string{"/pk"}}

	ctx, cancel := context.WithCancel(context.Background())
	var batches atomic.Int32
	first := o
	first.afterBatch = func() {
		if batches.Add(1) == 6 {
			cancel()
		}
	}
	var errOut bytes.Buffer
	err := runImport(ctx, c, first, nil, &errOut, false)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("first run: %v\n%s", err, errOut.String())
	}
	cp, err := readCheckpoint(file + ".partita-import")
	if err != nil || cp == nil {
		t.Fatalf("no checkpoint after the interruption: %v", err)
	}
	stored := count(t, ep, "c")
	if cp.Items == 0 || cp.Items >= n || int64(stored) < cp.Items || stored >= n {
		t.Fatalf("checkpoint at %d items, %d stored, of %d", cp.Items, stored, n)
	}
	// The checkpoint's offset is the end of its last item's line.
	data, _ := os.ReadFile(file)
	if data[cp.Offset-1] != '\n' || bytes.Count(data[:cp.Offset], []byte("\n")) != int(cp.Items) || cp.Line != int(cp.Items)+1 {
		t.Fatalf("checkpoint offset %d, line %d, items %d", cp.Offset, cp.Line, cp.Items)
	}

	errOut.Reset()
	if err := runImport(context.Background(), c, o, nil, &errOut, false); err != nil {
		t.Fatalf("second run: %v\n%s", err, errOut.String())
	}
	s := parseSummary(t, errOut.String())
	if !strings.Contains(errOut.String(), fmt.Sprintf("resuming from %s: %s items done", file+".partita-import", humanCount(cp.Items))) {
		t.Errorf("no resume notice: %s", errOut.String())
	}
	if s.imported+s.present != n || s.failed != 0 || s.thisRun != n-int(cp.Items) {
		t.Fatalf("summary %+v after a checkpoint at %d\n%s", s, cp.Items, errOut.String())
	}
	t.Logf("interrupted at %d items (%d stored); resumed: %+v", cp.Items, stored, s)
	if got := count(t, ep, "c"); got != n {
		t.Fatalf("%d items stored, want %d", got, n)
	}
	if _, err := os.Stat(file + ".partita-import"); !os.IsNotExist(err) {
		t.Fatalf("the checkpoint of a finished import is still there: %v", err)
	}
}

// In create mode, an item already stored with the same body counts as done, one with a
// different body is a conflict, reported with its line.
func TestImportCreateModeReplays(t *testing.T) {
	ep := testServer(t, false)
	file := writeItems(t, 100)
	if _, err := load(t, ep, "c", file, "--mode", "create"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	changed := bytes.Replace(data, []byte(`{"id":"i00042","pk":"p2","n":42`), []byte(`{"id":"i00042","pk":"p2","n":-1`), 1)
	os.WriteFile(file, changed, 0o644)
	stderr, err := load(t, ep, "c", file, "--mode", "create")
	s := parseSummary(t, stderr)
	if err == nil || s.imported != 0 || s.present != 99 || s.failed != 1 ||
		!strings.Contains(stderr, `409 Conflict: 1`+"\n"+`    line 43: an item with id "i00042"`) {
		t.Fatalf("err %v, summary %+v\n%s", err, s, stderr)
	}
}

// Against a 400 RU/s container with the rate limit on, most bulk operations are throttled at
// first; the import waits as told and still writes every item.
func TestImportThrottled(t *testing.T) {
	ep := testServer(t, true)
	const n = 400
	stderr, err := load(t, ep, "c", writeItems(t, n), "--throughput", "400", "--workers", "4")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	s := parseSummary(t, stderr)
	t.Logf("%s", stderr)
	if s.imported != n || s.failed != 0 || s.throttled < n/4 {
		t.Fatalf("summary %+v: want %d imported and most of them throttled at least once\n%s", s, n, stderr)
	}
	if got := count(t, ep, "c"); got != n {
		t.Fatalf("%d items stored, want %d", got, n)
	}
	// A bulk request over the second's budget: the throttled operations say how long to wait.
	c := testClient(t, ep)
	ct, err := c.ReadContainer(context.Background(), "db", "c")
	if err != nil {
		t.Fatal(err)
	}
	ops := make([]client.BulkOp, client.MaxBulkOperations)
	for i := range ops {
		body := fmt.Sprintf(`{"id":"x%d","pk":"p1","pad":%q}`, i, strings.Repeat("x", 500))
		_, key, _, _ := ct.ItemKey([]byte(body))
		ops[i] = client.BulkOp{OperationType: "Upsert", PartitionKey: key, ResourceBody: []byte(body)}
	}
	results, _, err := c.Bulk(context.Background(), ct.Link, "", ops)
	if err != nil {
		t.Fatal(err)
	}
	throttled := 0
	for _, r := range results {
		if r.StatusCode == 429 {
			throttled++
			if r.RetryAfter() <= 0 || r.SubStatusCode != 3200 {
				t.Fatalf("a throttled operation without its wait: %+v", r)
			}
		}
	}
	if throttled == 0 {
		t.Fatal("no operation of a bulk request over the budget was throttled")
	}
}

// An import killed outright (SIGKILL: no chance to save anything on the way out) resumes
// from the last checkpoint it wrote while running, and ends with every item there once.
func TestImportResumesAfterKill(t *testing.T) {
	ep := testServer(t, false)
	const n = 30000
	file := writeItems(t, n)
	ckpt := file + ".partita-import"
	args, _ := json.Marshal([]string{"import", "--endpoint", ep, "--db", "db", "--container", "c", "--create-container",
		"--partition-key", "/pk", "--workers", "1", "--checkpoint-interval", "20ms", file})
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "PARTITA_TEST_ARGS="+string(args))
	var childErr bytes.Buffer
	child.Stderr = &childErr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	var cp *checkpoint
	for cp == nil || cp.Items < 3000 {
		select {
		case err := <-exited:
			t.Fatalf("the import ended (%v) before it could be killed:\n%s", err, childErr.String())
		case <-time.After(5 * time.Millisecond):
		}
		cp, _ = readCheckpoint(ckpt)
	}
	child.Process.Kill()
	<-exited
	cp, err := readCheckpoint(ckpt)
	if err != nil || cp == nil || cp.Items >= n {
		t.Fatalf("checkpoint after the kill: %+v, %v", cp, err)
	}
	_, stderr, err := run(t, importCommand(), "", "--endpoint", ep, "--db", "db", "--container", "c", file)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	s := parseSummary(t, stderr)
	t.Logf("killed with the checkpoint at %d items; resumed: %+v", cp.Items, s)
	if s.imported != n || s.failed != 0 || s.thisRun != n-int(cp.Items) {
		t.Fatalf("summary %+v after a checkpoint at %d\n%s", s, cp.Items, stderr)
	}
	if got := count(t, ep, "c"); got != n {
		t.Fatalf("%d items stored, want %d", got, n)
	}
}

// The importer routes each item to the partition key range the server keeps it in: over a
// container of several physical partitions, every item a range's own query returns hashes
// (client.Container.ItemKey) into that range.
func TestImportRoutesItemsToTheirRanges(t *testing.T) {
	ep := testServer(t, false)
	if _, err := load(t, ep, "c", writeItems(t, 300), "--throughput", "40000"); err != nil {
		t.Fatal(err)
	}
	c := testClient(t, ep)
	ctx := context.Background()
	ct, err := c.ReadContainer(ctx, "db", "c")
	if err != nil {
		t.Fatal(err)
	}
	ranges, err := c.Ranges(ctx, ct)
	if err != nil || len(ranges) < 3 {
		t.Fatalf("%d ranges, %v", len(ranges), err)
	}
	seen := 0
	for _, r := range ranges {
		h := http.Header{}
		h.Set("Content-Type", "application/query+json")
		h.Set("x-ms-documentdb-isquery", "true")
		h.Set("x-ms-documentdb-partitionkeyrangeid", r.ID)
		resp, err := c.Do(ctx, client.Request{Method: http.MethodPost, Type: "docs", Link: ct.Link, Feed: true, Header: h,
			Body: []byte(`{"query":"SELECT * FROM c"}`)})
		if err != nil {
			t.Fatal(err)
		}
		var list struct{ Documents []json.RawMessage }
		json.Unmarshal(resp.Body, &list)
		for _, d := range list.Documents {
			_, _, e, err := ct.ItemKey(d)
			if got := client.RangeOf(ranges, e); err != nil || got == nil || got.ID != r.ID {
				t.Fatalf("%s is kept in range %s; the importer would send it to %+v (%v)", d, r.ID, got, err)
			}
			seen++
		}
	}
	if seen != 300 {
		t.Fatalf("the ranges hold %d items, want 300", seen)
	}
}

// Every kind of partition key value, in a hierarchical key, is sent with the key the server
// computes from the body (a mismatch would be refused).
func TestImportKeyKinds(t *testing.T) {
	ep := testServer(t, false)
	input := strings.Join([]string{
		`{"id":"1","a":"x","b":"é\u0000\"q"}`,
		`{"id":"2","a":1.5,"b":-7}`,
		`{"id":"3","a":true,"b":false}`,
		`{"id":"4","a":null,"b":1e300}`,
		`{"id":"5","a":"only a"}`,
		`{"id":"6"}`,
		`{"id":"7","a":{"o":1},"b":[1]}`,
	}, "\n")
	file := filepath.Join(t.TempDir(), "kinds.jsonl")
	os.WriteFile(file, []byte(input), 0o644)
	_, stderr, err := run(t, importCommand(), "", "--endpoint", ep, "--db", "db", "--container", "c", "--create-container",
		"--partition-key", "/a", "--partition-key", "/b", file)
	if err != nil || !strings.Contains(stderr, "imported 7 items, 0 failed") {
		t.Fatalf("%v\n%s", err, stderr)
	}
}

// A bulk request answered 410/1002 (the range split, as far as the client can tell) makes the
// importer read the ranges again and send the same items again: the import completes with
// every item once. A server that answers 410 for ever fails the items instead of looping.
func TestImportRecoversFromGoneRanges(t *testing.T) {
	ep := testServer(t, false)
	if _, err := load(t, ep, "c", writeItems(t, 10)); err != nil {
		t.Fatal(err)
	}
	chaos := func(args ...string) {
		t.Helper()
		if out, errOut, err := run(t, chaosCommand(), "", append(args, "--endpoint", ep)...); err != nil {
			t.Fatalf("chaos %v: %v\n%s%s", args, err, out, errOut)
		}
	}
	chaos("add", "--db", "db", "--container", "c", "--op", "batch", "--status", "410", "--substatus", "1002", "--count", "3")
	const n = 1000
	args := []string{"--endpoint", ep, "--db", "db", "--container", "c", "--workers", "2", writeItems(t, n)}
	_, stderr, err := run(t, importCommand(), "", args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if s := parseSummary(t, stderr); s.imported != n || s.failed != 0 {
		t.Fatalf("summary %+v\n%s", s, stderr)
	}
	if got := count(t, ep, "c"); got != n {
		t.Fatalf("%d items stored, want %d", got, n)
	}
	out, _, err := run(t, chaosCommand(), "", "list", "--endpoint", ep)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); err != nil || len(lines) != 2 ||
		len(strings.Fields(lines[1])) < 7 || strings.Fields(lines[1])[6] != "3" {
		t.Fatalf("the rule did not answer 3 bulk requests: %s (%v)", out, err)
	}

	// For ever: every item fails, naming the 410, and the import ends.
	chaos("rm", "--all")
	chaos("add", "--db", "db", "--container", "c", "--op", "batch", "--status", "410", "--substatus", "1002")
	_, stderr, err = run(t, importCommand(), "", "--endpoint", ep, "--db", "db", "--container", "c", writeItems(t, 5))
	if err == nil {
		t.Fatalf("an import that the server refuses for ever succeeded\n%s", stderr)
	}
	if s := parseSummary(t, stderr); s.failed != 5 || !strings.Contains(stderr, "410") {
		t.Fatalf("summary %+v\n%s", s, stderr)
	}
}
