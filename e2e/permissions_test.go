package e2e

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"
)

// Users, permissions and resource tokens over raw REST against a real server: tokens reach
// what their permission grants and nothing else, survive a restart (they are checked with the
// account key and the stored permission), stop working when their permission goes, and
// expire.
func TestResourceTokens(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, false)
	master := rawClient{s: s, key: emulatorKey, now: time.Now}
	must := func(want int, method, path, body string, hdr map[string]string) map[string]any {
		t.Helper()
		code, _, b := master.do(t, method, path, []byte(body), hdr)
		if code != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, b)
		}
		var m map[string]any
		json.Unmarshal(b, &m)
		return m
	}
	pk := func(v string) map[string]string {
		return map[string]string{"x-ms-documentdb-partitionkey": `["` + v + `"]`}
	}
	must(201, "POST", "/dbs", `{"id":"db"}`, nil)
	must(201, "POST", "/dbs/db/colls", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`, nil)
	must(201, "POST", "/dbs/db/colls", `{"id":"other","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`, nil)
	for _, k := range []string{"a", "b"} {
		must(201, "POST", "/dbs/db/colls/c/docs", `{"id":"`+k+`","pk":"`+k+`"}`, pk(k))
	}
	must(201, "POST", "/dbs/db/users", `{"id":"alice"}`, nil)
	tokenOf := func(m map[string]any) string {
		t.Helper()
		tok, ok := m["_token"].(string)
		if !ok {
			t.Fatalf("no _token in %v", m)
		}
		return tok
	}
	whole := tokenOf(must(201, "POST", "/dbs/db/users/alice/permissions", `{"id":"whole","permissionMode":"All","resource":"dbs/db/colls/c"}`, nil))
	onlyA := tokenOf(must(201, "POST", "/dbs/db/users/alice/permissions",
		`{"id":"onlyA","permissionMode":"Read","resource":"dbs/db/colls/c","resourcePartitionKey":["a"]}`, nil))
	issued := time.Now()
	short := tokenOf(must(200, "GET", "/dbs/db/users/alice/permissions/onlyA", "", map[string]string{"x-ms-documentdb-expiry-seconds": "10"}))

	// try sends a request with a token in place of a signature, URL-encoded as the SDKs send
	// it.
	try := func(tok string, want int, method, path, body string, hdr map[string]string) {
		t.Helper()
		h := map[string]string{"Authorization": url.QueryEscape(tok)}
		for k, v := range hdr {
			h[k] = v
		}
		code, _, b := rawClient{s: s, now: time.Now}.do(t, method, path, []byte(body), h)
		if code != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, b)
		}
		if code >= 400 {
			cosmosError(t, b)
		}
	}
	query := func(k string) map[string]string {
		h := map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true", "x-ms-documentdb-query-enablecrosspartition": "true"}
		if k != "" {
			h["x-ms-documentdb-partitionkey"] = `["` + k + `"]`
		}
		return h
	}
	check := func() {
		t.Helper()
		try(whole, 200, "GET", "/", "", nil)
		try(whole, 200, "GET", "/dbs/db/colls/c/docs/b", "", pk("b"))
		try(whole, 201, "POST", "/dbs/db/colls/c/docs", `{"id":"w`+time.Now().Format("150405.000000")+`","pk":"b"}`, pk("b"))
		try(whole, 200, "POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c"}`, query(""))
		try(whole, 403, "GET", "/dbs/db/colls/other", "", nil)
		try(whole, 403, "POST", "/dbs/db/colls", `{"id":"x","partitionKey":{"paths":["/pk"]}}`, nil)
		try(whole, 403, "POST", "/dbs/db/users", `{"id":"mallory"}`, nil)
		try(onlyA, 200, "GET", "/dbs/db/colls/c/docs/a", "", pk("a"))
		try(onlyA, 200, "POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c"}`, query("a"))
		try(onlyA, 403, "GET", "/dbs/db/colls/c/docs/b", "", pk("b"))
		try(onlyA, 403, "POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c"}`, query(""))
		try(onlyA, 403, "POST", "/dbs/db/colls/c/docs", `{"id":"x","pk":"a"}`, pk("a"))
		try(onlyA, 403, "DELETE", "/dbs/db/colls/c/docs/a", "", pk("a"))
		try("type=resource&ver=1.0&sig=forged.AAAA", 401, "GET", "/dbs/db/colls/c/docs/a", "", pk("a"))
	}
	check()

	// The catalog and the key survive a restart, and so do the tokens.
	s.stop(t)
	s = startServerIn(t, dir, false)
	master.s = s
	check()
	if l := must(200, "GET", "/dbs/db/users/alice/permissions", "", nil); l["_count"] != 2.0 {
		t.Fatalf("permissions after a restart: %v", l)
	}

	// Deleting a permission revokes its tokens; the user's others still work.
	must(204, "DELETE", "/dbs/db/users/alice/permissions/whole", "", nil)
	try(whole, 401, "GET", "/dbs/db/colls/c/docs/b", "", pk("b"))
	try(onlyA, 200, "GET", "/dbs/db/colls/c/docs/a", "", pk("a"))

	// The ten-second token expires (its permission still exists).
	time.Sleep(time.Until(issued.Add(11 * time.Second)))
	try(short, 403, "GET", "/dbs/db/colls/c/docs/a", "", pk("a"))
	try(onlyA, 200, "GET", "/dbs/db/colls/c/docs/a", "", pk("a"))

	// Deleting the user revokes the rest, and a new user of the same name gets none of them.
	must(204, "DELETE", "/dbs/db/users/alice", "", nil)
	must(201, "POST", "/dbs/db/users", `{"id":"alice"}`, nil)
	try(onlyA, 401, "GET", "/dbs/db/colls/c/docs/a", "", pk("a"))
}
