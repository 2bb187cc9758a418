package engine

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/value"
)

// scriptScenario runs the scenario commands about server-side JavaScript (the budgets of a
// call are the open command's script-timeout, script-memory-mib and script-depth):
//
//	script container=C kind=sproc|pre|post|udf id=X [operation=OP]
//	    registers the input's JavaScript as a stored procedure, a pre- or post-trigger that
//	    fires on OP (default All), or a user-defined function
//	exec container=C id=X pk=K
//	    runs the stored procedure X over the logical partition K. The input's lines are its
//	    arguments (a JSON array; none when there are none), except lines
//	    "meanwhile read|create|upsert|delete pk=K id=I": plain operations issued once the
//	    procedure holds its logical partition, each at once and in its own goroutine. Prints
//	    "ok" and the response body, or the error (without its stack trace); then for each
//	    operation whether it finished before or after the procedure returned, and its
//	    outcome (the LSN of a write)
//	items container=C pk=K [etag]
//	    the items of the logical partition K, as a query by partition key finds them: each
//	    one's id, its properties but id and pk and the system ones, and the LSN of the command
//	    that wrote it (read from its _etag, which with etag is shown too)
//
// and, for triggers, the op command of scenario_ttl_test.go with pre=X and post=Y.
func scriptScenario(t *testing.T, e *Engine, td *datadriven.TestData) (string, bool) {
	switch td.Cmd {
	case "script":
		var id, kind, operation string
		c := scenarioContainer(t, e, td)
		td.ScanArgs(t, "id", &id)
		td.ScanArgs(t, "kind", &kind)
		td.MaybeScanArgs(t, "operation", &operation)
		s := Script{ID: id, Body: td.Input}
		switch kind {
		case "sproc":
			s.Kind = ProcedureScript
		case "udf":
			s.Kind = FunctionScript
		case "pre", "post":
			if operation == "" {
				operation = "All"
			}
			s.Kind, s.TriggerType, s.TriggerOperation = TriggerScript, kind, operation
		default:
			t.Fatalf("unknown kind of script %q", kind)
		}
		if _, err := c.CreateScript(s); err != nil {
			return scriptError(err), true
		}
		return "ok", true
	case "exec":
		return scenarioExec(t, e, td), true
	case "items":
		var pk string
		c := scenarioContainer(t, e, td)
		td.ScanArgs(t, "pk", &pk)
		return scenarioItems(t, c, pk, td.HasArg("etag")), true
	}
	return "", false
}

func scenarioContainer(t *testing.T, e *Engine, td *datadriven.TestData) *Container {
	var id string
	td.ScanArgs(t, "container", &id)
	c, err := e.Container("db", id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// scriptError is an error as the scenarios show it: a script's without its stack trace, which
// names positions in the script and in the runtime's own code.
func scriptError(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\r\nStack trace:")
	return msg
}

func scenarioExec(t *testing.T, e *Engine, td *datadriven.TestData) string {
	var id, pk string
	c := scenarioContainer(t, e, td)
	td.ScanArgs(t, "id", &id)
	td.ScanArgs(t, "pk", &pk)
	var args, meanwhile []string
	for _, line := range strings.Split(td.Input, "\n") {
		if op, ok := strings.CutPrefix(line, "meanwhile "); ok {
			meanwhile = append(meanwhile, op)
		} else {
			args = append(args, line)
		}
	}
	var argJSON []byte
	if s := strings.TrimSpace(strings.Join(args, "\n")); s != "" {
		argJSON = []byte(s)
	}
	lp, err := c.EPK(key(pk))
	if err != nil {
		t.Fatal(err)
	}

	// finished numbers the procedure's return and the operations' in the order they happen.
	var mu sync.Mutex
	finished := 0
	done := func() int {
		mu.Lock()
		defer mu.Unlock()
		finished++
		return finished
	}
	var res ProcedureResult
	var procErr error
	var procDone int
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		res, procErr = c.ExecuteProcedure(id, argJSON, ProcedureOptions{PartitionKey: key(pk)})
		procDone = done()
	}()

	outcomes := make([]string, len(meanwhile))
	order := make([]int, len(meanwhile))
	if len(meanwhile) > 0 {
		// Issued once the procedure holds its logical partition: before, a write to it would
		// simply go first.
		for !c.locks.heldByScript(lp) {
			select {
			case <-returned:
				t.Fatalf("the procedure returned before it was seen holding %s", pk)
			case <-time.After(time.Millisecond):
			}
		}
		var wg sync.WaitGroup
		for i, op := range meanwhile {
			wg.Add(1)
			go func() {
				defer wg.Done()
				outcomes[i] = plainOp(t, c, op)
				order[i] = done()
			}()
		}
		wg.Wait()
	}
	<-returned

	var b strings.Builder
	switch {
	case procErr != nil:
		b.WriteString(scriptError(procErr))
	case res.Body != nil:
		fmt.Fprintf(&b, "ok: %s", res.Body)
	default:
		b.WriteString("ok")
	}
	for i, op := range meanwhile {
		when := "before"
		if order[i] > procDone {
			when = "after"
		}
		fmt.Fprintf(&b, "\nmeanwhile %s, finished %s the procedure returned: %s", op, when, outcomes[i])
	}
	return b.String()
}

// plainOp runs one operation "read|create|upsert|delete pk=K id=I", without triggers.
func plainOp(t *testing.T, c *Container, op string) string {
	f := strings.Fields(op)
	var pk, id string
	for _, kv := range f[1:] {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "pk":
			pk = v
		case "id":
			id = v
		default:
			t.Fatalf("meanwhile %s: unknown argument %s", op, k)
		}
	}
	var r ItemResult
	var err error
	switch f[0] {
	case "read":
		if _, err = c.ReadItem(key(pk), id); err == nil {
			return "found"
		}
	case "create":
		r, err = c.CreateItem(item(id, pk, ""), ItemOptions{})
	case "upsert":
		r, err = c.UpsertItem(item(id, pk, ""), ItemOptions{})
	case "delete":
		r, err = c.DeleteItem(key(pk), id, ItemOptions{})
	default:
		t.Fatalf("meanwhile: unknown operation %q", f[0])
	}
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("ok at lsn %d", r.LSN)
}

// heldByScript reports whether a script's transaction holds the logical partition e.
func (t *lockTable) heldByScript(e epk.EPK) bool {
	s := t.shard(e)
	defer s.mu.Unlock()
	l := s.lps[e]
	return l != nil && l.script
}

func scenarioItems(t *testing.T, c *Container, pk string, etag bool) string {
	p, err := query.Prepare("SELECT * FROM c WHERE c.pk = @pk")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Query(p, epk.All, query.Options{Params: map[string]value.Value{"@pk": value.Str(pk)}, MaxItems: 1000})
	if err != nil {
		return err.Error()
	}
	if len(res.Results) == 0 {
		return "(none)"
	}
	var b strings.Builder
	for _, v := range res.Results {
		var doc map[string]any
		if err := json.Unmarshal(value.AppendJSON(nil, v), &doc); err != nil {
			t.Fatal(err)
		}
		tag, _ := doc["_etag"].(string)
		rest := map[string]any{}
		for k, x := range doc {
			if k != "id" && k != "pk" && !strings.HasPrefix(k, "_") {
				rest[k] = x
			}
		}
		props, _ := json.Marshal(rest) // sorted keys
		fmt.Fprintf(&b, "%s %s lsn %d", doc["id"], props, etagLSN(t, tag))
		if etag {
			fmt.Fprintf(&b, " (_etag %s)", tag)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// etagLSN reads the LSN back from an item's _etag (quoted, as Cosmos DB stores it), which
// partition.ETag makes of it: the LSN's top 16 bits and its low 48, in hex, in the last two
// groups.
func etagLSN(t *testing.T, tag string) uint64 {
	groups := strings.Split(strings.Trim(tag, `"`), "-")
	n, err := strconv.ParseUint(groups[len(groups)-2]+groups[len(groups)-1], 16, 64)
	if err != nil || len(groups) != 5 {
		t.Fatalf("the etag %q does not name an LSN", tag)
	}
	return n
}
