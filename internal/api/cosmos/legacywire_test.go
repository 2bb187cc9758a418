package cosmos

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The wire forms of the legacy clients (the DocumentDB-era Node SDK 1.x, the Go client
// github.com/a8m/documentdb): old API versions, which read session tokens in the simple form
// only, and _self links kept after what they name was deleted.

// withVersion adds x-ms-version v to hdr (a copy).
func withVersion(hdr map[string]string, v string) map[string]string {
	out := map[string]string{"x-ms-version": v}
	for k, x := range hdr {
		out[k] = x
	}
	return out
}

// Every response that carries a session token carries it in the form the request's API
// version reads: simple up to 2018-06-18, vector after; and both forms are read back at any
// version.
func TestSessionTokensByAPIVersion(t *testing.T) {
	s := newFaultServer(t)
	simple := func(tok string) bool { return tok != "" && !strings.Contains(tok, "#") && validSessionTokens(tok) }
	vector := func(tok string) bool { return strings.Contains(tok, ":-1#") && validSessionTokens(tok) }
	query := map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true",
		"x-ms-documentdb-query-enablecrosspartition": "true"}
	for _, tc := range []struct {
		version string
		form    func(string) bool
	}{{"2015-08-06", simple}, {"2017-02-22", simple}, {"2017-11-15", simple}, {"2018-06-18", simple},
		{"2018-08-31", vector}, {"2020-07-15", vector}, {"", vector}} {
		v := func(hdr map[string]string) map[string]string {
			if tc.version == "" {
				return hdr
			}
			return withVersion(hdr, tc.version)
		}
		id := "item-" + tc.version
		for _, r := range []struct {
			what, method, path, body string
			hdr                      map[string]string
			code                     int
		}{
			{"create", "POST", "/dbs/db/colls/c/docs", `{"id":"` + id + `","pk":"a"}`, pk("a"), http.StatusCreated},
			{"read", "GET", "/dbs/db/colls/c/docs/" + id, "", pk("a"), http.StatusOK},
			{"replace", "PUT", "/dbs/db/colls/c/docs/" + id, `{"id":"` + id + `","pk":"a","n":1}`, pk("a"), http.StatusOK},
			{"query", "POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c"}`, query, http.StatusOK},
			{"read feed", "GET", "/dbs/db/colls/c/docs", "", nil, http.StatusOK},
			{"change feed", "GET", "/dbs/db/colls/c/docs", "", map[string]string{"A-IM": "Incremental Feed", "x-ms-documentdb-partitionkeyrangeid": "0"}, http.StatusOK},
			{"read of a missing item", "GET", "/dbs/db/colls/c/docs/missing", "", pk("a"), http.StatusNotFound},
			{"delete", "DELETE", "/dbs/db/colls/c/docs/" + id, "", pk("a"), http.StatusNoContent},
		} {
			w := s.master(r.method, r.path, r.body, v(r.hdr))
			if r.what == "change feed" && w.Code == http.StatusNotModified {
				w.Code = http.StatusOK // the range may hold nothing yet
			}
			expect(t, w, r.code, tc.version+" "+r.what)
			tok := w.Header().Get("x-ms-session-token")
			for _, one := range strings.Split(tok, ",") {
				if !tc.form(one) {
					t.Errorf("x-ms-version %q, %s: session token %q is not of its form", tc.version, r.what, tok)
				}
			}
		}
		// Tokens come back in either form at any version: the simple form the legacy SDKs
		// keep, the vector form, and a mix.
		s.master("POST", "/dbs/db/colls/c/docs", `{"id":"`+id+`","pk":"a"}`, pk("a"))
		for _, tok := range []string{"0:1", "1:1", "0:1,1:2", "0:-1#1", "0:1,1:-1#2"} {
			hdr := v(pk("a"))
			hdr["x-ms-session-token"] = tok
			hdr["x-ms-consistency-level"] = "Session"
			expect(t, s.master("GET", "/dbs/db/colls/c/docs/"+id, "", hdr), http.StatusOK, tc.version+" read with session token "+tok)
		}
	}
}

// A _self link of a deleted resource answers 404, signed as the legacy clients sign it (over
// the lower-cased resource id): not 401, which the path read by name would give. Signed over
// neither link, it is still refused.
func TestDeletedResourceLinks(t *testing.T) {
	s := newFaultServer(t)
	signed := func(method, path, typ, link string, hdr map[string]string) *httptest.ResponseRecorder {
		return s.send(s.key.Authorization(method, typ, link, s.clock().Format(http.TimeFormat)), method, path, "", hdr)
	}
	expect(t, s.master("POST", "/dbs", `{"id":"gone"}`, nil), http.StatusCreated, "create database")
	expect(t, s.master("POST", "/dbs/gone/colls", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`, nil), http.StatusCreated, "create container")
	w := s.master("POST", "/dbs/gone/colls/c/docs", `{"id":"a","pk":"a"}`, pk("a"))
	expect(t, w, http.StatusCreated, "create item")
	var doc struct {
		RID  string `json:"_rid"`
		Self string `json:"_self"`
	}
	json.Unmarshal(w.Body.Bytes(), &doc)
	parts := strings.Split(strings.Trim(doc.Self, "/"), "/")
	dbRID, collRID := parts[1], parts[3]
	dbLink, collLink := "/dbs/"+dbRID+"/", "/dbs/"+dbRID+"/colls/"+collRID+"/"
	expect(t, signed("GET", dbLink, "dbs", strings.ToLower(dbRID), nil), http.StatusOK, "the live database by its link")

	// The container goes first: its links under the live database answer 404 with 1003 for
	// what it owned.
	expect(t, s.master("DELETE", "/dbs/gone/colls/c", "", nil), http.StatusNoContent, "delete container")
	expectNotFound(t, signed("GET", collLink, "colls", strings.ToLower(collRID), nil), 0, "the deleted container's link")
	expectNotFound(t, signed("GET", "/"+doc.Self, "docs", strings.ToLower(doc.RID), pk("a")), subOwnerResourceNotFound, "an item link under the deleted container")

	expect(t, s.master("DELETE", "/dbs/gone", "", nil), http.StatusNoContent, "delete database")
	expectNotFound(t, signed("GET", dbLink, "dbs", strings.ToLower(dbRID), nil), 0, "the deleted database's link")
	expectNotFound(t, signed("GET", strings.TrimSuffix(dbLink, "/"), "dbs", strings.ToLower(dbRID), nil), 0, "the deleted database's link without its slash")
	expectNotFound(t, signed("DELETE", dbLink, "dbs", strings.ToLower(dbRID), nil), 0, "a delete of the deleted database's link")
	expectNotFound(t, signed("GET", collLink, "colls", strings.ToLower(collRID), nil), subOwnerResourceNotFound, "a container link under the deleted database")
	expectNotFound(t, signed("GET", collLink+"docs", "docs", strings.ToLower(collRID), nil), subOwnerResourceNotFound, "a feed under the deleted database")
	expectNotFound(t, signed("GET", "/"+doc.Self, "docs", strings.ToLower(doc.RID), pk("a")), subOwnerResourceNotFound, "an item link under the deleted database")
	// Read by name, the same path is a database named "AAAA..." that does not exist: 404 too.
	expectNotFound(t, s.master("GET", dbLink, "", nil), 0, "the same path signed by name")
	expect(t, signed("GET", dbLink, "dbs", "dbs/"+strings.ToLower(dbRID), nil), http.StatusUnauthorized, "signed over neither link")

	// A database named like a resource id is still read by name.
	name := "ZZZZZQ==" // four bytes of base64 that are no database's resource id
	expect(t, s.master("POST", "/dbs", `{"id":"`+name+`"}`, nil), http.StatusCreated, "create a database named like a resource id")
	expect(t, s.master("GET", "/dbs/"+name, "", nil), http.StatusOK, "read it by name")
	expect(t, signed("GET", "/dbs/"+name, "dbs", strings.ToLower(name), nil), http.StatusUnauthorized, "signed over its name as a resource id")
}

// expectNotFound checks a 404 and its substatus (0: none).
func expectNotFound(t *testing.T, w *httptest.ResponseRecorder, substatus int, what string) {
	t.Helper()
	expect(t, w, http.StatusNotFound, what)
	got := w.Header().Get("x-ms-substatus")
	want := ""
	if substatus != 0 {
		want = itoa(substatus)
	}
	if got != want {
		t.Fatalf("%s: substatus %q, want %q: %s", what, got, want, w.Body)
	}
	var body struct{ Code, Message string }
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Code != "NotFound" || body.Message == "" {
		t.Fatalf("%s: body %s is not the service's shape", what, w.Body)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// Every 404 whose cause is a missing database, container or user that owns what the request
// addresses carries substatus 1003, whatever the operation; a missing resource under owners
// that exist carries none, and a missing item carries its partition's session token.
func TestOwnerResourceNotFound(t *testing.T) {
	s := newFaultServer(t)
	query := map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true",
		"x-ms-documentdb-query-enablecrosspartition": "true"}
	batch := map[string]string{"x-ms-cosmos-is-batch-request": "true", "x-ms-cosmos-batch-atomic": "true",
		"x-ms-documentdb-partitionkey": `["a"]`}
	feed := map[string]string{"A-IM": "Incremental Feed", "x-ms-documentdb-partitionkeyrangeid": "0"}
	qbody := `{"query":"SELECT * FROM c"}`
	for _, owner := range []struct{ what, prefix string }{
		{"missing container", "/dbs/db/colls/nope"},
		{"missing database", "/dbs/nodb/colls/c"},
	} {
		p := owner.prefix
		for _, r := range []struct {
			what, method, path, body string
			hdr                      map[string]string
		}{
			{"item read", "GET", p + "/docs/a", "", pk("a")},
			{"item create", "POST", p + "/docs", `{"id":"a","pk":"a"}`, pk("a")},
			{"item upsert", "POST", p + "/docs", `{"id":"a","pk":"a"}`, map[string]string{"x-ms-documentdb-partitionkey": `["a"]`, "x-ms-documentdb-is-upsert": "true"}},
			{"item replace", "PUT", p + "/docs/a", `{"id":"a","pk":"a"}`, pk("a")},
			{"item patch", "PATCH", p + "/docs/a", `{"operations":[{"op":"set","path":"/n","value":1}]}`, pk("a")},
			{"item delete", "DELETE", p + "/docs/a", "", pk("a")},
			{"query", "POST", p + "/docs", qbody, query},
			{"read feed", "GET", p + "/docs", "", nil},
			{"change feed", "GET", p + "/docs", "", feed},
			{"batch", "POST", p + "/docs", `[{"operationType":"Read","id":"a"}]`, batch},
			{"pkranges", "GET", p + "/pkranges", "", nil},
			{"list sprocs", "GET", p + "/sprocs", "", nil},
			{"create sproc", "POST", p + "/sprocs", `{"id":"s","body":"function(){}"}`, nil},
			{"read sproc", "GET", p + "/sprocs/s", "", nil},
			{"run sproc", "POST", p + "/sprocs/s", `[]`, pk("a")},
			{"query sprocs", "POST", p + "/sprocs", qbody, query},
			{"list triggers", "GET", p + "/triggers", "", nil},
			{"read udf", "GET", p + "/udfs/u", "", nil},
		} {
			w := s.master(r.method, r.path, r.body, r.hdr)
			expectNotFound(t, w, subOwnerResourceNotFound, owner.what+": "+r.what)
			if tok := w.Header().Get("x-ms-session-token"); tok != "" {
				t.Errorf("%s: %s: a session token %q where no partition is known", owner.what, r.what, tok)
			}
		}
	}
	// Under a missing database: its containers and users.
	for _, r := range []struct{ what, method, path, body string }{
		{"read container", "GET", "/dbs/nodb/colls/c", ""},
		{"replace container", "PUT", "/dbs/nodb/colls/c", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"}}`},
		{"delete container", "DELETE", "/dbs/nodb/colls/c", ""},
		{"list containers", "GET", "/dbs/nodb/colls", ""},
		{"create container", "POST", "/dbs/nodb/colls", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"}}`},
		{"query containers", "POST", "/dbs/nodb/colls", qbody},
		{"list users", "GET", "/dbs/nodb/users", ""},
		{"read user", "GET", "/dbs/nodb/users/u", ""},
		{"list permissions", "GET", "/dbs/nodb/users/u/permissions", ""},
		{"read permission of a missing user", "GET", "/dbs/db/users/nouser/permissions/p", ""},
	} {
		var hdr map[string]string
		if strings.HasPrefix(r.body, `{"query"`) {
			hdr = query
		}
		expectNotFound(t, s.master(r.method, r.path, r.body, hdr), subOwnerResourceNotFound, r.what)
	}
	// What is missing is the resource itself, under owners that exist: no substatus.
	for _, r := range []struct{ what, method, path string }{
		{"read a missing database", "GET", "/dbs/nodb"},
		{"delete a missing database", "DELETE", "/dbs/nodb"},
		{"read a missing container", "GET", "/dbs/db/colls/nope"},
		{"read a missing sproc", "GET", "/dbs/db/colls/c/sprocs/nope"},
		{"read a missing user", "GET", "/dbs/db/users/nope"},
		{"read a missing offer", "GET", "/offers/AAAAAA==/"},
	} {
		expectNotFound(t, s.master(r.method, r.path, "", nil), 0, r.what)
	}
	// A missing item: its partition's session token, which the SDKs merge.
	expect(t, s.master("POST", "/dbs/db/colls/c/docs", `{"id":"x","pk":"a"}`, pk("a")), http.StatusCreated, "create")
	for _, method := range []string{"GET", "DELETE", "PUT"} {
		body := ""
		if method == "PUT" {
			body = `{"id":"nope","pk":"a"}`
		}
		w := s.master(method, "/dbs/db/colls/c/docs/nope", body, pk("a"))
		expectNotFound(t, w, 0, method+" a missing item")
		tok := w.Header().Get("x-ms-session-token")
		if id, lsn, ok := parseSessionToken(tok); !ok || lsn == 0 || id == anyRange {
			t.Fatalf("%s a missing item: session token %q", method, tok)
		}
		w = s.master(method, "/dbs/db/colls/c/docs/nope", body, withVersion(pk("a"), "2017-11-15"))
		if tok := w.Header().Get("x-ms-session-token"); strings.Contains(tok, "#") || !validSessionTokens(tok) {
			t.Fatalf("%s a missing item at 2017-11-15: session token %q", method, tok)
		}
	}
}
