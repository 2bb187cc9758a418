package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/masterkey"
)

// rawClient sends requests signed by hand, to test what the SDKs would never send.
type rawClient struct {
	s   *server
	key string
	now func() time.Time
}

func (c rawClient) do(t *testing.T, method, path string, body []byte, headers map[string]string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := c.send(method, path, body, headers)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// throughputContainer creates database "db" and its container "c", keyed by /pk (hash v2),
// with rus RU/s of its own.
func (c rawClient) throughputContainer(t *testing.T, rus int) {
	t.Helper()
	if code, _, b := c.do(t, "POST", "/dbs", []byte(`{"id":"db"}`), nil); code != 201 {
		t.Fatalf("database: %d %s", code, b)
	}
	if code, _, b := c.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`),
		map[string]string{"x-ms-offer-throughput": strconv.Itoa(rus)}); code != 201 {
		t.Fatalf("container: %d %s", code, b)
	}
}

// tryDo sends a request and reports its status, or false when the server could not be reached.
func (c rawClient) tryDo(method, path string, body []byte, headers map[string]string) (int, bool) {
	resp, err := c.send(method, path, body, headers)
	if err != nil {
		return 0, false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, true
}

func (c rawClient) send(method, path string, body []byte, headers map[string]string) (*http.Response, error) {
	req, err := http.NewRequest(method, strings.TrimSuffix(c.s.Endpoint, "/")+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	date := c.now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", "2020-07-15")
	typ, link := resourceOf(path)
	if c.key != "" {
		key, err := masterkey.Parse(c.key)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", key.Authorization(method, typ, link, date))
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return c.s.client.Do(req)
}

// resourceOf derives the signed resource type and link from a path, as the SDKs do.
func resourceOf(path string) (typ, link string) {
	path, _, _ = strings.Cut(path, "?") // the query string is not signed
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if segs[0] == "" {
		return "", ""
	}
	for i := range segs {
		segs[i], _ = url.PathUnescape(segs[i])
	}
	if len(segs)%2 == 1 {
		return segs[len(segs)-1], strings.Join(segs[:len(segs)-1], "/")
	}
	if len(segs) == 2 && segs[0] == "offers" {
		return "offers", strings.ToLower(segs[1]) // offers are signed by their rid, in lower case
	}
	if len(segs) == 6 && segs[4] == "operations" {
		// A container's operation, as the .NET, Java and Python SDKs sign it.
		return "partitionkey", strings.Join(segs[:4], "/")
	}
	return segs[len(segs)-2], strings.Join(segs, "/")
}

// cosmosError checks a response is a Cosmos error body and returns its message.
func cosmosError(t *testing.T, body []byte) string {
	t.Helper()
	var e struct{ Code, Message string }
	if err := json.Unmarshal(body, &e); err != nil || e.Code == "" || e.Message == "" {
		t.Fatalf("not a Cosmos error body: %s", body)
	}
	return e.Message
}

func TestRawRequestsRefused(t *testing.T) {
	s := startServer(t, false, "--read-only-key", base64.StdEncoding.EncodeToString([]byte("read-only-key-for-tests")))
	ok := rawClient{s: s, key: emulatorKey, now: time.Now}
	pk := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}
	if code, _, b := ok.do(t, "POST", "/dbs", []byte(`{"id":"db"}`), nil); code != 201 {
		t.Fatalf("create database: %d %s", code, b)
	}
	if code, _, b := ok.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`), nil); code != 201 {
		t.Fatalf("create container: %d %s", code, b)
	}
	if code, _, b := ok.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"keep","pk":"p","v":1}`), pk); code != 201 {
		t.Fatalf("create item: %d %s", code, b)
	}
	feed := func() string {
		_, _, b := ok.do(t, "GET", "/dbs/db/colls/c/docs", nil, nil)
		return string(b)
	}
	before := feed()

	wrongKey := rawClient{s: s, key: base64.StdEncoding.EncodeToString([]byte("not the key")), now: time.Now}
	unsigned := rawClient{s: s, now: time.Now}
	skewed := rawClient{s: s, key: emulatorKey, now: func() time.Time { return time.Now().Add(-20 * time.Minute) }}
	readOnly := rawClient{s: s, key: base64.StdEncoding.EncodeToString([]byte("read-only-key-for-tests")), now: time.Now}
	big := []byte(`{"id":"big","pk":"p","pad":"` + strings.Repeat("x", 2<<20) + `"}`)
	cases := []struct {
		name      string
		c         rawClient
		method    string
		path      string
		body      string
		headers   map[string]string
		status    int
		substatus string
	}{
		{"wrong key", wrongKey, "POST", "/dbs/db/colls/c/docs", `{"id":"x","pk":"p"}`, pk, 401, ""},
		{"no signature", unsigned, "GET", "/dbs/db/colls/c/docs/keep", "", pk, 401, ""},
		{"date 20 minutes off", skewed, "GET", "/dbs/db/colls/c/docs/keep", "", pk, 403, ""},
		{"read-only key writing", readOnly, "POST", "/dbs/db/colls/c/docs", `{"id":"x","pk":"p"}`, pk, 401, ""},
		{"malformed JSON", ok, "POST", "/dbs/db/colls/c/docs", `{"id":"x","pk":`, pk, 400, ""},
		{"id of the wrong type", ok, "POST", "/dbs/db/colls/c/docs", `{"id":17,"pk":"p"}`, pk, 400, ""},
		{"item is an array", ok, "POST", "/dbs/db/colls/c/docs", `[{"id":"x"}]`, pk, 400, ""},
		{"id with a slash", ok, "POST", "/dbs/db/colls/c/docs", `{"id":"a/b","pk":"p"}`, pk, 400, ""},
		{"partition key mismatch", ok, "POST", "/dbs/db/colls/c/docs", `{"id":"x","pk":"other"}`, pk, 400, ""},
		{"bad partition key header", ok, "POST", "/dbs/db/colls/c/docs", `{"id":"x","pk":"p"}`, map[string]string{"x-ms-documentdb-partitionkey": `[p]`}, 400, ""},
		{"read without partition key", ok, "GET", "/dbs/db/colls/c/docs/keep", "", nil, 400, ""},
		{"create without partition key", ok, "POST", "/dbs/db/colls/c/docs", `{"id":"x","pk":"p"}`, nil, 400, ""},
		{"query that does not parse", ok, "POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c WHERE"}`,
			map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true"}, 400, ""},
		{"query with a bad parameter", ok, "POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c","parameters":[{"name":"x","value":1}]}`,
			map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true"}, 400, ""},
		{"cross-partition query without enablecrosspartition", ok, "POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c"}`,
			map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true"}, 400, ""},
		{"query of a gone range", ok, "POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c"}`,
			map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true", "x-ms-documentdb-partitionkeyrangeid": "99"}, 410, "1002"},
		{"replace of a missing item with another id", ok, "PUT", "/dbs/db/colls/c/docs/missing", `{"id":"other","pk":"p"}`, pk, 404, ""},
		{"stale If-Match", ok, "PUT", "/dbs/db/colls/c/docs/keep", `{"id":"keep","pk":"p","v":2}`,
			map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "If-Match": `"stale"`}, 412, ""},
		{"oversized item", ok, "POST", "/dbs/db/colls/c/docs", string(big), pk, 413, ""},
		{"unknown container", ok, "POST", "/dbs/db/colls/nope/docs", `{"id":"x","pk":"p"}`, pk, 404, ""},
		{"unserved resource type", ok, "GET", "/dbs/db/colls/c/conflicts", "", nil, 404, ""},
		{"bad continuation token", ok, "GET", "/dbs/db/colls/c/docs", "", map[string]string{"x-ms-continuation": "garbage!"}, 400, ""},
		{"bad throughput header", ok, "POST", "/dbs", `{"id":"db2"}`, map[string]string{"x-ms-offer-throughput": "lots"}, 400, ""},
		{"throughput below the minimum", ok, "POST", "/dbs", `{"id":"db2"}`, map[string]string{"x-ms-offer-throughput": "100"}, 400, ""},
		{"change feed of an unknown mode", ok, "GET", "/dbs/db/colls/c/docs", "", map[string]string{"A-IM": "Everything"}, 400, ""},
		{"change feed etag that is not one", ok, "GET", "/dbs/db/colls/c/docs", "", map[string]string{"A-IM": "Incremental Feed", "If-None-Match": `"abc"`}, 400, ""},
		{"change feed with a bad date", ok, "GET", "/dbs/db/colls/c/docs", "", map[string]string{"A-IM": "Incremental Feed", "If-Modified-Since": "yesterday"}, 400, ""},
		{"change feed of a gone range", ok, "GET", "/dbs/db/colls/c/docs", "", map[string]string{"A-IM": "Incremental Feed", "x-ms-documentdb-partitionkeyrangeid": "99"}, 410, "1002"},
		{"consistency stronger than the account's", ok, "GET", "/dbs/db/colls/c/docs/keep", "", map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-consistency-level": "Strong"}, 400, ""},
		{"unknown consistency level", ok, "GET", "/dbs/db/colls/c/docs/keep", "", map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-consistency-level": "Sometimes"}, 400, ""},
		{"malformed session token", ok, "GET", "/dbs/db/colls/c/docs/keep", "", map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-session-token": "0:-1#x"}, 400, ""},
		{"patch of the id", ok, "PATCH", "/dbs/db/colls/c/docs/keep", `{"operations":[{"op":"set","path":"/id","value":"z"}]}`, pk, 400, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			code, hdr, b := tc.c.do(t, tc.method, tc.path, body, tc.headers)
			if code != tc.status {
				t.Fatalf("status %d, want %d: %s", code, tc.status, b)
			}
			msg := cosmosError(t, b)
			if tc.status == 401 && strings.Contains(msg, "sig=") {
				t.Fatalf("a 401 must not reveal the expected signature: %s", msg)
			}
			if hdr.Get("x-ms-activity-id") == "" || hdr.Get("x-ms-request-charge") == "" {
				t.Fatalf("error response without activity id or charge: %v", hdr)
			}
			if tc.substatus != "" && hdr.Get("x-ms-substatus") != tc.substatus {
				t.Fatalf("substatus %q, want %s", hdr.Get("x-ms-substatus"), tc.substatus)
			}
		})
	}
	if after := feed(); after != before {
		t.Fatalf("refused requests changed the data:\nbefore %s\nafter  %s", before, after)
	}
	// A kind of resource Partita does not serve is named as such, not blamed on its parent.
	if _, _, b := ok.do(t, "GET", "/dbs/db/colls/c/conflicts", nil, nil); !strings.Contains(cosmosError(t, b), "does not serve conflicts") {
		t.Fatalf("unserved kind: %s", b)
	}
	if code, _, _ := ok.do(t, "GET", "/dbs/db2", nil, nil); code != 404 {
		t.Fatal("a refused database create left a database behind")
	}
	// Weaker levels and well-formed session tokens are served.
	for _, h := range []map[string]string{
		{"x-ms-consistency-level": "Eventual"}, {"x-ms-consistency-level": "session"},
		{"x-ms-session-token": "0:-1#12"}, {"x-ms-session-token": "0:-1#12,3:1#7#1=20"}, {"x-ms-session-token": "12"},
	} {
		h["x-ms-documentdb-partitionkey"] = `["p"]`
		if code, _, b := ok.do(t, "GET", "/dbs/db/colls/c/docs/keep", nil, h); code != 200 {
			t.Fatalf("read with %v: %d %s", h, code, b)
		}
	}
	// The read-only key may read.
	if code, _, b := readOnly.do(t, "GET", "/dbs/db/colls/c/docs/keep", nil, pk); code != 200 {
		t.Fatalf("read with the read-only key: %d %s", code, b)
	}
}

func TestLogicalPartitionCapThroughGateway(t *testing.T) {
	s := startServer(t, false, "--logical-partition-max-bytes", "4096")
	ok := rawClient{s: s, key: emulatorKey, now: time.Now}
	ok.do(t, "POST", "/dbs", []byte(`{"id":"db"}`), nil)
	ok.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"c","partitionKey":{"paths":["/pk"]}}`), nil)
	pad := strings.Repeat("x", 1500)
	pk := map[string]string{"x-ms-documentdb-partitionkey": `["full"]`}
	for i := 0; ; i++ {
		code, hdr, b := ok.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"`+string(rune('a'+i))+`","pk":"full","pad":"`+pad+`"}`), pk)
		if code == 201 {
			continue
		}
		if code != 403 || hdr.Get("x-ms-substatus") != "1014" || i != 2 {
			t.Fatalf("write %d: %d substatus %q: %s", i, code, hdr.Get("x-ms-substatus"), b)
		}
		break
	}
	// Another logical partition is unaffected.
	if code, _, b := ok.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"a","pk":"other","pad":"`+pad+`"}`), map[string]string{"x-ms-documentdb-partitionkey": `["other"]`}); code != 201 {
		t.Fatalf("write to another logical partition: %d %s", code, b)
	}
}

// The partition key ranges tile the hash space and answer 304 to an unchanged etag, which is
// how the SDKs know they hold the current ranges.
func TestPartitionKeyRangesFeed(t *testing.T) {
	s := startServer(t, false)
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	c.do(t, "POST", "/dbs", []byte(`{"id":"db"}`), nil)
	c.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"version":2}}`), map[string]string{"x-ms-offer-throughput": "40000"})
	code, hdr, b := c.do(t, "GET", "/dbs/db/colls/c/pkranges", nil, map[string]string{"A-IM": "Incremental Feed"})
	if code != 200 || hdr.Get("etag") == "" {
		t.Fatalf("pkranges: %d etag %q: %s", code, hdr.Get("etag"), b)
	}
	var feed struct {
		PartitionKeyRanges []struct{ ID, MinInclusive, MaxExclusive string }
	}
	json.Unmarshal(b, &feed)
	if len(feed.PartitionKeyRanges) != 7 { // ceil(40,000 / 6,000)
		t.Fatalf("%d ranges, want 7: %s", len(feed.PartitionKeyRanges), b)
	}
	want := ""
	for _, r := range feed.PartitionKeyRanges {
		if r.MinInclusive != want {
			t.Fatalf("ranges do not tile the space: %s", b)
		}
		want = r.MaxExclusive
	}
	if want != "FF" {
		t.Fatalf("the last range ends at %q, want FF", want)
	}
	code, _, _ = c.do(t, "GET", "/dbs/db/colls/c/pkranges", nil, map[string]string{"A-IM": "Incremental Feed", "If-None-Match": hdr.Get("etag")})
	if code != 304 {
		t.Fatalf("unchanged ranges with their etag: %d, want 304", code)
	}
}

// An SDK that plans a query asks for its plan; the answer describes the query, the ranges it
// reads and what each range runs (the .NET and Java SDKs read it as the JavaScript SDK does).
func TestQueryPlanRequest(t *testing.T) {
	s := startServer(t, false)
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	c.do(t, "POST", "/dbs", []byte(`{"id":"db"}`), nil)
	c.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"version":2}}`), map[string]string{"x-ms-offer-throughput": "24000"})
	code, _, b := c.do(t, "POST", "/dbs/db/colls/c/docs",
		[]byte(`{"query":"SELECT TOP 3 c.id FROM c WHERE c.pk = @pk ORDER BY c.id DESC","parameters":[{"name":"@pk","value":"p"}]}`),
		map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true", "x-ms-cosmos-is-query-plan-request": "True"})
	if code != 200 {
		t.Fatalf("query plan: %d %s", code, b)
	}
	type queryPlan struct {
		QueryInfo struct {
			Top            *int               `json:"top"`
			OrderBy        []string           `json:"orderBy"`
			Rewritten      string             `json:"rewrittenQuery"`
			Aggregates     []string           `json:"aggregates"`
			AggregateTypes map[string]*string `json:"groupByAliasToAggregateType"`
		} `json:"queryInfo"`
		QueryRanges []struct{ Min, Max string } `json:"queryRanges"`
	}
	var plan queryPlan
	if err := json.Unmarshal(b, &plan); err != nil {
		t.Fatal(err)
	}
	if plan.QueryInfo.Top == nil || *plan.QueryInfo.Top != 3 || len(plan.QueryInfo.OrderBy) != 1 || plan.QueryInfo.OrderBy[0] != "Descending" ||
		len(plan.QueryRanges) != 1 || plan.QueryRanges[0].Min == "" || plan.QueryRanges[0].Max == "FF" ||
		!strings.Contains(plan.QueryInfo.Rewritten, "orderByItems") || !strings.Contains(plan.QueryInfo.Rewritten, "{documentdb-formattableorderbyquery-filter}") {
		t.Fatalf("plan: %s", b)
	}
	// Aggregates without VALUE are given by output property, and Aggregates is empty: SDKs
	// refuse a plan that lists them there.
	code, _, b = c.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"query":"SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk"}`),
		map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true", "x-ms-cosmos-is-query-plan-request": "True"})
	plan = queryPlan{}
	if err := json.Unmarshal(b, &plan); code != 200 || err != nil {
		t.Fatalf("query plan: %d %s", code, b)
	}
	types := plan.QueryInfo.AggregateTypes
	if len(plan.QueryInfo.Aggregates) != 0 || len(types) != 2 || types["pk"] != nil || types["n"] == nil || *types["n"] != "Count" ||
		!strings.Contains(plan.QueryInfo.Rewritten, "groupByItems") {
		t.Fatalf("plan: %s", b)
	}
}

// A client that joins the endpoint the account advertises (which ends in "/") with a path that
// begins with "/" sends "//dbs/...": the service serves such requests, signed for the resource
// as usual, and so does Partita. Three slashes are still refused (the census).
func TestDoubledLeadingSlash(t *testing.T) {
	s := startServer(t, false)
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	pk := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}
	for _, step := range []struct{ method, path, body string }{
		{"POST", "//dbs", `{"id":"db"}`},
		{"POST", "//dbs/db/colls", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`},
		{"POST", "//dbs/db/colls/c/docs", `{"id":"one","pk":"p"}`},
	} {
		if code, _, b := c.do(t, step.method, step.path, []byte(step.body), pk); code != 201 {
			t.Fatalf("%s %s: %d %s", step.method, step.path, code, b)
		}
	}
	for _, path := range []string{"//dbs/db/colls/c/docs/one", "/dbs/db/colls/c/docs/one"} {
		code, _, b := c.do(t, "GET", path, nil, pk)
		var item struct{ ID string }
		if err := json.Unmarshal(b, &item); code != 200 || err != nil || item.ID != "one" {
			t.Fatalf("GET %s: %d %s", path, code, b)
		}
	}
	if code, _, b := c.do(t, "GET", "//", nil, nil); code != 200 || !strings.Contains(string(b), `"writableLocations"`) {
		t.Fatalf("GET //: %d %s", code, b)
	}
}
