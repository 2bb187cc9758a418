package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/masterkey"
)

// The hostile-input census: hundreds of requests that a client should never send, each checked
// for the answer Cosmos gives (status and substatus), a Cosmos-shaped error body, no 5xx, an
// answer in bounded time, and a stored state (databases, containers, offers, scripts, items
// with their etags) byte-identical to what it was before. The families are in
// census_cases_test.go.

// censusReadOnlyKey is the server's read-only key in the census.
var censusReadOnlyKey = base64.StdEncoding.EncodeToString([]byte("census read-only key"))

// censusCase is one hostile request and the answer it must get.
type censusCase struct {
	family, name string
	method, path string
	// headers are sent as given, after the signature's; a name may repeat.
	headers [][2]string
	body    []byte
	// signer signs the request; nil signs with the master key.
	signer func(r *http.Request, typ, link string)
	status int
	// substatus is the x-ms-substatus the answer must carry; 0 checks none.
	substatus int
	// mayChange lets the case change the stored state (a request that must succeed).
	mayChange bool
	// byHTTP marks a request that Go's HTTP server refuses before Partita sees it (a request
	// line whose path does not parse): its 400 has a plain-text body.
	byHTTP bool
}

// censusBound is how long any answer may take: every hostile request is answered at once, so
// this only catches a hang.
const censusBound = 10 * time.Second

func TestHostileInputCensus(t *testing.T) {
	// Without 429s: the census snapshots every container after each request, which spends
	// more than the containers' 400 RU/s on a fast machine, and a 429 would hide what the
	// request itself gets.
	s := startServer(t, false, "--read-only-key", censusReadOnlyKey, "--rate-limit=false")
	censusSeed(t, s)
	cases := censusCases(censusIDsOf(t, s))
	if len(cases) < 300 {
		t.Fatalf("the census has %d cases; it must have at least 300", len(cases))
	}
	families := map[string]int{}
	for _, tc := range cases {
		families[tc.family]++
	}
	t.Logf("%d hostile requests in %d families: %v", len(cases), len(families), families)
	before := censusSnapshot(t, s)
	for _, tc := range cases {
		t.Run(tc.family+"/"+tc.name, func(t *testing.T) {
			start := time.Now()
			resp, err := censusSend(s, tc)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("reading the answer: %v", err)
			}
			if d := time.Since(start); d > censusBound {
				t.Errorf("answered in %v, more than %v", d, censusBound)
			}
			if resp.StatusCode >= 500 {
				t.Fatalf("a server error: %d %s", resp.StatusCode, body)
			}
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %.300s", resp.StatusCode, tc.status, body)
			}
			if tc.substatus != 0 && resp.Header.Get("x-ms-substatus") != fmt.Sprint(tc.substatus) {
				t.Errorf("substatus %q, want %d", resp.Header.Get("x-ms-substatus"), tc.substatus)
			}
			if resp.StatusCode >= 400 && !tc.byHTTP {
				var e struct{ Code, Message string }
				if err := json.Unmarshal(body, &e); err != nil || e.Code == "" || e.Message == "" {
					t.Errorf("not a Cosmos error body: %.300s", body)
				}
				if resp.Header.Get("x-ms-activity-id") == "" {
					t.Errorf("an error without x-ms-activity-id")
				}
			}
			if tc.mayChange {
				before = censusSnapshot(t, s)
				return
			}
			if after := censusSnapshot(t, s); after != before {
				t.Errorf("the request changed the stored state:\n%s", firstDifference(before, after))
				before = after // so that the next cases are judged on their own
			}
		})
	}
}

// censusSend sends tc as it is: the path unnormalized, headers repeated when they repeat.
func censusSend(s *server, tc censusCase) (*http.Response, error) {
	base, err := url.Parse(s.Endpoint)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(tc.method, s.Endpoint, bytes.NewReader(tc.body))
	if err != nil {
		return nil, err
	}
	req.URL = &url.URL{Scheme: base.Scheme, Host: base.Host, Opaque: tc.path}
	if strings.HasPrefix(tc.path, "//") {
		// An opaque "//..." would be sent as an absolute URL: send the path as it is instead.
		req.URL = &url.URL{Scheme: base.Scheme, Host: base.Host, Path: tc.path}
	}
	req.Header.Set("x-ms-version", "2020-07-15")
	typ, link := resourceOf(strings.SplitN(tc.path, "?", 2)[0])
	sign := tc.signer
	if sign == nil {
		sign = signWith(emulatorKey, time.Now)
	}
	sign(req, typ, link)
	for _, h := range tc.headers {
		if len(req.Header.Values(h[0])) > 0 && !repeats(tc.headers, h[0]) {
			req.Header.Del(h[0]) // the case replaces what signing set
		}
		req.Header.Add(h[0], h[1])
	}
	return s.client.Do(req)
}

// repeats reports whether the header name appears more than once in hs.
func repeats(hs [][2]string, name string) bool {
	n := 0
	for _, h := range hs {
		if http.CanonicalHeaderKey(h[0]) == http.CanonicalHeaderKey(name) {
			n++
		}
	}
	return n > 1
}

// signWith signs with key at the time now gives, as the SDKs do.
func signWith(key string, now func() time.Time) func(*http.Request, string, string) {
	return func(r *http.Request, typ, link string) {
		date := now().UTC().Format(http.TimeFormat)
		r.Header.Set("x-ms-date", date)
		k, err := masterkey.Parse(key)
		if err != nil {
			panic(err)
		}
		r.Header.Set("Authorization", k.Authorization(r.Method, typ, link, date))
	}
}

// signDated signs with the master key over date, sent as x-ms-date.
func signDated(date string) func(*http.Request, string, string) {
	return func(r *http.Request, typ, link string) {
		k, _ := masterkey.Parse(emulatorKey)
		r.Header.Set("x-ms-date", date)
		r.Header.Set("Authorization", k.Authorization(r.Method, typ, link, date))
	}
}

// signRaw sends auth as the Authorization header and a current date.
func signRaw(auth string) func(*http.Request, string, string) {
	return func(r *http.Request, _, _ string) {
		r.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
	}
}

// censusSeed creates what the census attacks: a database with a container of items, scripts
// and its own throughput, a hierarchical container, and a database with shared throughput.
func censusSeed(t *testing.T, s *server) {
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	must := func(method, path, body string, headers map[string]string) {
		t.Helper()
		if code, _, b := c.do(t, method, path, []byte(body), headers); code >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, code, b)
		}
	}
	must("POST", "/dbs", `{"id":"census"}`, nil)
	must("POST", "/dbs/census/colls", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2},
		"uniqueKeyPolicy":{"uniqueKeys":[{"paths":["/email"]}]},"defaultTtl":-1}`, nil)
	must("POST", "/dbs/census/colls", `{"id":"h","partitionKey":{"paths":["/tenant","/user"],"kind":"MultiHash","version":2}}`, nil)
	must("POST", "/dbs", `{"id":"shared"}`, map[string]string{"x-ms-offer-throughput": "400"})
	must("POST", "/dbs/shared/colls", `{"id":"s","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`, nil)
	for i, pk := range []string{"p", "p", "p", "q", "r"} {
		must("POST", "/dbs/census/colls/c/docs", fmt.Sprintf(`{"id":"item%d","pk":%q,"n":%d,"email":"u%d@x","tags":["a","b"],"nested":{"x":1}}`, i, pk, i, i),
			map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf(`[%q]`, pk)})
	}
	must("POST", "/dbs/census/colls/c/docs", `{"id":"keep","pk":"p","n":10,"email":"keep@x","counter":1,"tags":[]}`,
		map[string]string{"x-ms-documentdb-partitionkey": `["p"]`})
	must("POST", "/dbs/census/colls/h/docs", `{"id":"m1","tenant":"t","user":"u","n":1}`,
		map[string]string{"x-ms-documentdb-partitionkey": `["t","u"]`})
	must("POST", "/dbs/shared/colls/s/docs", `{"id":"s1","pk":"p"}`, map[string]string{"x-ms-documentdb-partitionkey": `["p"]`})
	must("POST", "/dbs/census/users", `{"id":"alice"}`, nil)
	must("POST", "/dbs/census/users/alice/permissions", `{"id":"onlyP","permissionMode":"Read","resource":"dbs/census/colls/c","resourcePartitionKey":["p"]}`, nil)
	// A procedure that writes then throws when asked to, one that writes another partition key,
	// and one that loops until its time budget ends.
	must("POST", "/dbs/census/colls/c/sprocs", `{"id":"writeThenThrow","body":"function (fail) { var c = getContext().getCollection(); c.createDocument(c.getSelfLink(), {id: 'fromScript', pk: 'p'}, function (err) { if (err) throw err; if (fail) throw new Error('asked to fail'); }); }"}`, nil)
	must("POST", "/dbs/census/colls/c/sprocs", `{"id":"otherKey","body":"function () { var c = getContext().getCollection(); c.createDocument(c.getSelfLink(), {id: 'elsewhere', pk: 'q'}, function (err) { if (err) throw err; }); }"}`, nil)
	must("POST", "/dbs/census/colls/c/sprocs", `{"id":"echo","body":"function (x) { getContext().getResponse().setBody(x); }"}`, nil)
	must("POST", "/dbs/census/colls/c/triggers", `{"id":"preThrow","body":"function () { throw new Error('refused by trigger'); }","triggerType":"Pre","triggerOperation":"All"}`, nil)
	must("POST", "/dbs/census/colls/c/triggers", `{"id":"postOnDelete","body":"function () { }","triggerType":"Post","triggerOperation":"Delete"}`, nil)
	must("POST", "/dbs/census/colls/c/udfs", `{"id":"boom","body":"function (x) { throw new Error('udf failed'); }"}`, nil)
	must("POST", "/dbs/census/colls/c/udfs", `{"id":"double","body":"function (x) { return x * 2; }"}`, nil)
}

// censusSnapshot reads everything stored, as one text: the answers of the reads that list
// databases, containers, scripts, offers and items (with their etags and timestamps).
func censusSnapshot(t *testing.T, s *server) string {
	t.Helper()
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	var out strings.Builder
	read := func(path string) []byte {
		var all []byte
		cont := ""
		for {
			h := map[string]string{"x-ms-max-item-count": "-1"}
			if cont != "" {
				h["x-ms-continuation"] = cont
			}
			code, hdr, b := c.do(t, "GET", path, nil, h)
			if code != 200 {
				t.Fatalf("snapshot: GET %s: %d %s", path, code, b)
			}
			all = append(all, b...)
			if cont = hdr.Get("x-ms-continuation"); cont == "" {
				return all
			}
		}
	}
	ids := func(b []byte, list string) []string {
		var l map[string]json.RawMessage
		var rs []struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatalf("snapshot: %v: %s", err, b)
		}
		if err := json.Unmarshal(l[list], &rs); err != nil {
			t.Fatalf("snapshot: %v: %s", err, b)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	dbs := read("/dbs")
	fmt.Fprintf(&out, "dbs %s\noffers %s\n", dbs, read("/offers"))
	for _, db := range ids(dbs, "Databases") {
		colls := read("/dbs/" + url.PathEscape(db) + "/colls")
		users := read("/dbs/" + url.PathEscape(db) + "/users")
		fmt.Fprintf(&out, "db %s colls %s\nusers %s\n", db, colls, users)
		for _, user := range ids(users, "Users") {
			// A permission's _token is issued afresh on every read; the rest is stored.
			var l struct{ Permissions []map[string]any }
			if err := json.Unmarshal(read("/dbs/"+url.PathEscape(db)+"/users/"+url.PathEscape(user)+"/permissions"), &l); err != nil {
				t.Fatalf("snapshot: %v", err)
			}
			for _, p := range l.Permissions {
				delete(p, "_token")
			}
			b, _ := json.Marshal(l.Permissions)
			fmt.Fprintf(&out, "user %s permissions %s\n", user, b)
		}
		for _, coll := range ids(colls, "DocumentCollections") {
			base := "/dbs/" + url.PathEscape(db) + "/colls/" + url.PathEscape(coll)
			for _, kind := range []string{"docs", "sprocs", "triggers", "udfs"} {
				fmt.Fprintf(&out, "%s/%s %s\n", base, kind, read(base+"/"+kind))
			}
		}
	}
	return out.String()
}

// firstDifference shows where two snapshots part.
func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-200)
	return fmt.Sprintf("before: …%.400s\nafter:  …%.400s", a[from:], b[from:])
}
