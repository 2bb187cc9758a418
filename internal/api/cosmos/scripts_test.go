package cosmos

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/engine"
)

type scriptDo func(method, path, body string, hdr map[string]string) *httptest.ResponseRecorder

type signedDo func(method, path, resType, resLink, body string, hdr map[string]string) *httptest.ResponseRecorder

// scriptServer serves a container db/c. Its do signs each request for the resource type and
// link an SDK would: a feed's by its parent, a script's by itself; that the handler accepts
// them checks how it derives them from the path. raw signs for what it is given.
func scriptServer(t *testing.T) (do scriptDo, raw signedDo) {
	e, err := engine.Open(engine.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	e.CreateDatabase("db", nil)
	if _, err := e.CreateContainer("db", engine.ContainerSpec{ID: "c", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	raw = signedRequests(t, e)
	return func(method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
		segs := strings.Split(strings.Trim(path, "/"), "/")
		typ, link := segs[len(segs)-1], strings.Join(segs[:len(segs)-1], "/")
		if len(segs)%2 == 0 {
			typ, link = segs[len(segs)-2], strings.Join(segs, "/")
		}
		return raw(method, path, typ, link, body, hdr)
	}, raw
}

func decode(t *testing.T, w *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("response %d is not a JSON object: %v: %s", w.Code, err, w.Body)
	}
	return m
}

func expect(t *testing.T, w *httptest.ResponseRecorder, code int, what string) {
	t.Helper()
	if w.Code != code {
		t.Fatalf("%s: %d, want %d: %s", what, w.Code, code, w.Body)
	}
}

func TestScriptRoutes(t *testing.T) {
	do, _ := scriptServer(t)
	for _, tc := range []struct{ kind, list, extra string }{
		{"sprocs", "StoredProcedures", ""},
		{"triggers", "Triggers", `,"triggerType":"pre","triggerOperation":"create"`},
		{"udfs", "UserDefinedFunctions", ""},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			feed := "/dbs/db/colls/c/" + tc.kind
			one := feed + "/s1"
			body := func(id, js string) string {
				return fmt.Sprintf(`{"id":%q,"body":%q,"_rid":"ignored","_etag":"ignored"%s}`, id, js, tc.extra)
			}
			w := do("POST", feed, body("s1", "function one() {}"), nil)
			expect(t, w, http.StatusCreated, "create")
			created := decode(t, w)
			if created["id"] != "s1" || created["body"] != "function one() {}" || created["_rid"] == "ignored" ||
				!strings.HasSuffix(created["_self"].(string), "/"+tc.kind+"/"+created["_rid"].(string)+"/") ||
				w.Header().Get("Etag") != created["_etag"] || w.Header().Get("x-ms-request-charge") == "" {
				t.Fatalf("created %v, headers %v", created, w.Header())
			}
			_, isTrigger := created["triggerType"]
			if isTrigger != (tc.kind == "triggers") || isTrigger && (created["triggerType"] != "Pre" || created["triggerOperation"] != "Create") {
				t.Fatalf("trigger fields of %v", created)
			}
			expect(t, do("POST", feed, body("s1", "function again() {}"), nil), http.StatusConflict, "duplicate create")
			expect(t, do("POST", feed, body("s2", "function two() {}"), nil), http.StatusCreated, "second create")

			w = do("GET", one, "", nil)
			expect(t, w, http.StatusOK, "read")
			if got := decode(t, w); got["_etag"] != created["_etag"] || got["_rid"] != created["_rid"] {
				t.Fatalf("read %v, created %v", got, created)
			}
			expect(t, do("GET", feed+"/missing", "", nil), http.StatusNotFound, "read missing")

			w = do("GET", feed, "", nil)
			expect(t, w, http.StatusOK, "list")
			list := decode(t, w)
			if items, _ := list[tc.list].([]any); len(items) != 2 || list["_count"] != 2.0 || list["_rid"] == "" ||
				items[0].(map[string]any)["id"] != "s1" || items[1].(map[string]any)["id"] != "s2" {
				t.Fatalf("list %s", w.Body)
			}
			w = do("POST", feed, `{"query":"SELECT VALUE r.id FROM root r WHERE r.body = @b","parameters":[{"name":"@b","value":"function two() {}"}]}`,
				map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true"})
			expect(t, w, http.StatusOK, "query")
			if ids := decode(t, w)[tc.list].([]any); len(ids) != 1 || ids[0] != "s2" {
				t.Fatalf("query %s", w.Body)
			}

			expect(t, do("PUT", one, body("s1", "function renewed() {}"), map[string]string{"If-Match": `"stale"`}), http.StatusPreconditionFailed, "stale replace")
			expect(t, do("PUT", one, body("other", "function renewed() {}"), nil), http.StatusBadRequest, "replace naming another id")
			expect(t, do("PUT", feed+"/missing", body("missing", "function renewed() {}"), nil), http.StatusNotFound, "replace missing")
			w = do("PUT", one, body("s1", "function renewed() {}"), map[string]string{"If-Match": created["_etag"].(string)})
			expect(t, w, http.StatusOK, "replace")
			replaced := decode(t, w)
			if replaced["body"] != "function renewed() {}" || replaced["_etag"] == created["_etag"] || replaced["_rid"] != created["_rid"] {
				t.Fatalf("replaced %v", replaced)
			}

			expect(t, do("DELETE", one, "", map[string]string{"If-Match": created["_etag"].(string)}), http.StatusPreconditionFailed, "stale delete")
			expect(t, do("DELETE", one, "", map[string]string{"If-Match": replaced["_etag"].(string)}), http.StatusNoContent, "delete")
			expect(t, do("GET", one, "", nil), http.StatusNotFound, "read after delete")
			expect(t, do("DELETE", one, "", nil), http.StatusNotFound, "delete twice")
		})
	}
	expect(t, do("GET", "/dbs/db/colls/nope/sprocs", "", nil), http.StatusNotFound, "list in a missing container")
	expect(t, do("PATCH", "/dbs/db/colls/c/udfs/x", "", nil), http.StatusMethodNotAllowed, "patch a UDF")
	expect(t, do("POST", "/dbs/db/colls/c/udfs/x", "[]", nil), http.StatusMethodNotAllowed, "execute a UDF")
}

func TestScriptValidation(t *testing.T) {
	do, _ := scriptServer(t)
	for name, tc := range map[string]struct{ path, body string }{
		"body not a string":     {"sprocs", `{"id":"a","body":{"f":1}}`},
		"no body":               {"sprocs", `{"id":"a"}`},
		"empty body":            {"udfs", `{"id":"a","body":""}`},
		"body too large":        {"udfs", `{"id":"a","body":"` + strings.Repeat("x", engine.MaxScriptBytes+1) + `"}`},
		"bad id":                {"sprocs", `{"id":"a/b","body":"function() {}"}`},
		"no trigger type":       {"triggers", `{"id":"a","body":"function() {}","triggerOperation":"All"}`},
		"bad trigger operation": {"triggers", `{"id":"a","body":"function() {}","triggerType":"Post","triggerOperation":"Sometimes"}`},
		"not JSON":              {"sprocs", `{"id":`},
	} {
		if w := do("POST", "/dbs/db/colls/c/"+tc.path, tc.body, nil); w.Code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", name, w.Code, w.Body)
		}
	}
	if items := decode(t, do("GET", "/dbs/db/colls/c/sprocs", "", nil))["StoredProcedures"].([]any); len(items) != 0 {
		t.Fatalf("refused creates left %v", items)
	}
}

// The list is paged in creation order, and a continuation survives the delete of the last
// script it saw.
func TestScriptListPages(t *testing.T) {
	do, _ := scriptServer(t)
	for _, id := range []string{"z", "a", "m"} {
		expect(t, do("POST", "/dbs/db/colls/c/sprocs", `{"id":"`+id+`","body":"function() {}"}`, nil), http.StatusCreated, "create "+id)
	}
	w := do("GET", "/dbs/db/colls/c/sprocs", "", map[string]string{"x-ms-max-item-count": "2"})
	expect(t, w, http.StatusOK, "first page")
	tok := w.Header().Get("x-ms-continuation")
	if items := decode(t, w)["StoredProcedures"].([]any); len(items) != 2 || items[0].(map[string]any)["id"] != "z" || items[1].(map[string]any)["id"] != "a" || tok == "" {
		t.Fatalf("first page %s, continuation %q", w.Body, tok)
	}
	expect(t, do("DELETE", "/dbs/db/colls/c/sprocs/a", "", nil), http.StatusNoContent, "delete")
	w = do("GET", "/dbs/db/colls/c/sprocs", "", map[string]string{"x-ms-max-item-count": "2", "x-ms-continuation": tok})
	expect(t, w, http.StatusOK, "second page")
	if items := decode(t, w)["StoredProcedures"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != "m" || w.Header().Get("x-ms-continuation") != "" {
		t.Fatalf("second page %s", w.Body)
	}
}

// Executing a procedure reaches the engine only with a JSON array of arguments and a partition
// key; the procedure's result is the body, its log a percent-encoded header when asked for. A
// request signed for the wrong link is refused.
func TestScriptExecuteRoute(t *testing.T) {
	do, raw := scriptServer(t)
	echo := `function p() { var args = Array.prototype.slice.call(arguments); console.log("got " + args.length + " arguments"); getContext().getResponse().setBody(args); }`
	expect(t, do("POST", "/dbs/db/colls/c/sprocs", fmt.Sprintf(`{"id":"p","body":%q}`, echo), nil), http.StatusCreated, "create")
	pk := map[string]string{"x-ms-documentdb-partitionkey": `["k"]`}
	for _, body := range []string{`{"a":1}`, `"a"`, `1`, `[1,`, `[1] x`} {
		if w := do("POST", "/dbs/db/colls/c/sprocs/p", body, pk); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "JSON array") {
			t.Errorf("arguments %s: %d %s", body, w.Code, w.Body)
		}
	}
	expect(t, do("POST", "/dbs/db/colls/c/sprocs/p", `["a"]`, nil), http.StatusBadRequest, "execute without a partition key")
	expect(t, do("POST", "/dbs/db/colls/c/sprocs/p", `["a"]`, map[string]string{"x-ms-documentdb-partitionkey": `[k]`}), http.StatusBadRequest, "a bad partition key")
	for body, want := range map[string]struct{ result, log string }{
		"":                {"[]", "got%200%20arguments"},
		" [ ] ":           {"[]", "got%200%20arguments"},
		`["a", {"b": 1}]`: {`["a",{"b":1}]`, "got%202%20arguments"},
	} {
		w := do("POST", "/dbs/db/colls/c/sprocs/p", body, map[string]string{"x-ms-documentdb-partitionkey": `["k"]`, "x-ms-documentdb-script-enable-logging": "true"})
		if w.Code != http.StatusOK || w.Body.String() != want.result || w.Header().Get("x-ms-documentdb-script-log-results") != want.log {
			t.Errorf("arguments %q: %d %s, log %q", body, w.Code, w.Body, w.Header().Get("x-ms-documentdb-script-log-results"))
		}
	}
	// A query on a procedure's path is not an execution.
	expect(t, do("POST", "/dbs/db/colls/c/sprocs/p", `{"query":"SELECT 1"}`, map[string]string{"x-ms-documentdb-isquery": "true"}),
		http.StatusMethodNotAllowed, "query on a procedure")
	// Signed as the SDKs sign it (type sprocs, the procedure's own link), or for its container.
	if w := raw("POST", "/dbs/db/colls/c/sprocs/p", "sprocs", "dbs/db/colls/c/sprocs/p", "[]", pk); w.Code != http.StatusOK {
		t.Fatalf("signed for the procedure: %d %s", w.Code, w.Body)
	}
	if w := raw("POST", "/dbs/db/colls/c/sprocs/p", "sprocs", "dbs/db/colls/c", "[]", pk); w.Code != http.StatusUnauthorized {
		t.Fatalf("signed for the container: %d %s", w.Code, w.Body)
	}
}

// Item writes name their triggers in the include headers, which the SDKs join with commas;
// Cosmos runs at most one of each type per operation.
func TestScriptTriggerHeaders(t *testing.T) {
	names := func(v string) ([]string, error) {
		r := httptest.NewRequest("POST", "/dbs/db/colls/c/docs", nil)
		r.Header.Set("x-ms-documentdb-pre-trigger-include", v)
		return (&call{r: r}).triggerNames("X-Ms-Documentdb-Pre-Trigger-Include")
	}
	for v, want := range map[string]string{"": "", "t1": "t1", " t1 ": "t1"} {
		if got, err := names(v); err != nil || strings.Join(got, ",") != want || (want == "") != (got == nil) {
			t.Errorf("%q: %q %v, want %q", v, got, err, want)
		}
	}
	if _, err := names("t1,t2"); statusOf(err) != http.StatusBadRequest {
		t.Errorf("two pre-triggers: %v", err)
	}
	do, _ := scriptServer(t)
	for _, h := range []string{"x-ms-documentdb-pre-trigger-include", "x-ms-documentdb-post-trigger-include"} {
		w := do("POST", "/dbs/db/colls/c/docs", `{"id":"x","pk":"k"}`, map[string]string{"x-ms-documentdb-partitionkey": `["k"]`, h: "a,b"})
		expect(t, w, http.StatusBadRequest, h+" with two triggers")
	}
	expect(t, do("GET", "/dbs/db/colls/c/docs/x", "", map[string]string{"x-ms-documentdb-partitionkey": `["k"]`}), http.StatusNotFound, "refused write")
}
