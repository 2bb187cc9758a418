package engine

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/script"
)

func pkey(s string) epk.Key { return epk.Key{epk.String(s)} }

func itemCount(t *testing.T, c *Container, sql string) string {
	t.Helper()
	p, err := query.Prepare(sql)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Query(p, epk.All, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range res.Results {
		out = append(out, v.String())
	}
	return strings.Join(out, ",")
}

func TestProcedureCommitsAllOrNothing(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	mustCreateScript(t, c, sproc("three", `function (fail) {
		var c = getContext().getCollection();
		for (var i = 0; i < 3; i++) c.createDocument(c.getSelfLink(), {id: "d" + i, pk: "a", n: i});
		// The transaction's own writes are visible to its queries at once.
		c.queryDocuments(c.getSelfLink(), "SELECT VALUE COUNT(1) FROM c", function (err, r) {
			if (err) throw err;
			if (fail) throw new Error("after " + r[0]);
			getContext().getResponse().setBody(r[0]);
		});
	}`))
	res, err := c.ExecuteProcedure("three", []byte(`[true]`), ProcedureOptions{PartitionKey: pkey("a")})
	if !errors.Is(err, fault.BadRequest) || !strings.Contains(err.Error(), "Error: after 3") {
		t.Fatalf("want the script's error, got %v", err)
	}
	if res.Charge <= 0 {
		t.Fatalf("a failed call is charged for its work, got %v", res.Charge)
	}
	if got := itemCount(t, c, "SELECT VALUE COUNT(1) FROM c"); got != "0" {
		t.Fatalf("a thrown procedure left %s items", got)
	}
	res, err = c.ExecuteProcedure("three", []byte(`[false]`), ProcedureOptions{PartitionKey: pkey("a")})
	if err != nil || string(res.Body) != "3" {
		t.Fatalf("%s %v", res.Body, err)
	}
	if got := itemCount(t, c, "SELECT VALUE COUNT(1) FROM c"); got != "3" {
		t.Fatalf("committed %s items, want 3", got)
	}
	// Another logical partition is refused, even when the script catches the error.
	mustCreateScript(t, c, sproc("other", `function () {
		var c = getContext().getCollection();
		c.createDocument(c.getSelfLink(), {id: "x", pk: "a"});
		try { c.createDocument(c.getSelfLink(), {id: "y", pk: "b"}, function () {}); } catch (e) {}
	}`))
	if _, err := c.ExecuteProcedure("other", nil, ProcedureOptions{PartitionKey: pkey("a")}); !errors.Is(err, script.ErrOtherPartition) {
		t.Fatalf("want the other-partition error, got %v", err)
	}
	if got := itemCount(t, c, "SELECT VALUE c.id FROM c WHERE c.id IN ('x', 'y')"); got != "" {
		t.Fatalf("a refused call wrote %s", got)
	}
}

func TestProcedureSerializesItsLogicalPartitionOnly(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	mustCreateScript(t, c, sproc("slow", `function () {
		var c = getContext().getCollection();
		c.createDocument(c.getSelfLink(), {id: "s", pk: "a"});
		var end = Date.now() + 1500; while (Date.now() < end) {}
	}`))
	done := make(chan ProcedureResult, 1)
	go func() {
		res, err := c.ExecuteProcedure("slow", nil, ProcedureOptions{PartitionKey: pkey("a")})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	e, _ := c.EPK(pkey("a"))
	for !c.locks.heldByScript(e) {
		time.Sleep(time.Millisecond)
	}
	// Orderings, told by LSNs (one physical partition numbers every commit): the write to
	// another logical partition commits while the procedure runs, the write to its own
	// logical partition only after the procedure's commit.
	other, err := c.CreateItem([]byte(`{"id":"o","pk":"b"}`), ItemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	same, err := c.CreateItem([]byte(`{"id":"w","pk":"a"}`), ItemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	proc := <-done
	if !(other.LSN < proc.LSN && proc.LSN < same.LSN) {
		t.Fatalf("LSNs: other partition %d, procedure %d, same partition %d", other.LSN, proc.LSN, same.LSN)
	}
}

func TestTriggersAndUDFs(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	mustCreateScript(t, c, Script{Kind: TriggerScript, ID: "stamp", TriggerType: "Pre", TriggerOperation: "Create", Body: `function () {
		var r = getContext().getRequest(); var d = r.getBody(); d.stamped = true; r.setBody(d); }`})
	mustCreateScript(t, c, Script{Kind: TriggerScript, ID: "audit", TriggerType: "Post", TriggerOperation: "All", Body: `function () {
		var c = getContext().getCollection(); var d = getContext().getResponse().getBody();
		if (d.id == "bad") throw new Error("no");
		c.upsertDocument(c.getSelfLink(), {id: "audit-" + d.id, pk: d.pk}); }`})
	res, err := c.CreateItem([]byte(`{"id":"a","pk":"p"}`), ItemOptions{PreTriggers: []string{"stamp"}, PostTriggers: []string{"audit"}})
	if err != nil || !strings.Contains(string(res.Doc), `"stamped":true`) || !res.Created || res.ETag == "" {
		t.Fatalf("%s %v", res.Doc, err)
	}
	if _, err := c.CreateItem([]byte(`{"id":"bad","pk":"p"}`), ItemOptions{PostTriggers: []string{"audit"}}); !errors.Is(err, fault.BadRequest) {
		t.Fatalf("a throwing post-trigger must fail the write: %v", err)
	}
	if got := itemCount(t, c, "SELECT VALUE c.id FROM c ORDER BY c.id"); got != `"a","audit-a"` {
		t.Fatalf("items %s", got)
	}
	if _, err := c.DeleteItem(pkey("p"), "a", ItemOptions{PreTriggers: []string{"stamp"}}); err == nil {
		t.Fatal("a Create trigger must not run on a delete")
	}
	mustCreateScript(t, c, Script{Kind: FunctionScript, ID: "double", Body: `function (x) { return x * 2 }`})
	for i := 0; i < 5; i++ {
		if _, err := c.CreateItem([]byte(fmt.Sprintf(`{"id":"n%d","pk":"q","n":%d}`, i, i)), ItemOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := itemCount(t, c, "SELECT VALUE udf.double(c.n) FROM c WHERE udf.double(c.n) > 4 ORDER BY c.n"); got != "6,8" {
		t.Fatalf("udf results %s", got)
	}
}

func TestConcurrentProceduresOnOnePartition(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	mustCreateScript(t, c, sproc("inc", `function () {
		var c = getContext().getCollection();
		c.readDocument(c.getAltLink() + "/docs/counter", function (err, d) {
			if (err && err.number == 404) d = {id: "counter", pk: "a", n: 0};
			else if (err) throw err;
			d.n++;
			c.upsertDocument(c.getSelfLink(), d);
		});
	}`))
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.ExecuteProcedure("inc", nil, ProcedureOptions{PartitionKey: pkey("a")}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := itemCount(t, c, "SELECT VALUE c.n FROM c"); got != "20" {
		t.Fatalf("counter %s after 20 increments", got)
	}
}

// A procedure that spends more than its partition's second of request units still commits:
// it was admitted before it ran, as any request that crosses the budget completes. Its
// creates cost what the same creates cost outside a script (their lookups are part of the
// write), plus the script's time.
func TestProcedureCrossingTheBudgetCommits(t *testing.T) {
	_, c := newContainer(t, Options{RateLimit: true}, ContainerSpec{}) // 400 RU/s
	mustCreateScript(t, c, sproc("many", `function (n) {
		var c = getContext().getCollection();
		for (var i = 0; i < n; i++) c.createDocument(c.getSelfLink(), {id: "m" + i, pk: "a"});
		c.createDocument(c.getSelfLink(), {id: "m0", pk: "a"}, function (err) {
			getContext().getResponse().setBody(err.number); // a conflict: charged the minimum
		});
	}`))
	solo, err := c.CreateItem(item("solo", "b", ""), ItemOptions{}) // before the budget is spent
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.ExecuteProcedure("many", []byte(`[450]`), ProcedureOptions{PartitionKey: pkey("a")})
	if err != nil || string(res.Body) != "409" {
		t.Fatalf("a procedure over its second's budget: %s %v", res.Body, err)
	}
	// 450 creates cost 450 times one alike outside a script; a lookup charge per create would
	// add 450.
	if min, max := 450*solo.Charge, 450*solo.Charge+1+50; res.Charge < min || res.Charge > max {
		t.Fatalf("charged %v for 450 creates of %v each and a conflict, want %v to %v", res.Charge, solo.Charge, min, max)
	}
	time.Sleep(1100 * time.Millisecond) // the budget renews for the check
	if got := itemCount(t, c, "SELECT VALUE COUNT(1) FROM c WHERE c.pk = 'a'"); got != "450" {
		t.Fatalf("committed %s items, want 450", got)
	}
}

// The etag option of a script's writes, and If-Match on a write with triggers, compare with
// the stored _etag (which is quoted in the document) as a plain write's If-Match does.
func TestScriptWritesCheckETags(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	mustCreateScript(t, c, sproc("cas", `function (etag) {
		var c = getContext().getCollection(), link = c.getAltLink() + "/docs/x";
		c.readDocument(link, function (err, doc) {
			if (err) throw err;
			doc.v = 2;
			c.replaceDocument(doc._self, doc, {etag: etag || doc._etag}, function (err, replaced) {
				if (err) throw err;
				// The staged version has a new etag: the old one no longer matches.
				c.replaceDocument(doc._self, doc, {etag: doc._etag}, function (err) {
					getContext().getResponse().setBody([replaced._etag != doc._etag, err && err.number]);
				});
			});
		});
	}`))
	first := mustCreate(t, c, item("x", "a", `,"v":1`))
	res, err := c.ExecuteProcedure("cas", nil, ProcedureOptions{PartitionKey: pkey("a")})
	if err != nil || string(res.Body) != "[true,412]" {
		t.Fatalf("replace with the current etag, then a stale one: %s %v", res.Body, err)
	}
	_, err = c.ExecuteProcedure("cas", []byte(`["\"stale\""]`), ProcedureOptions{PartitionKey: pkey("a")})
	if !errors.Is(err, fault.PreconditionFailed) {
		t.Fatalf("replace with a stale etag: %v", err)
	}
	mustCreateScript(t, c, Script{Kind: TriggerScript, ID: "noop", TriggerType: "Pre", TriggerOperation: "All", Body: `function () {}`})
	cur, err := c.ReadItem(pkey("a"), "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteItem(OpReplace, "x", document.FromJSON(item("x", "a", `,"v":3`)), ItemOptions{IfMatch: first.ETag, PreTriggers: []string{"noop"}}); !errors.Is(err, fault.PreconditionFailed) {
		t.Fatalf("a triggered replace with a stale If-Match: %v", err)
	}
	if _, err := c.WriteItem(OpReplace, "x", document.FromJSON(item("x", "a", `,"v":3`)), ItemOptions{IfMatch: cur.ETag, PreTriggers: []string{"noop"}}); err != nil {
		t.Fatalf("a triggered replace with the current If-Match: %v", err)
	}
}
