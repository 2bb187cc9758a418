package script

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// memColl is a Collection over a map, for tests of the runtime alone.
type memColl struct{ docs map[string][]byte }

func newMem() *memColl { return &memColl{docs: map[string][]byte{}} }

func (m *memColl) SelfLink() string { return "dbs/AAAA/colls/AAAAAAAA/" }
func (m *memColl) AltLink() string  { return "dbs/d/colls/c" }
func (m *memColl) Quota() (max, usage string) {
	return "documentSize=2048;", fmt.Sprintf("documentsCount=%d;", len(m.docs))
}
func (m *memColl) put(doc []byte, must int) ([]byte, error) {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fault.New(fault.BadRequest, "bad json")
	}
	id, _ := d["id"].(string)
	if d["pk"] != nil && d["pk"] != "a" {
		return nil, ErrOtherPartition
	}
	_, exists := m.docs[id]
	if must > 0 && exists {
		return nil, fault.New(fault.Conflict, "Resource with specified id or name already exists.")
	}
	if must < 0 && !exists {
		return nil, fault.New(fault.NotFound, "Resource Not Found")
	}
	m.docs[id] = doc
	return doc, nil
}
func (m *memColl) Create(doc []byte, o WriteOptions) ([]byte, error) { return m.put(doc, 1) }
func (m *memColl) Upsert(doc []byte, o WriteOptions) ([]byte, error) { return m.put(doc, 0) }
func (m *memColl) Replace(ref DocRef, doc []byte, o WriteOptions) ([]byte, error) {
	return m.put(doc, -1)
}
func (m *memColl) Read(ref DocRef, o WriteOptions) ([]byte, error) {
	if d, ok := m.docs[ref.ID]; ok {
		return d, nil
	}
	return nil, fault.New(fault.NotFound, "Resource Not Found")
}
func (m *memColl) Delete(ref DocRef, o WriteOptions) error {
	if _, ok := m.docs[ref.ID]; !ok {
		return fault.New(fault.NotFound, "Resource Not Found")
	}
	delete(m.docs, ref.ID)
	return nil
}
func (m *memColl) Query(q Query, o FeedOptions) (Page, error) { return m.ReadAll(o) }
func (m *memColl) ReadAll(o FeedOptions) (Page, error) {
	ids := make([]string, 0, len(m.docs))
	for id := range m.docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var p Page
	for _, id := range ids {
		p.Docs = append(p.Docs, m.docs[id])
	}
	return p, nil
}

const bulkImport = `function bulkImport(docs) {
	var collection = getContext().getCollection();
	var count = 0;
	if (docs.length == 0) { getContext().getResponse().setBody(0); return; }
	tryCreate(docs[count], callback);
	function tryCreate(doc, callback) {
		var isAccepted = collection.createDocument(collection.getSelfLink(), doc, callback);
		if (!isAccepted) getContext().getResponse().setBody(count);
	}
	function callback(err, doc, options) {
		if (err) throw err;
		count++;
		if (count >= docs.length) getContext().getResponse().setBody(count);
		else tryCreate(docs[count], callback);
	}
}`

func TestProcedureBulkImportThroughCallbacks(t *testing.T) {
	r := NewRunner(Limits{MaxOperations: 5000})
	docs := make([]map[string]any, 3000) // deeper than the call depth if callbacks recursed
	for i := range docs {
		docs[i] = map[string]any{"id": fmt.Sprint(i), "pk": "a"}
	}
	args, _ := json.Marshal([]any{docs})
	m := newMem()
	out, err := r.Procedure(bulkImport, args, m, ProcedureCall{})
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Body) != "3000" || len(m.docs) != 3000 {
		t.Fatalf("body %s, %d docs", out.Body, len(m.docs))
	}
	// With a smaller quota the procedure reports how far it got.
	r = NewRunner(Limits{MaxOperations: 100})
	m = newMem()
	out, err = r.Procedure(bulkImport, args, m, ProcedureCall{})
	if err != nil || string(out.Body) != "100" || len(m.docs) != 100 {
		t.Fatalf("body %s, %d docs, %v", out.Body, len(m.docs), err)
	}
}

func TestProcedureFailures(t *testing.T) {
	// A generous time budget, so that a loaded machine cannot turn the memory case into a
	// timeout; the infinite loop gets its own short one.
	r := NewRunner(Limits{Timeout: time.Minute, MaxMemory: 64 << 20})
	quick := NewRunner(Limits{Timeout: 300 * time.Millisecond})
	for _, tc := range []struct {
		name, body string
		kind       fault.Kind
		msg        string
	}{
		{"throw", `function () { throw new Error("boom") }`, fault.BadRequest, "Exception = Error: boom"},
		{"infinite loop", `function () { while (true) {} }`, fault.Timeout, "time limit"},
		{"recursion", `function f() { return f() + 1 }`, fault.BadRequest, "Maximum call stack size exceeded"},
		{"repeat", `function () { return "x".repeat(1 << 30) }`, fault.BadRequest, "Invalid string length"},
		{"big array", `function () { new Array(1e9).fill(0) }`, fault.BadRequest, "Invalid array length"},
		{"typed", `function () { new Float64Array(1 << 28) }`, fault.BadRequest, "Invalid array length"},
		// Typed arrays allocate 8 MiB in one quick step: filling ordinary arrays takes the
		// runtime long enough, on a slow machine, that the time budget ran out first.
		{"alloc loop", `function () { var a = []; while (true) a.push(new Float64Array(1 << 20)) }`, fault.BadRequest, "memory limit"},
		{"conflict thrown on", `function () { var c = getContext().getCollection();
			c.createDocument(c.getSelfLink(), {id: "x"}, function (err) { if (err) throw err;
			c.createDocument(c.getSelfLink(), {id: "x"}, function (err) { if (err) throw err; }); }); }`, fault.Conflict, "already exists"},
		{"no callback", `function () { var c = getContext().getCollection(); c.readDocument("dbs/d/colls/c/docs/nope"); }`, fault.NotFound, ""},
		{"other partition", `function () { var c = getContext().getCollection();
			try { c.createDocument(c.getSelfLink(), {id: "y", pk: "b"}, function () {}); } catch (e) {} }`, fault.BadRequest, "cannot reference partition keys"},
		{"abort", `function () { getContext().abort(new Error("stop")) }`, fault.BadRequest, "Error: stop"},
		{"syntax", `function ( {`, fault.BadRequest, "compiling"},
		{"not a function", `42`, fault.BadRequest, "not a function"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := r
			if tc.kind == fault.Timeout {
				run = quick
			}
			_, err := run.Procedure(tc.body, nil, newMem(), ProcedureCall{})
			var f *fault.Error
			if !errors.As(err, &f) || f.Kind != tc.kind || !strings.Contains(f.Message, tc.msg) {
				t.Fatalf("got %v, want %v containing %q", err, tc.kind, tc.msg)
			}
		})
	}
	// The runner still works after all that.
	out, err := r.Procedure(`function (a, b) { getContext().getResponse().setBody({sum: a + b}); console.log("hi", a) }`, []byte(`[1, 2]`), newMem(), ProcedureCall{Log: true})
	if err != nil || string(out.Body) != `{"sum":3}` || out.Log != "hi 1" {
		t.Fatalf("%s %q %v", out.Body, out.Log, err)
	}
}

func TestTriggerSetsRequestBody(t *testing.T) {
	r := NewRunner(Limits{})
	out, err := r.Trigger(`function () { var req = getContext().getRequest(); var d = req.getBody(); d.ts = 5; d.op = req.getOperationType(); req.setBody(d); }`,
		TriggerCall{Operation: "Create", Request: []byte(`{"id":"a"}`)}, newMem())
	if err != nil || string(out.Request) != `{"id":"a","ts":5,"op":"Create"}` {
		t.Fatalf("%s %v", out.Request, err)
	}
}

// Scripts read the client's request headers with getRequest().getValue(name), whatever the
// case of the name; setValue changes what later getValue calls of the same call read.
func TestScriptsReadRequestHeaders(t *testing.T) {
	r := NewRunner(Limits{})
	headers := map[string]string{"x-ms-documentdb-partitionkey": `["a"]`, "x-app": "v1"}
	out, err := r.Trigger(`function () {
		var req = getContext().getRequest(), d = req.getBody();
		d.pk = req.getValue("x-ms-documentdb-partitionkey");
		d.app = req.getValue("X-App");
		req.setValue("x-app", "v2");
		d.after = req.getValue("x-app");
		d.none = req.getValue("x-absent") === undefined;
		req.setBody(d);
	}`, TriggerCall{Operation: "Create", Request: []byte(`{"id":"a"}`), Headers: headers}, newMem())
	if err != nil || string(out.Request) != `{"id":"a","pk":"[\"a\"]","app":"v1","after":"v2","none":true}` {
		t.Fatalf("%s %v", out.Request, err)
	}
	if headers["x-app"] != "v1" {
		t.Fatal("setValue changed the caller's map")
	}
	out, err = r.Procedure(`function () { getContext().getResponse().setBody(getContext().getRequest().getValue("x-app")); }`,
		nil, newMem(), ProcedureCall{Headers: headers})
	if err != nil || string(out.Body) != `"v1"` {
		t.Fatalf("%s %v", out.Body, err)
	}
}

// A response tells the container's quota and usage, as the service's headers do.
func TestResponseQuota(t *testing.T) {
	m := newMem()
	m.Create([]byte(`{"id":"a"}`), WriteOptions{})
	out, err := NewRunner(Limits{}).Procedure(`function () {
		var res = getContext().getResponse();
		res.setBody([res.getMaxResourceQuota(), res.getResourceQuotaCurrentUsage()]);
	}`, nil, m, ProcedureCall{})
	if err != nil || string(out.Body) != `["documentSize=2048;","documentsCount=1;"]` {
		t.Fatalf("%s %v", out.Body, err)
	}
}

// A call that runs beside a runaway one may see the process's heap outgrow its own budget
// too: both are stopped with ErrMemoryBeside, and run again apart (Alone), where the runaway
// one is stopped by itself and the other finishes.
func TestMemoryBudgetSparesCallsBeside(t *testing.T) {
	r := NewRunner(Limits{Timeout: 10 * time.Second, MaxMemory: 32 << 20})
	innocent := `function () { var t = Date.now(), n = 0; while (Date.now() - t < 300) n++; getContext().getResponse().setBody(n > 0) }`
	hog := `function () { var a = []; for (;;) a.push("x".repeat(1 << 16) + a.length) }`
	run := func(body string) (Outcome, error, bool) {
		out, err := r.Procedure(body, nil, newMem(), ProcedureCall{})
		if err != ErrMemoryBeside {
			return out, err, false
		}
		err = r.Alone(func() error {
			out, err = r.Procedure(body, nil, newMem(), ProcedureCall{})
			return err
		})
		return out, err, true
	}
	var (
		out    Outcome
		err    error
		beside bool
		done   = make(chan struct{})
	)
	go func() {
		defer close(done)
		out, err, beside = run(innocent)
	}()
	time.Sleep(50 * time.Millisecond)
	_, herr, hogBeside := run(hog)
	<-done
	if err != nil || string(out.Body) != "true" {
		t.Fatalf("the call beside the runaway one: %s, %v", out.Body, err)
	}
	var f *fault.Error
	if !errors.As(herr, &f) || !strings.Contains(f.Message, "memory limit") {
		t.Fatalf("the runaway call: %v; want it stopped for its memory", herr)
	}
	t.Logf("stopped beside each other and run again: innocent %v, runaway %v", beside, hogBeside)
}

func TestFunction(t *testing.T) {
	r := NewRunner(Limits{Timeout: 200 * time.Millisecond})
	f, err := r.Function(`function tax(income) { if (income < 0) throw new Error("negative"); return {t: income * 0.1}; }`)
	if err != nil {
		t.Fatal(err)
	}
	v, err := f([]value.Value{value.Num(100)})
	if err != nil || v.String() != `{"t":10}` {
		t.Fatalf("%v %v", v, err)
	}
	if _, err := f([]value.Value{value.Num(-1)}); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Fatal(err)
	}
	g, _ := r.Function(`function () { return getContext() }`)
	if _, err := g(nil); err == nil || !strings.Contains(err.Error(), "only compute") {
		t.Fatal(err)
	}
}

// TestHostileScripts holds what fuzzing found: each of these once failed with an internal
// error, ran past its budget in one native step (or forever), or allocated far past its
// memory budget before anything could stop it.
// TestHostileScripts runs the corpus of testdata/hostile: scripts that try to take the process
// down (memory, stack, native loops, deep values) each end as the file says, and an ordinary
// call still runs after each.
func TestHostileScripts(t *testing.T) {
	r := NewRunner(Limits{Timeout: time.Second, MaxMemory: 64 << 20})
	datadriven.RunTest(t, "testdata/hostile", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "run" {
			t.Fatalf("unknown command %q", d.Cmd)
		}
		var args string
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "args":
				args = strings.Join(a.Vals, ",")
			case "nest":
				n, _ := strconv.Atoi(a.Vals[0])
				args = strings.Repeat("[", n) + strings.Repeat("]", n)
			}
		}
		_, err := r.Procedure(d.Input, []byte(args), newMem(), ProcedureCall{})
		if out, herr := r.Procedure(`function () { getContext().getResponse().setBody("still here") }`, nil, newMem(), ProcedureCall{}); herr != nil || string(out.Body) != `"still here"` {
			t.Fatalf("an ordinary call after it: %s, %v", out.Body, herr)
		}
		if err == nil {
			return "ok"
		}
		var f *fault.Error
		if !errors.As(err, &f) {
			return "not a fault: " + err.Error()
		}
		msg, _, _ := strings.Cut(f.Message, "\n") // the first line: a stack trace follows some
		return f.Kind.String() + ": " + strings.TrimSpace(msg)
	})
}

// console.log formats as Node's util.format: specifiers take the arguments in turn, %% is a
// percent sign, a specifier without an argument stays, and what is left over is appended.
func TestConsoleLogFormats(t *testing.T) {
	r := NewRunner(Limits{Timeout: time.Second, MaxMemory: 64 << 20})
	for _, tc := range []struct{ call, want string }{
		{`"hi", 1`, "hi 1"},
		{`"%s is %d years", "Ada", 36`, "Ada is 36 years"},
		{`"%i and %f", "42.9px", "3.5e1x"`, "42 and 35"},
		{`"%d", "abc"`, "NaN"},
		{`"%j", {a: [1, "x"], b: null}`, `{"a":[1,"x"],"b":null}`},
		{`"%o!", {n: 1}`, `{"n":1}!`},
		{`"100%% of %s"`, "100% of %s"},
		{`"%c styled", "color: red"`, " styled"},
		{`"%s", "a", "b", {c: 1}`, `a b {"c":1}`},
		{`{x: 1}, [2, 3], undefined, null, true`, `{"x":1} [2,3] undefined null true`},
		{`"%z %s", 5`, "%z 5"},
		{`(function () { var o = {}; o.self = o; return o })()`, "[Circular]"},
		{``, ""},
	} {
		out, err := r.Procedure(`function () { console.log(`+tc.call+`) }`, nil, newMem(), ProcedureCall{Log: true})
		if err != nil || out.Log != tc.want {
			t.Errorf("console.log(%s): %q %v, want %q", tc.call, out.Log, err, tc.want)
		}
	}
}
