package engine

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

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
		var end = Date.now() + 400; while (Date.now() < end) {}
	}`))
	done := make(chan error, 1)
	go func() {
		_, err := c.ExecuteProcedure("slow", nil, ProcedureOptions{PartitionKey: pkey("a")})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // the procedure holds "a" now
	start := time.Now()
	if _, err := c.CreateItem([]byte(`{"id":"o","pk":"b"}`), ItemOptions{}); err != nil {
		t.Fatal(err)
	}
	other := time.Since(start)
	if _, err := c.CreateItem([]byte(`{"id":"w","pk":"a"}`), ItemOptions{}); err != nil {
		t.Fatal(err)
	}
	same := time.Since(start)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Not a timing assertion on speed: the write to "a" cannot finish before the procedure
	// that holds "a" does, which is an ordering fact; the write to "b" did not wait for it.
	if same < 200*time.Millisecond || other > same {
		t.Fatalf("the write to the procedure's partition took %v, the other %v", same, other)
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
