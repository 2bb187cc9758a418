package cosmos

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// headerRequests are the requests FuzzRequestHeaders sends its headers with: reads, feeds and
// queries, writes, a procedure and a list. needsKey says whether an SDK sends a partition key.
var headerRequests = []struct {
	method, path, body string
	needsKey, write    bool
	hdr                map[string]string
}{
	{method: http.MethodGet, path: "/dbs/db/colls/c/docs/a", needsKey: true},
	{method: http.MethodGet, path: "/dbs/db/colls/c/docs"},
	{method: http.MethodGet, path: "/dbs/db/colls/c/docs", hdr: map[string]string{"A-IM": "Incremental Feed"}},
	{method: http.MethodPost, path: "/dbs/db/colls/c/docs", body: `{"query":"SELECT * FROM c WHERE c.n > @n","parameters":[{"name":"@n","value":0}]}`,
		hdr: map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true", "x-ms-documentdb-query-enablecrosspartition": "true"}},
	{method: http.MethodPost, path: "/dbs/db/colls/c/docs", body: `{"id":"h","pk":"p1","u":"uh"}`, needsKey: true, write: true,
		hdr: map[string]string{"x-ms-documentdb-is-upsert": "true"}},
	{method: http.MethodDelete, path: "/dbs/db/colls/c/docs/b", needsKey: true, write: true},
	{method: http.MethodPatch, path: "/dbs/db/colls/c/docs/a", body: `[{"op":"incr","path":"/n","value":1}]`, needsKey: true, write: true},
	{method: http.MethodPost, path: "/dbs/db/colls/c/sprocs/write", body: `["hw"]`, needsKey: true, write: true},
	{method: http.MethodGet, path: "/dbs/db/colls"},
}

// otherHeaders are the headers FuzzRequestHeaders gives its last input to, one per input.
var otherHeaders = []string{
	"A-IM", "x-ms-documentdb-partitionkeyrangeid", "x-ms-start-epk", "x-ms-end-epk", "x-ms-indexing-directive",
	"x-ms-documentdb-pre-trigger-include", "x-ms-documentdb-post-trigger-include", "If-Modified-Since", "x-ms-version",
	"Prefer", "x-ms-documentdb-is-upsert", "x-ms-documentdb-query-enablecrosspartition", "x-ms-cosmos-populateindexmetrics",
	"x-ms-documentdb-script-enable-logging", "x-ms-cosmos-is-query-plan-request", "x-ms-cosmos-is-batch-request",
	"x-ms-documentdb-isquery", "Content-Type", "x-ms-consistency-level", "x-ms-session-token",
}

// FuzzRequestHeaders sends the headers clients set (x-ms-date, which is signed, the page size,
// the session token and consistency level, the partition key, the etag condition, and one
// other) with each kind of request. Whatever they hold, the answer is one a client can act on,
// and a refused write changes nothing.
func FuzzRequestHeaders(f *testing.F) {
	s := newFuzzServer(f)
	now := time.Now().UTC()
	for op := range uint8(len(headerRequests)) {
		f.Add(op, "", "", "", "", "", "", "")
		f.Add(op, now.Format(time.RFC850), "1", "0:-1#1", "Eventual", `["p2"]`, `"stale"`, "x")
		f.Add(op, now.Format(time.ANSIC), "-1", "0:-1#999999", "Strong", `[7]`, `*`, "1")
		f.Add(op, now.Add(-20*time.Minute).Format(http.TimeFormat), "0", "x", "Garbage", `["p1","p2"]`, `"`, "Include")
		f.Add(op, now.Format(time.RFC1123Z), strings.Repeat("9", 400), "0:-1#1,1:-1#2#3=4", "session", `[{}]`, ``, "pre")
		f.Add(op, "\xff", "1e3", "\xff", "\xff", "[\"\xff\"]", "\xff", "\xff")
		f.Add(op, "", "2", "", "ConsistentPrefix", `["\ud800"]`, `"00000000-0000-0000-0000-000000000001"`, "return=minimal")
		f.Add(op, "", "", "", "", `[1e400]`, "", "2018-12-31")
		f.Add(op, "", "", "", "", `[`+strings.Repeat("9", 400)+`]`, "", "05C1DFFFFFFFFFFFFFFFFFFFFFFFFFFF")
		f.Add(op, "", "", "", "", `["p1"`, "", "pre,post")
		f.Add(op, "", "", "", "", `[null]`, "", "not a number")
	}
	f.Fuzz(func(t *testing.T, op uint8, date, maxCount, session, consistency, pk, etag, other string) {
		for _, v := range []string{date, maxCount, session, consistency, pk, etag, other} {
			if !validHeader(v) {
				return
			}
		}
		rq := headerRequests[int(op)%len(headerRequests)]
		hdr := map[string]string{}
		for k, v := range rq.hdr {
			hdr[k] = v
		}
		if date != "" {
			hdr["x-ms-date"] = date
		}
		hdr["x-ms-max-item-count"] = maxCount
		hdr["x-ms-session-token"] = session
		hdr["x-ms-consistency-level"] = consistency
		if pk == "" && rq.needsKey {
			pk = `["p1"]`
		}
		hdr["x-ms-documentdb-partitionkey"] = pk
		if rq.write {
			hdr["If-Match"] = etag
		} else {
			hdr["If-None-Match"] = etag
		}
		hdr[otherHeaders[int(op)/len(headerRequests)%len(otherHeaders)]] = other
		what := fmt.Sprintf("%s %s with %q", rq.method, rq.path, hdr)
		w, _ := s.send(t, what, rq.write, rq.method, rq.path, []byte(rq.body), hdr)
		if rq.write && w.Code < 300 {
			s.reset(t)
		}
	})
}

// continuationRequests are the paged reads FuzzContinuationHeader resumes: lists, read feeds,
// queries of each kind of token (item positions, rows skipped, TOP counts, offsets into sorted,
// grouped and distinct results; ORDER BY read from the index), catalog and script queries, and
// the change feed, whose continuation is the If-None-Match etag.
var continuationRequests = []struct {
	method, path, query string
	hdr                 map[string]string
}{
	{method: http.MethodGet, path: "/dbs"},
	{method: http.MethodGet, path: "/dbs/db/colls"},
	{method: http.MethodGet, path: "/dbs/db/colls/c/sprocs"},
	{method: http.MethodGet, path: "/dbs/db/colls/c/docs"},
	{method: http.MethodGet, path: "/dbs/db/colls/c/docs", hdr: map[string]string{"x-ms-documentdb-partitionkey": `["p1"]`}},
	{method: http.MethodPost, path: "/dbs/db/colls/c/docs", query: "SELECT * FROM c"},
	{method: http.MethodPost, path: "/dbs/db/colls/c/docs", query: "SELECT c.id, c.n FROM c ORDER BY c.n DESC"},
	{method: http.MethodPost, path: "/dbs/db/colls/c/docs", query: "SELECT VALUE t FROM c JOIN t IN c.tags"},
	{method: http.MethodPost, path: "/dbs/db/colls/c/docs", query: "SELECT TOP 3 c.id FROM c"},
	{method: http.MethodPost, path: "/dbs/db/colls/c/docs", query: "SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk"},
	{method: http.MethodPost, path: "/dbs/db/colls/c/docs", query: "SELECT DISTINCT VALUE c.pk FROM c"},
	{method: http.MethodPost, path: "/dbs/db/colls/c/docs", query: "SELECT VALUE c.id FROM c ORDER BY c.id OFFSET 1 LIMIT 3"},
	{method: http.MethodPost, path: "/dbs", query: "SELECT * FROM r"},
	{method: http.MethodPost, path: "/dbs/db/colls/c/sprocs", query: "SELECT r.id FROM r"},
	{method: http.MethodGet, path: "/dbs/db/colls/c/docs", hdr: map[string]string{"A-IM": "Incremental Feed"}},
}

// sendPaged makes a continuation request of kind op resuming from token with pages of max.
func (s *fuzzServer) sendPaged(op int, token, max string) (*httptest.ResponseRecorder, string) {
	return s.sendQuery(op, continuationRequests[op].query, token, max)
}

// sendQuery is sendPaged with the query of a query request replaced.
func (s *fuzzServer) sendQuery(op int, query, token, max string) (*httptest.ResponseRecorder, string) {
	rq := continuationRequests[op]
	hdr := map[string]string{"x-ms-max-item-count": max}
	for k, v := range rq.hdr {
		hdr[k] = v
	}
	if rq.hdr["A-IM"] != "" {
		hdr["If-None-Match"] = token
	} else {
		hdr["x-ms-continuation"] = token
	}
	var body []byte
	if query != "" {
		body, _ = json.Marshal(map[string]string{"query": query})
		hdr["Content-Type"] = "application/query+json"
		hdr["x-ms-documentdb-isquery"] = "true"
		hdr["x-ms-documentdb-query-enablecrosspartition"] = "true"
	}
	w := s.do(rq.method, rq.path, body, hdr)
	next := w.Header().Get("X-Ms-Continuation")
	if rq.hdr["A-IM"] != "" {
		next = w.Header().Get("Etag")
	}
	return w, next
}

// pageEntries are the entries of a page's list, each as canonical JSON.
func pageEntries(t testing.TB, body []byte) []string {
	var page map[string]json.RawMessage
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatalf("page %q: %v", body, err)
	}
	for k, raw := range page {
		var list []any
		if k == "_rid" || k == "_count" || json.Unmarshal(raw, &list) != nil {
			continue
		}
		out := make([]string, len(list))
		for i, e := range list {
			b, _ := json.Marshal(e)
			out[i] = string(b)
		}
		return out
	}
	t.Fatalf("page %q has no list", body)
	return nil
}

// FuzzContinuationHeader resumes each kind of paged read from arbitrary continuation tokens
// and page sizes: tokens come from clients and may be forged, truncated or another read's.
// The answer is one a client can act on, and a page holds only entries the whole read has;
// under TOP, entries the read without TOP has (a token names an item position, and the items
// before it may have been deleted since the previous page).
func FuzzContinuationHeader(f *testing.F) {
	s := newFuzzServer(f)
	all := make([]map[string]int, len(continuationRequests))
	for op, rq := range continuationRequests {
		w, _ := s.sendQuery(op, strings.Replace(rq.query, "TOP 3 ", "", 1), "", "1000")
		if w.Code != http.StatusOK {
			f.Fatalf("read %d: %d %s", op, w.Code, w.Body)
		}
		all[op] = map[string]int{}
		for _, e := range pageEntries(f, w.Body.Bytes()) {
			all[op][e]++
		}
		// Every token the read hands out, page by page.
		tok := ""
		for range 10 {
			w, next := s.sendPaged(op, tok, "1")
			if w.Code != http.StatusOK || next == "" || next == tok {
				break
			}
			tok = next
			f.Add(uint8(op), tok, "1")
			f.Add(uint8(op), tok, "-1")
		}
	}
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for op := range uint8(len(continuationRequests)) {
		for _, tok := range []string{
			enc(`{"o":9223372036854775807}`), enc(`{"o":-1}`), enc(`{"o":1e400}`), enc(`{}`), enc(`null`), enc(`[]`),
			enc(`{"s":true,"r":{"a":"","f":[{"x":"ff","q":18446744073709551615}]},"k":9223372036854775807,"n":9223372036854775807}`),
			enc(`{"s":true,"r":{"a":"","f":[{"x":"ff","q":0}]},"k":-1}`), enc(`{"s":true,"r":{"a":"ff","f":[{"x":"00","q":1}]}}`),
			enc(`{"a":"","f":[{"x":"ff","q":18446744073709551615}]}`), enc(`{"a":"","f":[]}`), enc("\xff"), enc(""), enc("zzzz"),
			enc(strings.Repeat("z", 5000)), "!!", "eyJvIjoxfQ==", `"18446744073709551615"`, `"0"`, "*", `"-1"`, "x",
		} {
			f.Add(op, tok, "2")
		}
		f.Add(op, "", "0")
		f.Add(op, "", "-2")
		f.Add(op, "", strings.Repeat("9", 30))
	}
	f.Fuzz(func(t *testing.T, op uint8, token, max string) {
		if !validHeader(token) || !validHeader(max) {
			return
		}
		n := int(op) % len(continuationRequests)
		w, _ := s.sendPaged(n, token, max)
		rq := continuationRequests[n]
		what := rq.method + " " + rq.path + " " + rq.query + " from " + token + " by " + max
		checkAnswer(t, what, w)
		if w.Code != http.StatusOK {
			return
		}
		have := map[string]int{}
		for e, k := range all[n] {
			have[e] = k
		}
		for _, e := range pageEntries(t, w.Body.Bytes()) {
			if have[e]--; have[e] < 0 {
				t.Fatalf("%s: %s is not one of the read's entries", what, e)
			}
		}
	})
}
