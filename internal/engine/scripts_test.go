package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/rid"
)

func sproc(id, body string) Script { return Script{Kind: ProcedureScript, ID: id, Body: body} }

func mustCreateScript(t *testing.T, c *Container, s Script) Script {
	t.Helper()
	got, err := c.CreateScript(s)
	if err != nil {
		t.Fatalf("create %s %q: %v", s.Kind, s.ID, err)
	}
	return got
}

func TestScriptLifecycle(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	a := mustCreateScript(t, c, sproc("a", "function a() {}"))
	if a.RID == "" || a.ETag == "" || a.TS == 0 || !strings.HasSuffix(a.Self, "/sprocs/"+a.RID+"/") {
		t.Fatalf("created %+v", a)
	}
	if got, err := c.ReadScript(ProcedureScript, "a"); err != nil || got != a {
		t.Fatalf("read %+v %v, want %+v", got, err, a)
	}
	if _, err := c.CreateScript(sproc("a", "function b() {}")); !errors.Is(err, fault.Conflict) {
		t.Fatalf("a duplicate id must be 409, got %v", err)
	}
	// Ids are per kind: a UDF may share a procedure's.
	f := mustCreateScript(t, c, Script{Kind: FunctionScript, ID: "a", Body: "function f(x) { return x }"})
	if f.RID == a.RID || f.ETag == a.ETag {
		t.Fatalf("a UDF shares the procedure's rid or etag: %+v %+v", f, a)
	}

	if _, err := c.ReplaceScript(sproc("a", "function a2() {}"), "stale"); !errors.Is(err, fault.PreconditionFailed) {
		t.Fatalf("a stale If-Match must be 412, got %v", err)
	}
	a2, err := c.ReplaceScript(sproc("a", "function a2() {}"), a.ETag)
	if err != nil || a2.Body != "function a2() {}" || a2.ETag == a.ETag || a2.RID != a.RID {
		t.Fatalf("replaced %+v %v", a2, err)
	}
	if got, _ := c.script(ProcedureScript, "a"); got != a2 {
		t.Fatalf("the lock-free lookup sees %+v, want %+v", got, a2)
	}
	if _, err := c.ReplaceScript(sproc("missing", "x"), ""); !errors.Is(err, fault.NotFound) {
		t.Fatalf("replacing a missing script: %v", err)
	}

	mustCreateScript(t, c, sproc("b", "function b() {}"))
	mustCreateScript(t, c, sproc("0", "function c() {}"))
	var ids []string
	for _, s := range c.Scripts(ProcedureScript) {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, ",") != "a,b,0" {
		t.Fatalf("procedures %v, want creation order a,b,0", ids)
	}

	if err := c.DeleteScript(ProcedureScript, "a", a.ETag); !errors.Is(err, fault.PreconditionFailed) {
		t.Fatalf("delete with the old etag: %v", err)
	}
	if err := c.DeleteScript(ProcedureScript, "a", a2.ETag); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadScript(ProcedureScript, "a"); !errors.Is(err, fault.NotFound) {
		t.Fatalf("read after delete: %v", err)
	}
	if _, err := c.script(ProcedureScript, "a"); err == nil {
		t.Fatal("the lock-free lookup still sees a deleted script")
	}
	if err := c.DeleteScript(ProcedureScript, "a", ""); !errors.Is(err, fault.NotFound) {
		t.Fatalf("deleting twice: %v", err)
	}
	// A script created again under the same id is a new resource.
	again := mustCreateScript(t, c, sproc("a", "function a() {}"))
	if again.RID == a.RID || again.ETag == a2.ETag {
		t.Fatalf("re-created script reuses rid or etag: %+v", again)
	}
	if _, err := c.ReadScript(FunctionScript, "a"); err != nil {
		t.Fatalf("deleting the procedure touched the UDF: %v", err)
	}
}

func TestScriptValidation(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	for _, s := range []Script{
		sproc("", "function() {}"),
		sproc("a/b", "function() {}"),
		sproc(strings.Repeat("x", 256), "function() {}"),
		sproc("a", ""),
		sproc("a", "  \n"),
		sproc("a", strings.Repeat("x", MaxScriptBytes+1)),
		{Kind: TriggerScript, ID: "t", Body: "function() {}", TriggerType: "During", TriggerOperation: "All"},
		{Kind: TriggerScript, ID: "t", Body: "function() {}", TriggerType: "Pre", TriggerOperation: "Upsert"},
		{Kind: TriggerScript, ID: "t", Body: "function() {}"},
		{Kind: ScriptKind(9), ID: "t", Body: "function() {}"},
	} {
		if _, err := c.CreateScript(s); !errors.Is(err, fault.BadRequest) {
			t.Errorf("create %+.40v: %v, want 400", s, err)
		}
	}
	if len(c.Scripts(ProcedureScript))+len(c.Scripts(TriggerScript)) != 0 {
		t.Fatal("refused creates left scripts behind")
	}
	// Trigger fields are matched without case (the JavaScript SDK sends "pre", "all") and kept
	// in Cosmos's spelling; other kinds carry none.
	tr := mustCreateScript(t, c, Script{Kind: TriggerScript, ID: "t", Body: "function() {}", TriggerType: "pre", TriggerOperation: "all"})
	if tr.TriggerType != "Pre" || tr.TriggerOperation != "All" {
		t.Fatalf("trigger %+v", tr)
	}
	p := mustCreateScript(t, c, Script{Kind: ProcedureScript, ID: "p", Body: "function() {}", TriggerType: "Pre"})
	if p.TriggerType != "" {
		t.Fatalf("a procedure with a trigger type: %+v", p)
	}
}

// Each kind has its quota, answered with Forbidden as Cosmos's resource quota errors are.
func TestScriptQuota(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	quota := scriptKinds[TriggerScript].quota
	for i := range quota {
		mustCreateScript(t, c, Script{Kind: TriggerScript, ID: fmt.Sprint("t", i), Body: "function() {}", TriggerType: "Post", TriggerOperation: "Create"})
	}
	_, err := c.CreateScript(Script{Kind: TriggerScript, ID: "one-more", Body: "function() {}", TriggerType: "Post", TriggerOperation: "Create"})
	if !errors.Is(err, fault.Forbidden) {
		t.Fatalf("trigger %d: %v, want 403", quota+1, err)
	}
	// Other kinds count apart.
	mustCreateScript(t, c, sproc("p", "function() {}"))
	if err := c.DeleteScript(TriggerScript, "t0", ""); err != nil {
		t.Fatal(err)
	}
	mustCreateScript(t, c, Script{Kind: TriggerScript, ID: "one-more", Body: "function() {}", TriggerType: "Post", TriggerOperation: "Create"})
}

// Script rids extend the container's, never equal an item's, and carry Cosmos's tag of
// their kind in the high nibble of the last byte.
func TestScriptRIDs(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	item := mustCreate(t, c, item("a", "p", ""))
	itemRID := field(t, item.Doc, "_rid").(string)
	seen := map[string]bool{itemRID: true}
	for kind, tag := range map[ScriptKind]rid.ChildKind{ProcedureScript: rid.StoredProcedure, TriggerScript: rid.Trigger, FunctionScript: rid.UserDefinedFunction} {
		for i := range 3 {
			s := mustCreateScript(t, c, Script{Kind: kind, ID: fmt.Sprint(i), Body: "function() {}", TriggerType: "Pre", TriggerOperation: "All"})
			if seen[s.RID] {
				t.Fatalf("rid %s given twice", s.RID)
			}
			seen[s.RID] = true
			b, ok := rid.Decode(s.RID)
			if !ok || len(b) != 16 || string(b[:8]) != string(c.rid[:]) || rid.ChildKind(b[15]>>4) != tag || b[8]&0x80 == 0 {
				t.Fatalf("%s rid %s decodes to %x", kind, s.RID, b)
			}
		}
	}
}

// Scripts are in the container's record: they survive a restart with their rids and etags, a
// split keeps them, numbers are not reused after it, and they go with their container.
func TestScriptsSurviveRestartAndSplit(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir, Options{})
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Container("db", "c")
	want := []Script{
		mustCreateScript(t, c, sproc("p", "function p() {}")),
		mustCreateScript(t, c, Script{Kind: TriggerScript, ID: "t", Body: "function t() {}", TriggerType: "Post", TriggerOperation: "Replace"}),
		mustCreateScript(t, c, Script{Kind: FunctionScript, ID: "f", Body: "function f() {}"}),
	}
	gone := mustCreateScript(t, c, sproc("gone", "function g() {}"))
	if err := c.DeleteScript(ProcedureScript, "gone", ""); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, item("i", "k", ""))
	at, err := c.EPK(key("k"))
	if err != nil {
		t.Fatal(err)
	}
	parts := len(c.routes.Load().parts)
	if err := e.split(c, c.PartitionID(at), at); err != nil {
		t.Fatal(err)
	}
	if len(c.routes.Load().parts) != parts+1 {
		t.Fatal("the partition did not split")
	}
	check := func(when string, c *Container) {
		t.Helper()
		for _, w := range want {
			if got, err := c.ReadScript(w.Kind, w.ID); err != nil || got != w {
				t.Fatalf("%s: %s %q is %+v %v, want %+v", when, w.Kind, w.ID, got, err, w)
			}
		}
		if _, err := c.ReadScript(ProcedureScript, "gone"); !errors.Is(err, fault.NotFound) {
			t.Fatalf("%s: the deleted procedure is back: %v", when, err)
		}
	}
	check("after the split", c)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = openEngine(t, dir, Options{})
	defer e.Close()
	c, err = e.Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	check("after a restart", c)
	if got, _ := c.script(TriggerScript, "t"); got != want[1] {
		t.Fatalf("lock-free lookup after a restart: %+v", got)
	}
	next := mustCreateScript(t, c, sproc("next", "function n() {}"))
	for _, s := range append(want, gone) {
		if next.RID == s.RID || next.ETag == s.ETag {
			t.Fatalf("a number was reused after the restart: %+v and %+v", next, s)
		}
	}

	// The scripts die with their container, and a handle kept from before refuses changes.
	if err := e.DeleteContainer("db", "c", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateScript(sproc("late", "function() {}")); !errors.Is(err, fault.NotFound) {
		t.Fatalf("a script created in a deleted container: %v", err)
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	c, _ = e.Container("db", "c")
	for k := range numScriptKinds {
		if s := c.Scripts(k); len(s) != 0 {
			t.Fatalf("a new container of the same name has %s %v", k, s)
		}
	}
}
