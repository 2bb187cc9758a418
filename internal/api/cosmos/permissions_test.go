package cosmos

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/masterkey"
)

// tokenServer is a handler over database db with containers c and c2 (partitioned on /pk)
// and m (hierarchical, on /a and /b), on a clock the test moves.
type tokenServer struct {
	t   *testing.T
	e   *engine.Engine
	h   *Handler
	key *masterkey.Key
	mu  sync.Mutex
	now time.Time
}

func newTokenServer(t *testing.T) *tokenServer {
	e, err := engine.Open(engine.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s := &tokenServer{t: t, e: e, now: time.Now().UTC().Truncate(time.Second)}
	if s.h, err = NewHandler(e, Options{Key: testKey, Now: s.clock}); err != nil {
		t.Fatal(err)
	}
	s.key, _ = masterkey.Parse(testKey)
	e.CreateDatabase("db", nil)
	for _, c := range []engine.ContainerSpec{
		{ID: "c", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}},
		{ID: "c2", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}},
		{ID: "m", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/a", "/b"}, Kind: "MultiHash", Version: 2}},
	} {
		if _, err := e.CreateContainer("db", c); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s *tokenServer) clock() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

func (s *tokenServer) advance(d time.Duration) {
	s.mu.Lock()
	s.now = s.now.Add(d)
	s.mu.Unlock()
}

// send serves a request with the given Authorization value (none when empty).
func (s *tokenServer) send(auth, method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("x-ms-date", s.clock().Format(http.TimeFormat))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, req)
	return received(w)
}

// master sends a request signed with the account key for the resource its path names.
func (s *tokenServer) master(method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
	res, err := parseResource(path)
	if err != nil {
		s.t.Fatal(err)
	}
	date := s.clock().Format(http.TimeFormat)
	return s.send(s.key.Authorization(method, res.typ, res.link, date), method, path, body, hdr)
}

// as sends a request with a resource token, URL-encoded as the JavaScript SDK sends it.
func (s *tokenServer) as(token, method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
	return s.send(url.QueryEscape(token), method, path, body, hdr)
}

// permission creates a permission of user u (created if need be) and returns its token.
func (s *tokenServer) permission(u, id, body string, hdr map[string]string) string {
	s.t.Helper()
	if w := s.master("POST", "/dbs/db/users", `{"id":"`+u+`"}`, map[string]string{"x-ms-documentdb-is-upsert": "true"}); w.Code >= 300 {
		s.t.Fatalf("user %s: %d %s", u, w.Code, w.Body)
	}
	w := s.master("POST", "/dbs/db/users/"+u+"/permissions", body, hdr)
	expect(s.t, w, http.StatusCreated, "create permission "+id)
	tok, _ := decode(s.t, w)["_token"].(string)
	if !strings.HasPrefix(tok, "type=resource&ver=1.0&sig=") {
		s.t.Fatalf("permission %s has token %q", id, tok)
	}
	return tok
}

func TestUserRoutes(t *testing.T) {
	s := newTokenServer(t)
	w := s.master("POST", "/dbs/db/users", `{"id":"alice","_rid":"ignored"}`, nil)
	expect(t, w, http.StatusCreated, "create")
	u := decode(t, w)
	if u["id"] != "alice" || u["_rid"] == "ignored" || u["_permissions"] != "permissions/" ||
		!strings.HasSuffix(u["_self"].(string), "/users/"+u["_rid"].(string)+"/") || w.Header().Get("Etag") != u["_etag"] {
		t.Fatalf("created %v, headers %v", u, w.Header())
	}
	expect(t, s.master("POST", "/dbs/db/users", `{"id":"alice"}`, nil), http.StatusConflict, "create again")
	expect(t, s.master("POST", "/dbs/db/users", `{"id":"a/b"}`, nil), http.StatusBadRequest, "bad id")
	expect(t, s.master("POST", "/dbs/db/users", `{"id":`, nil), http.StatusBadRequest, "bad body")
	expect(t, s.master("POST", "/dbs/nodb/users", `{"id":"x"}`, nil), http.StatusNotFound, "missing database")
	expect(t, s.master("POST", "/dbs/db/users", `{"id":"bob"}`, map[string]string{"x-ms-documentdb-is-upsert": "true"}), http.StatusCreated, "upsert new")
	expect(t, s.master("POST", "/dbs/db/users", `{"id":"bob"}`, map[string]string{"x-ms-documentdb-is-upsert": "true"}), http.StatusOK, "upsert existing")

	w = s.master("GET", "/dbs/db/users", "", map[string]string{"x-ms-max-item-count": "1"})
	expect(t, w, http.StatusOK, "list")
	if l := decode(t, w); l["_count"] != 1.0 || l["Users"].([]any)[0].(map[string]any)["id"] != "alice" || w.Header().Get("x-ms-continuation") == "" {
		t.Fatalf("first page %v", l)
	}
	w = s.master("GET", "/dbs/db/users", "", map[string]string{"x-ms-continuation": w.Header().Get("x-ms-continuation")})
	if l := decode(t, w); l["_count"] != 1.0 || l["Users"].([]any)[0].(map[string]any)["id"] != "bob" {
		t.Fatalf("second page %v", l)
	}
	w = s.master("POST", "/dbs/db/users", `{"query":"SELECT * FROM u WHERE u.id = @id","parameters":[{"name":"@id","value":"bob"}]}`,
		map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true"})
	if l := decode(t, w); w.Code != 200 || l["_count"] != 1.0 || l["Users"].([]any)[0].(map[string]any)["id"] != "bob" {
		t.Fatalf("query: %d %v", w.Code, l)
	}

	expect(t, s.master("GET", "/dbs/db/users/alice", "", nil), http.StatusOK, "read")
	expect(t, s.master("GET", "/dbs/db/users/nobody", "", nil), http.StatusNotFound, "read missing")
	expect(t, s.master("PUT", "/dbs/db/users/alice", `{"id":"carol"}`, map[string]string{"If-Match": `"stale"`}), http.StatusPreconditionFailed, "stale replace")
	expect(t, s.master("PUT", "/dbs/db/users/alice", `{"id":"bob"}`, nil), http.StatusConflict, "rename onto bob")
	w = s.master("PUT", "/dbs/db/users/alice", `{"id":"carol"}`, map[string]string{"If-Match": u["_etag"].(string)})
	expect(t, w, http.StatusOK, "rename")
	if r := decode(t, w); r["id"] != "carol" || r["_rid"] != u["_rid"] {
		t.Fatalf("renamed %v", r)
	}
	expect(t, s.master("DELETE", "/dbs/db/users/carol", "", map[string]string{"If-Match": `"stale"`}), http.StatusPreconditionFailed, "stale delete")
	expect(t, s.master("DELETE", "/dbs/db/users/carol", "", nil), http.StatusNoContent, "delete")
	expect(t, s.master("GET", "/dbs/db/users/carol", "", nil), http.StatusNotFound, "read deleted")
	expect(t, s.master("PATCH", "/dbs/db/users/bob", "", nil), http.StatusMethodNotAllowed, "patch")
}

func TestPermissionRoutes(t *testing.T) {
	s := newTokenServer(t)
	expect(t, s.master("POST", "/dbs/db/users", `{"id":"alice"}`, nil), http.StatusCreated, "user")
	feed := "/dbs/db/users/alice/permissions"
	w := s.master("POST", feed, `{"id":"p","permissionMode":"read","resource":"dbs/db/colls/c","resourcePartitionKey":["k"]}`, nil)
	expect(t, w, http.StatusCreated, "create")
	p := decode(t, w)
	rpk, _ := p["resourcePartitionKey"].([]any)
	if p["id"] != "p" || p["permissionMode"] != "Read" || p["resource"] != "dbs/db/colls/c" || len(rpk) != 1 || rpk[0] != "k" ||
		!strings.HasSuffix(p["_self"].(string), "/permissions/"+p["_rid"].(string)+"/") || w.Header().Get("Etag") != p["_etag"] {
		t.Fatalf("created %v", p)
	}
	tok := p["_token"].(string)
	for _, tc := range []struct {
		name, body string
		hdr        map[string]string
		code       int
	}{
		{"same id", `{"id":"p","permissionMode":"All","resource":"dbs/db/colls/c2"}`, nil, http.StatusConflict},
		{"same resource and key", `{"id":"q","permissionMode":"All","resource":"dbs/db/colls/c","resourcePartitionKey":"k"}`, nil, http.StatusConflict},
		{"mode none", `{"id":"q","permissionMode":"None","resource":"dbs/db/colls/c"}`, nil, http.StatusBadRequest},
		{"no resource", `{"id":"q","permissionMode":"All"}`, nil, http.StatusBadRequest},
		{"a database", `{"id":"q","permissionMode":"All","resource":"dbs/db"}`, nil, http.StatusBadRequest},
		{"missing container", `{"id":"q","permissionMode":"All","resource":"dbs/db/colls/nope"}`, nil, http.StatusNotFound},
		{"bad key", `{"id":"q","permissionMode":"All","resource":"dbs/db/colls/c","resourcePartitionKey":[1,2]}`, nil, http.StatusBadRequest},
		{"key not JSON", `{"id":"q","permissionMode":"All","resource":"dbs/db/colls/c","resourcePartitionKey":{"a":1}}`, nil, http.StatusBadRequest},
		{"expiry too short", `{"id":"q","permissionMode":"All","resource":"dbs/db/colls/c2"}`, map[string]string{"x-ms-documentdb-expiry-seconds": "9"}, http.StatusBadRequest},
		{"expiry too long", `{"id":"q","permissionMode":"All","resource":"dbs/db/colls/c2"}`, map[string]string{"x-ms-documentdb-expiry-seconds": "18001"}, http.StatusBadRequest},
		{"expiry not a number", `{"id":"q","permissionMode":"All","resource":"dbs/db/colls/c2"}`, map[string]string{"x-ms-documentdb-expiry-seconds": "1h"}, http.StatusBadRequest},
		{"missing user", `{"id":"q","permissionMode":"All","resource":"dbs/db/colls/c2"}`, nil, http.StatusNotFound},
	} {
		path := feed
		if tc.name == "missing user" {
			path = "/dbs/db/users/nobody/permissions"
		}
		expect(t, s.master("POST", path, tc.body, tc.hdr), tc.code, tc.name)
	}
	w = s.master("GET", feed, "", nil)
	if l := decode(t, w); w.Code != 200 || l["_count"] != 1.0 {
		t.Fatalf("the refused permissions were stored: %v", l)
	}

	// Each read issues a new token, for as long as it asks.
	s.advance(time.Second)
	w = s.master("GET", feed+"/p", "", map[string]string{"x-ms-documentdb-expiry-seconds": "18000"})
	expect(t, w, http.StatusOK, "read")
	long := decode(t, w)["_token"].(string)
	if long == tok {
		t.Fatal("a read returned the same token")
	}
	s.advance(2 * time.Hour)
	item := map[string]string{"x-ms-documentdb-partitionkey": `["k"]`}
	expect(t, s.as(tok, "GET", "/dbs/db/colls/c/docs/x", "", item), http.StatusForbidden, "a default token after two hours")
	expect(t, s.as(long, "GET", "/dbs/db/colls/c/docs/x", "", item), http.StatusNotFound, "a five-hour token after two hours")

	w = s.master("PUT", feed+"/p", `{"id":"p2","permissionMode":"All","resource":"dbs/db/colls/c"}`, map[string]string{"If-Match": `"stale"`})
	expect(t, w, http.StatusPreconditionFailed, "stale replace")
	w = s.master("PUT", feed+"/p", `{"id":"p2","permissionMode":"All","resource":"dbs/db/colls/c"}`, nil)
	expect(t, w, http.StatusOK, "replace")
	if r := decode(t, w); r["id"] != "p2" || r["permissionMode"] != "All" || r["_rid"] != p["_rid"] || r["resourcePartitionKey"] != nil {
		t.Fatalf("replaced %v", r)
	}
	expect(t, s.master("POST", feed, `{"id":"p2","permissionMode":"Read","resource":"dbs/db/colls/c"}`, map[string]string{"x-ms-documentdb-is-upsert": "true"}), http.StatusOK, "upsert existing")
	expect(t, s.master("POST", feed, `{"id":"p3","permissionMode":"Read","resource":"dbs/db/colls/c2"}`, map[string]string{"x-ms-documentdb-is-upsert": "true"}), http.StatusCreated, "upsert new")
	w = s.master("GET", feed, "", nil)
	l := decode(t, w)
	list, _ := l["Permissions"].([]any)
	if w.Code != 200 || l["_count"] != 2.0 || len(list) != 2 || list[0].(map[string]any)["id"] != "p2" || list[1].(map[string]any)["_token"] == nil {
		t.Fatalf("list %v", l)
	}
	w = s.master("POST", feed, `{"query":"SELECT p.id FROM p WHERE p.permissionMode = 'Read'"}`,
		map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true"})
	if q := decode(t, w); w.Code != 200 || q["_count"] != 2.0 {
		t.Fatalf("query %d %v", w.Code, q)
	}
	expect(t, s.master("DELETE", feed+"/p2", "", map[string]string{"If-Match": `"stale"`}), http.StatusPreconditionFailed, "stale delete")
	expect(t, s.master("DELETE", feed+"/p2", "", nil), http.StatusNoContent, "delete")
	expect(t, s.master("GET", feed+"/p2", "", nil), http.StatusNotFound, "read deleted")
	expect(t, s.as(long, "GET", "/dbs/db/colls/c/docs/x", "", item), http.StatusUnauthorized, "a token of a deleted permission")
}

// Every request a resource token may make, and the ones it may not, for each kind of token.
func TestResourceTokenScope(t *testing.T) {
	s := newTokenServer(t)
	for _, id := range []string{"k", "other"} {
		expect(t, s.master("POST", "/dbs/db/colls/c/docs", `{"id":"`+id+`","pk":"`+id+`"}`,
			map[string]string{"x-ms-documentdb-partitionkey": `["` + id + `"]`}), http.StatusCreated, "seed "+id)
	}
	expect(t, s.master("POST", "/dbs/db/colls/c/sprocs", `{"id":"touch","body":"function touch(id, pk) { var c = getContext().getCollection(); c.createDocument(c.getSelfLink(), {id: id, pk: pk}, function (err) { if (err) throw err; }); }"}`, nil),
		http.StatusCreated, "procedure")
	tokens := map[string]string{
		"all":     s.permission("u", "all", `{"id":"all","permissionMode":"All","resource":"dbs/db/colls/c"}`, nil),
		"read":    s.permission("v", "read", `{"id":"read","permissionMode":"Read","resource":"dbs/db/colls/c"}`, nil),
		"allKey":  s.permission("w", "allKey", `{"id":"allKey","permissionMode":"All","resource":"dbs/db/colls/c","resourcePartitionKey":["k"]}`, nil),
		"readKey": s.permission("x", "readKey", `{"id":"readKey","permissionMode":"Read","resource":"dbs/db/colls/c","resourcePartitionKey":["k"]}`, nil),
	}
	k := map[string]string{"x-ms-documentdb-partitionkey": `["k"]`}
	other := map[string]string{"x-ms-documentdb-partitionkey": `["other"]`}
	with := func(a map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for key, v := range a {
			out[key] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	query := map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true", "x-ms-documentdb-query-enablecrosspartition": "true"}
	batch := map[string]string{"x-ms-cosmos-is-batch-request": "true", "x-ms-cosmos-batch-atomic": "true"}
	const ok, no = 0, http.StatusForbidden
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      map[string]string
		// want is the status for tokens all, read, allKey and readKey: 0 for success, no for
		// 403, or any other status.
		want [4]int
	}{
		{"read the account", "GET", "/", "", nil, [4]int{ok, ok, ok, ok}},
		{"list databases", "GET", "/dbs", "", nil, [4]int{no, no, no, no}},
		{"create a database", "POST", "/dbs", `{"id":"x"}`, nil, [4]int{no, no, no, no}},
		{"read the database", "GET", "/dbs/db", "", nil, [4]int{no, no, no, no}},
		{"list containers", "GET", "/dbs/db/colls", "", nil, [4]int{no, no, no, no}},
		{"create a container", "POST", "/dbs/db/colls", `{"id":"x","partitionKey":{"paths":["/pk"]}}`, nil, [4]int{no, no, no, no}},
		{"list users", "GET", "/dbs/db/users", "", nil, [4]int{no, no, no, no}},
		{"create a user", "POST", "/dbs/db/users", `{"id":"evil"}`, nil, [4]int{no, no, no, no}},
		{"read its own permission", "GET", "/dbs/db/users/u/permissions/all", "", nil, [4]int{no, no, no, no}},
		{"list offers", "GET", "/offers", "", nil, [4]int{no, no, no, no}},
		{"read the container", "GET", "/dbs/db/colls/c", "", nil, [4]int{ok, ok, ok, ok}},
		{"replace the container", "PUT", "/dbs/db/colls/c", `{"id":"c","partitionKey":{"paths":["/pk"],"version":2}}`, nil, [4]int{no, no, no, no}},
		{"delete the container", "DELETE", "/dbs/db/colls/c", "", nil, [4]int{no, no, no, no}},
		{"read its ranges", "GET", "/dbs/db/colls/c/pkranges", "", nil, [4]int{ok, ok, ok, ok}},
		{"read another container", "GET", "/dbs/db/colls/c2", "", nil, [4]int{no, no, no, no}},
		{"read in another container", "GET", "/dbs/db/colls/c2/docs/k", "", k, [4]int{no, no, no, no}},
		{"read in a missing container", "GET", "/dbs/db/colls/nope/docs/k", "", k, [4]int{no, no, no, no}},
		{"read an item", "GET", "/dbs/db/colls/c/docs/k", "", k, [4]int{ok, ok, ok, ok}},
		{"read an item of another key", "GET", "/dbs/db/colls/c/docs/other", "", other, [4]int{ok, ok, no, no}},
		{"read an item naming no key", "GET", "/dbs/db/colls/c/docs/k", "", nil, [4]int{400, 400, no, no}},
		{"create an item", "POST", "/dbs/db/colls/c/docs", `{"id":"n1-$","pk":"k"}`, k, [4]int{ok, no, ok, no}},
		{"create an item of another key", "POST", "/dbs/db/colls/c/docs", `{"id":"n2-$","pk":"other"}`, other, [4]int{ok, no, no, no}},
		{"create an item whose body has another key", "POST", "/dbs/db/colls/c/docs", `{"id":"n3-$","pk":"other"}`, k, [4]int{400, no, 400, no}},
		{"upsert an item", "POST", "/dbs/db/colls/c/docs", `{"id":"k","pk":"k","v":1}`, with(k, "x-ms-documentdb-is-upsert", "true"), [4]int{ok, no, ok, no}},
		{"replace an item", "PUT", "/dbs/db/colls/c/docs/k", `{"id":"k","pk":"k","v":2}`, k, [4]int{ok, no, ok, no}},
		{"patch an item", "PATCH", "/dbs/db/colls/c/docs/k", `[{"op":"set","path":"/v","value":3}]`, k, [4]int{ok, no, ok, no}},
		{"patch the key of an item", "PATCH", "/dbs/db/colls/c/docs/k", `[{"op":"set","path":"/pk","value":"other"}]`, k, [4]int{400, no, 400, no}},
		{"patch an item of another key", "PATCH", "/dbs/db/colls/c/docs/other", `[{"op":"set","path":"/v","value":3}]`, other, [4]int{ok, no, no, no}},
		{"query one key", "POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c"}`, with(query, "x-ms-documentdb-partitionkey", `["k"]`), [4]int{ok, ok, ok, ok}},
		{"query another key", "POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c"}`, with(query, "x-ms-documentdb-partitionkey", `["other"]`), [4]int{ok, ok, no, no}},
		{"query across partitions", "POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c"}`, query, [4]int{ok, ok, no, no}},
		{"query a range", "POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c"}`, with(query, "x-ms-documentdb-partitionkeyrangeid", "0"), [4]int{ok, ok, no, no}},
		{"query plan", "POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c"}`, with(query, "x-ms-cosmos-is-query-plan-request", "True"), [4]int{ok, ok, ok, ok}},
		{"read feed of one key", "GET", "/dbs/db/colls/c/docs", "", k, [4]int{ok, ok, ok, ok}},
		{"read feed of everything", "GET", "/dbs/db/colls/c/docs", "", nil, [4]int{ok, ok, no, no}},
		{"change feed of one key", "GET", "/dbs/db/colls/c/docs", "", with(k, "A-IM", "Incremental Feed"), [4]int{ok, ok, ok, ok}},
		{"change feed of everything", "GET", "/dbs/db/colls/c/docs", "", map[string]string{"A-IM": "Incremental Feed"}, [4]int{ok, ok, no, no}},
		{"batch on one key", "POST", "/dbs/db/colls/c/docs", `[{"operationType":"Read","id":"k"}]`, with(batch, "x-ms-documentdb-partitionkey", `["k"]`), [4]int{ok, no, ok, no}},
		{"batch on another key", "POST", "/dbs/db/colls/c/docs", `[{"operationType":"Read","id":"other"}]`, with(batch, "x-ms-documentdb-partitionkey", `["other"]`), [4]int{ok, no, no, no}},
		{"bulk", "POST", "/dbs/db/colls/c/docs", `[{"operationType":"Read","id":"other","partitionKey":"[\"other\"]"}]`,
			map[string]string{"x-ms-cosmos-is-batch-request": "true", "x-ms-documentdb-partitionkey": `["k"]`}, [4]int{ok, no, no, no}},
		{"list procedures", "GET", "/dbs/db/colls/c/sprocs", "", nil, [4]int{ok, ok, ok, ok}},
		{"read a procedure", "GET", "/dbs/db/colls/c/sprocs/touch", "", nil, [4]int{ok, ok, ok, ok}},
		{"create a procedure", "POST", "/dbs/db/colls/c/sprocs", `{"id":"p2","body":"function p() {}"}`, nil, [4]int{no, no, no, no}},
		{"replace a procedure", "PUT", "/dbs/db/colls/c/sprocs/touch", `{"id":"touch","body":"function p() {}"}`, nil, [4]int{no, no, no, no}},
		{"delete a procedure", "DELETE", "/dbs/db/colls/c/sprocs/touch", "", nil, [4]int{no, no, no, no}},
		{"run a procedure", "POST", "/dbs/db/colls/c/sprocs/touch", `["n4-$","k"]`, k, [4]int{ok, no, ok, no}},
		{"run a procedure on another key", "POST", "/dbs/db/colls/c/sprocs/touch", `["n5-$","other"]`, other, [4]int{ok, no, no, no}},
		{"delete an item", "DELETE", "/dbs/db/colls/c/docs/n1-$", "", k, [4]int{ok, no, ok, no}},
	} {
		for i, name := range []string{"all", "read", "allKey", "readKey"} {
			// $ in a path or body is the token's name, so that each creates items of its own.
			w := s.as(tokens[name], tc.method, strings.ReplaceAll(tc.path, "$", name), strings.ReplaceAll(tc.body, "$", name), tc.hdr)
			got := w.Code
			if got < 300 || got == http.StatusNotModified {
				got = ok
			}
			if got != tc.want[i] {
				t.Errorf("%s with the %s token: %d, want %d: %s", tc.name, name, w.Code, tc.want[i], w.Body)
			}
			if got == no && !strings.Contains(w.Body.String(), "Insufficient permissions") {
				t.Errorf("%s with the %s token: 403 body %s", tc.name, name, w.Body)
			}
		}
	}
	// What the refused requests would have written is not there; what the others wrote is.
	for _, id := range []string{"n2-read", "n2-allKey", "n2-readKey", "n5-read", "n5-allKey", "n5-readKey"} {
		if w := s.master("GET", "/dbs/db/colls/c/docs/"+id, "", other); w.Code != http.StatusNotFound {
			t.Errorf("%s was written: %d", id, w.Code)
		}
	}
	for _, id := range []string{"n4-all", "n4-allKey"} {
		if w := s.master("GET", "/dbs/db/colls/c/docs/"+id, "", k); w.Code != http.StatusOK {
			t.Errorf("%s was not written: %d", id, w.Code)
		}
	}
	if w := s.master("GET", "/dbs/db/users/evil", "", nil); w.Code != http.StatusNotFound {
		t.Errorf("the user was created: %d", w.Code)
	}
}

// A hierarchical key's permission may name a prefix: it grants every key under it.
func TestResourceTokenKeyPrefix(t *testing.T) {
	s := newTokenServer(t)
	tok := s.permission("u", "p", `{"id":"p","permissionMode":"All","resource":"dbs/db/colls/m","resourcePartitionKey":["x"]}`, nil)
	for _, tc := range []struct {
		a, b string
		code int
	}{
		{"x", "1", http.StatusCreated},
		{"x", "2", http.StatusCreated},
		{"y", "1", http.StatusForbidden},
	} {
		expect(t, s.as(tok, "POST", "/dbs/db/colls/m/docs", `{"id":"i","a":"`+tc.a+`","b":"`+tc.b+`"}`,
			map[string]string{"x-ms-documentdb-partitionkey": `["` + tc.a + `","` + tc.b + `"]`}), tc.code, "create under "+tc.a+"/"+tc.b)
	}
	query := map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true"}
	query["x-ms-documentdb-partitionkey"] = `["x"]`
	w := s.as(tok, "POST", "/dbs/db/colls/m/docs", `{"query":"SELECT * FROM c"}`, query)
	if l := decode(t, w); w.Code != 200 || l["_count"] != 2.0 {
		t.Fatalf("query of the prefix: %d %v", w.Code, l)
	}
	query["x-ms-documentdb-partitionkey"] = `["y"]`
	expect(t, s.as(tok, "POST", "/dbs/db/colls/m/docs", `{"query":"SELECT * FROM c"}`, query), http.StatusForbidden, "query of another prefix")

	// A permission for a full key does not grant its prefix.
	full := s.permission("u", "q", `{"id":"q","permissionMode":"Read","resource":"dbs/db/colls/m","resourcePartitionKey":["x","1"]}`, nil)
	query["x-ms-documentdb-partitionkey"] = `["x"]`
	expect(t, s.as(full, "POST", "/dbs/db/colls/m/docs", `{"query":"SELECT * FROM c"}`, query), http.StatusForbidden, "query of the prefix with a full key's token")
	query["x-ms-documentdb-partitionkey"] = `["x","1"]`
	expect(t, s.as(full, "POST", "/dbs/db/colls/m/docs", `{"query":"SELECT * FROM c"}`, query), http.StatusOK, "query of the full key")
}

// A token is honoured only as issued, by this key, before it expires, while its permission
// grants what it did.
func TestResourceTokenValidity(t *testing.T) {
	s := newTokenServer(t)
	k := map[string]string{"x-ms-documentdb-partitionkey": `["k"]`}
	expect(t, s.master("POST", "/dbs/db/colls/c/docs", `{"id":"k","pk":"k"}`, k), http.StatusCreated, "seed")
	tok := s.permission("u", "p", `{"id":"p","permissionMode":"All","resource":"dbs/db/colls/c","resourcePartitionKey":["k"]}`,
		map[string]string{"x-ms-documentdb-expiry-seconds": "60"})
	read := func(tok string) int { return s.as(tok, "GET", "/dbs/db/colls/c/docs/k", "", k).Code }
	if got := read(tok); got != http.StatusOK {
		t.Fatalf("the token: %d", got)
	}
	if w := s.send(tok, "GET", "/dbs/db/colls/c/docs/k", "", k); w.Code != http.StatusOK {
		t.Fatalf("the token not URL-encoded: %d %s", w.Code, w.Body)
	}
	sig := strings.TrimPrefix(tok, "type=resource&ver=1.0&sig=")
	claims, mac, _ := strings.Cut(sig, ".")
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	other, err := NewHandler(s.e, Options{Key: "b3RoZXIga2V5", Now: s.clock})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.e.Permission("db", "u", "p")
	for _, bad := range []struct{ name, tok string }{
		{"a claim changed", "type=resource&ver=1.0&sig=" + flip(claims, 30) + "." + mac},
		{"the mode changed", "type=resource&ver=1.0&sig=" + flip(claims, 34) + "." + mac},
		{"the mac changed", "type=resource&ver=1.0&sig=" + claims + "." + flip(mac, 5)},
		{"the mac cut", "type=resource&ver=1.0&sig=" + claims + "." + mac[:20]},
		{"no mac", "type=resource&ver=1.0&sig=" + claims},
		{"a long mac", "type=resource&ver=1.0&sig=" + claims + "." + mac + mac},
		{"not base64", "type=resource&ver=1.0&sig=" + claims + "!." + mac},
		{"empty", "type=resource&ver=1.0&sig="},
		{"issued with another key", other.keys.tokens.issue(p.Grant, s.clock(), time.Hour)},
	} {
		if got := read(bad.tok); got != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", bad.name, got)
		}
	}

	// A token issued for more than its permission grants (which only the key could make)
	// is refused too: the claims must be the permission's.
	wider := p.Grant
	wider.PartitionKey = nil
	if got := read(s.h.keys.tokens.issue(wider, s.clock(), time.Hour)); got != http.StatusUnauthorized {
		t.Errorf("a token wider than its permission: %d", got)
	}

	s.advance(59 * time.Second)
	if got := read(tok); got != http.StatusOK {
		t.Fatalf("the token a second before it expires: %d", got)
	}
	s.advance(time.Second)
	w := s.as(tok, "GET", "/dbs/db/colls/c/docs/k", "", k)
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "not valid at the current time") {
		t.Fatalf("an expired token: %d %s", w.Code, w.Body)
	}

	// Replacing the permission with the same grant keeps its tokens; narrowing it does not.
	fresh := s.permission("u2", "p", `{"id":"p","permissionMode":"All","resource":"dbs/db/colls/c","resourcePartitionKey":["k"]}`, nil)
	expect(t, s.master("PUT", "/dbs/db/users/u2/permissions/p", `{"id":"p","permissionMode":"All","resource":"dbs/db/colls/c","resourcePartitionKey":["k"]}`, nil), http.StatusOK, "same replace")
	if got := read(fresh); got != http.StatusOK {
		t.Fatalf("after a replace that grants the same: %d", got)
	}
	expect(t, s.master("PUT", "/dbs/db/users/u2/permissions/p", `{"id":"p","permissionMode":"Read","resource":"dbs/db/colls/c","resourcePartitionKey":["k"]}`, nil), http.StatusOK, "narrowing replace")
	if got := read(fresh); got != http.StatusUnauthorized {
		t.Fatalf("after a narrowing replace: %d", got)
	}

	// Deleting the user revokes its permissions' tokens; so does deleting the container's
	// database, and a container created again under the same id is not granted.
	third := s.permission("u3", "p", `{"id":"p","permissionMode":"All","resource":"dbs/db/colls/c2"}`, nil)
	fourth := s.permission("u4", "p", `{"id":"p","permissionMode":"All","resource":"dbs/db/colls/c2"}`, nil)
	c2 := map[string]string{"x-ms-documentdb-partitionkey": `["k"]`}
	expect(t, s.as(third, "GET", "/dbs/db/colls/c2/docs/k", "", c2), http.StatusNotFound, "third token")
	expect(t, s.master("DELETE", "/dbs/db/users/u3", "", nil), http.StatusNoContent, "delete the user")
	expect(t, s.as(third, "GET", "/dbs/db/colls/c2/docs/k", "", c2), http.StatusUnauthorized, "a token of a deleted user")
	expect(t, s.master("DELETE", "/dbs/db/colls/c2", "", nil), http.StatusNoContent, "delete the container")
	expect(t, s.master("POST", "/dbs/db/colls", `{"id":"c2","partitionKey":{"paths":["/pk"],"version":2}}`, nil), http.StatusCreated, "create it again")
	expect(t, s.as(fourth, "GET", "/dbs/db/colls/c2/docs/k", "", c2), http.StatusForbidden, "a token of the old container")
	expect(t, s.master("DELETE", "/dbs/db", "", nil), http.StatusNoContent, "delete the database")
	expect(t, s.as(fourth, "GET", "/", "", nil), http.StatusUnauthorized, "a token of a deleted database")
}

// The master key still does everything, and a keyring without an engine refuses tokens.
func TestResourceTokensLeaveTheMasterKeyAlone(t *testing.T) {
	s := newTokenServer(t)
	tok := s.permission("u", "p", `{"id":"p","permissionMode":"All","resource":"dbs/db/colls/c"}`, nil)
	expect(t, s.master("GET", "/dbs/db/colls/c2", "", nil), http.StatusOK, "master key")
	k, now, _, res, _ := authFixture(t)
	if err := k.authenticate(authRequest(tok, now.Format(http.TimeFormat)), res, now); statusOf(err) != http.StatusUnauthorized {
		t.Fatalf("a keyring without tokens: %v", err)
	}
}

func TestPartitionKeyJSONRoundTrips(t *testing.T) {
	for _, h := range []string{`["k"]`, `[1.5,-0,1e+300]`, `[true,false,null,{}]`, `["a\"b\\c<>&\u2028é"]`, `[]`} {
		k, err := parsePartitionKey(h)
		if err != nil {
			t.Fatal(err)
		}
		back, err := parsePartitionKey(string(partitionKeyJSON(k)))
		if err != nil || len(back) != len(k) || !back.HasPrefix(k) {
			t.Errorf("%s: rendered %s, parsed back %v %v", h, partitionKeyJSON(k), back, err)
		}
	}
}
