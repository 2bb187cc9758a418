package cosmos

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// received returns w as a client reads it: net/http's client files header names under Go's
// canonical form whatever their case on the wire, so tests look them up with Header().Get.
// TestResponseHeaderNamesLowerCase checks the case they are written in.
func received(w *httptest.ResponseRecorder) *httptest.ResponseRecorder {
	h := w.Header()
	written := h.Clone()
	clear(h)
	for k, vs := range written {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return w
}

// The service sends its own response headers (x-ms-*, etag, lsn) in lower case, and clients
// that look them up case-sensitively (the Python SDK) find nothing under Go's canonical
// capitalisation: every one Partita writes is in lower case, on successes and refusals alike.
func TestResponseHeaderNamesLowerCase(t *testing.T) {
	s := newFaultServer(t)
	serve := func(method, path, body string, hdr map[string]string) http.Header {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		date := s.clock().Format(http.TimeFormat)
		res, err := parseResource(path)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-ms-date", date)
		req.Header.Set("Authorization", s.key.Authorization(method, res.typ, res.link, date))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder() // not received: the names as written
		s.h.ServeHTTP(w, req)
		return w.Header()
	}
	query := map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true",
		"x-ms-documentdb-query-enablecrosspartition": "true", "x-ms-max-item-count": "1"}
	answers := map[string]http.Header{
		"create":     serve("POST", "/dbs/db/colls/c/docs", `{"id":"a","pk":"a"}`, pk("a")),
		"read":       serve("GET", "/dbs/db/colls/c/docs/a", "", pk("a")),
		"query":      serve("POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c"}`, query),
		"read feed":  serve("GET", "/dbs/db/colls/c/docs", "", map[string]string{"x-ms-max-item-count": "1"}),
		"container":  serve("GET", "/dbs/db/colls/c", "", nil),
		"list":       serve("GET", "/dbs", "", map[string]string{"x-ms-max-item-count": "1"}),
		"not found":  serve("GET", "/dbs/db/colls/c/docs/missing", "", pk("a")),
		"bad header": serve("GET", "/dbs/db/colls/c/docs/a", "", map[string]string{"x-ms-documentdb-partitionkey": "[nope"}),
	}
	for what, h := range answers {
		seen := 0
		for k := range h {
			lower := strings.ToLower(k)
			if strings.HasPrefix(lower, "x-ms-") || lower == "etag" || lower == "lsn" {
				seen++
				if k != lower {
					t.Errorf("%s: header %q is not in lower case", what, k)
				}
			}
		}
		if seen < 3 {
			t.Errorf("%s: only %d of the service's headers: %v", what, seen, h)
		}
	}
	for what, want := range map[string]string{"create": "etag", "read": "lsn", "query": "x-ms-continuation",
		"read feed": "x-ms-continuation", "not found": "x-ms-activity-id"} {
		if _, ok := answers[what][want]; !ok {
			t.Errorf("%s: no %s in %v", what, want, answers[what])
		}
	}
	// A point operation's LSNs: the partition's, which a quorum has, and the item version's
	// (the create's, the partition's first write).
	for _, what := range []string{"create", "read"} {
		h := answers[what]
		if lsn := h["lsn"]; len(lsn) != 1 || h["x-ms-quorum-acked-lsn"][0] != lsn[0] || h["x-ms-item-lsn"][0] != "1" ||
			h["x-ms-global-committed-lsn"][0] != "-1" {
			t.Errorf("%s: LSN headers %v", what, h)
		}
	}
}
