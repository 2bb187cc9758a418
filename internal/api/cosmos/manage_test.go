package cosmos

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/masterkey"
)

const testReadOnlyKey = "cmVhZC1vbmx5LWtleS1mb3ItdGVzdHMtb2YtdGhlLW1hbmFnZW1lbnQtYXBp"

// newFaultServer is a tokenServer whose containers start with two partitions, with a
// read-only key too.
func newFaultServer(t *testing.T) *tokenServer {
	e, err := engine.Open(engine.Options{Dir: t.TempDir(), MinPartitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s := &tokenServer{t: t, e: e, now: time.Now().UTC().Truncate(time.Second)}
	if s.h, err = NewHandler(e, Options{Key: testKey, ReadOnlyKey: testReadOnlyKey, Now: s.clock}); err != nil {
		t.Fatal(err)
	}
	s.key, _ = masterkey.Parse(testKey)
	e.CreateDatabase("db", nil)
	if _, err := e.CreateContainer("db", engine.ContainerSpec{ID: "c", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	return s
}

// manager sends a management request signed with key for the type and link the API documents.
func (s *tokenServer) manager(key *masterkey.Key, method, path, body string) *httptest.ResponseRecorder {
	res, err := parseResource(strings.TrimPrefix(path, "/_partita"))
	if err != nil {
		s.t.Fatal(err)
	}
	return s.send(key.Authorization(method, res.typ, res.link, s.clock().Format(http.TimeFormat)), method, path, body, nil)
}

func pk(v string) map[string]string {
	return map[string]string{"x-ms-documentdb-partitionkey": `["` + v + `"]`}
}

// TestManagementAccess: only the account key manages; the read-only key may list; resource
// tokens and unsigned requests are refused, and a refused change changes nothing.
func TestManagementAccess(t *testing.T) {
	s := newFaultServer(t)
	ro, _ := masterkey.Parse(testReadOnlyKey)
	rule := `{"database":"db","container":"c","operations":["read"],"status":503}`
	expect(t, s.manager(s.key, "POST", "/_partita/faults", rule), http.StatusCreated, "add with the account key")
	expect(t, s.manager(ro, "GET", "/_partita/faults", ""), http.StatusOK, "list with the read-only key")
	expect(t, s.manager(ro, "GET", "/_partita/faults/1", ""), http.StatusOK, "get with the read-only key")
	expect(t, s.manager(ro, "POST", "/_partita/faults", rule), http.StatusUnauthorized, "add with the read-only key")
	expect(t, s.manager(ro, "DELETE", "/_partita/faults/1", ""), http.StatusUnauthorized, "remove with the read-only key")
	expect(t, s.manager(ro, "POST", "/dbs/db/colls/c/partitions/0/split", ""), http.StatusUnauthorized, "split with the read-only key")
	expect(t, s.send("", "GET", "/_partita/faults", "", nil), http.StatusUnauthorized, "unsigned")
	// A signature for another link does not pass.
	wrong := s.key.Authorization("GET", "faults", "faults/1", s.clock().Format(http.TimeFormat))
	expect(t, s.send(wrong, "GET", "/_partita/faults", "", nil), http.StatusUnauthorized, "signed for another link")
	tok := s.permission("u", "all", `{"id":"all","permissionMode":"All","resource":"dbs/db/colls/c"}`, nil)
	expect(t, s.as(tok, "GET", "/_partita/faults", "", nil), http.StatusForbidden, "list with a resource token")
	expect(t, s.as(tok, "DELETE", "/_partita/faults", "", nil), http.StatusForbidden, "clear with a resource token")
	expect(t, s.as(tok, "POST", "/dbs/db/colls/c/partitions/0/split", "", nil), http.StatusForbidden, "split with a resource token")
	if n := len(s.h.faults.List()); n != 1 {
		t.Fatalf("%d rules after refused changes, want 1", n)
	}
	info, _ := s.e.ContainerInfo("db", "c")
	if len(info.Partitions) != 2 {
		t.Fatalf("%d partitions after refused splits, want 2", len(info.Partitions))
	}
	expect(t, s.manager(s.key, "GET", "/_partita/nothing", ""), http.StatusNotFound, "unknown management path")
	expect(t, s.manager(s.key, "PUT", "/_partita/faults/1", "{}"), http.StatusMethodNotAllowed, "replace a rule")
	// Draining: the account key only, a node of a cluster only, a body of the documented shape.
	expect(t, s.manager(ro, "POST", "/_partita/cluster/drain", `{"node":"127.0.0.1:7001"}`), http.StatusUnauthorized, "drain with the read-only key")
	expect(t, s.manager(s.key, "POST", "/_partita/cluster/drain", `{"node":"127.0.0.1:7001"}`), http.StatusBadRequest, "drain a node alone")
	expect(t, s.manager(s.key, "POST", "/_partita/cluster/drain", `{"nod":"x"}`), http.StatusBadRequest, "drain with a misspelt field")
	expect(t, s.manager(s.key, "GET", "/_partita/cluster/drain", ""), http.StatusMethodNotAllowed, "read a drain")
	expect(t, s.manager(s.key, "POST", "/_partita/cluster/other", "{}"), http.StatusNotFound, "unknown cluster path")
}

// TestFaultRuleAPI: rules are added, listed with their counters, read, refused when wrong, and
// removed one by one or all at once.
func TestFaultRuleAPI(t *testing.T) {
	s := newFaultServer(t)
	for _, bad := range []string{
		`{"status":500}`, `{"status":429,"retryAfter":5}`, `not json`, `{"status":410,"substatus":1}`,
		`{"status":429} {"status":429}`, `{"status":429,"operations":["select"]}`,
	} {
		w := s.manager(s.key, "POST", "/_partita/faults", bad)
		expect(t, w, http.StatusBadRequest, bad)
		if m := decode(t, w); m["code"] != "BadRequest" || m["message"] == "" {
			t.Errorf("%s: error body %v", bad, m)
		}
	}
	if s.h.faults.Armed() {
		t.Fatal("refused rules armed the set")
	}
	w := s.manager(s.key, "POST", "/_partita/faults", `{"database":"db","container":"c","status":429,"retryAfterMs":250,"count":2,"ttlMs":60000}`)
	expect(t, w, http.StatusCreated, "add")
	r := decode(t, w)
	if r["id"] != "1" || r["action"] != "429" || r["remaining"] != 2.0 || r["hits"] != 0.0 || r["expiresAt"] == nil {
		t.Fatalf("added rule %v", r)
	}
	expect(t, s.manager(s.key, "POST", "/_partita/faults", `{"latencyMs":1}`), http.StatusCreated, "add latency")
	w = s.manager(s.key, "GET", "/_partita/faults", "")
	expect(t, w, http.StatusOK, "list")
	var list struct {
		Rules []map[string]any `json:"rules"`
		Count int              `json:"_count"`
	}
	json.Unmarshal(w.Body.Bytes(), &list)
	if list.Count != 2 || len(list.Rules) != 2 || list.Rules[1]["action"] != "latency" {
		t.Fatalf("list %+v", list)
	}
	expect(t, s.manager(s.key, "DELETE", "/_partita/faults/2", ""), http.StatusNoContent, "remove")
	expect(t, s.manager(s.key, "DELETE", "/_partita/faults/2", ""), http.StatusNotFound, "remove again")
	expect(t, s.manager(s.key, "GET", "/_partita/faults/2", ""), http.StatusNotFound, "get removed")
	w = s.manager(s.key, "DELETE", "/_partita/faults", "")
	expect(t, w, http.StatusOK, "clear")
	if decode(t, w)["removed"] != 1.0 || s.h.faults.Armed() {
		t.Fatalf("clear: %s, armed %v", w.Body, s.h.faults.Armed())
	}
}

// TestInjectedAnswers: an injected answer has Cosmos's shape, is not applied, and only the
// requests the rule selects get it; the management API is never injected into.
func TestInjectedAnswers(t *testing.T) {
	s := newFaultServer(t)
	expect(t, s.manager(s.key, "POST", "/_partita/faults", `{"database":"db","container":"c","operations":["create"],"status":410,"substatus":1007,"count":1}`), http.StatusCreated, "rule")
	w := s.master("POST", "/dbs/db/colls/c/docs", `{"id":"a","pk":"a"}`, pk("a"))
	expect(t, w, http.StatusGone, "injected create")
	if w.Header().Get("X-Ms-Substatus") != "1007" || w.Header().Get("X-Ms-Activity-Id") == "" {
		t.Fatalf("injected headers %v", w.Header())
	}
	if m := decode(t, w); m["code"] != "Gone" || !strings.Contains(m["message"].(string), "Injected by Partita's fault rule 1") {
		t.Fatalf("injected body %v", m)
	}
	expect(t, s.master("GET", "/dbs/db/colls/c/docs/a", "", pk("a")), http.StatusNotFound, "the injected create was not applied")
	expect(t, s.master("POST", "/dbs/db/colls/c/docs", `{"id":"a","pk":"a"}`, pk("a")), http.StatusCreated, "the rule is spent")

	// 429 with its retry-after, on reads only.
	expect(t, s.manager(s.key, "POST", "/_partita/faults", `{"operations":["read"],"status":429,"retryAfterMs":250}`), http.StatusCreated, "rule")
	w = s.master("GET", "/dbs/db/colls/c/docs/a", "", pk("a"))
	expect(t, w, http.StatusTooManyRequests, "injected read")
	if w.Header().Get("X-Ms-Retry-After-Ms") != "250" || w.Header().Get("X-Ms-Substatus") != "3200" {
		t.Fatalf("429 headers %v", w.Header())
	}
	expect(t, s.master("GET", "/dbs/db/colls/c/docs", "", pk("a")), http.StatusOK, "read feed is another operation")

	// A rule on every operation of every container leaves the management API alone.
	expect(t, s.manager(s.key, "POST", "/_partita/faults", `{"status":503}`), http.StatusCreated, "rule")
	expect(t, s.master("GET", "/dbs/db/colls/c/pkranges", "", nil), http.StatusServiceUnavailable, "pkranges injected")
	expect(t, s.manager(s.key, "GET", "/_partita/faults", ""), http.StatusOK, "list while everything is injected")
	expect(t, s.master("GET", "/dbs/db/colls/c/partitions", "", nil), http.StatusOK, "partitions view")
	expect(t, s.master("POST", "/dbs/db/colls/c/partitions/0/split", "", nil), http.StatusOK, "split")
	expect(t, s.master("GET", "/dbs/db", "", nil), http.StatusOK, "database read")
	got, _ := s.h.faults.Get("3")
	if got.Hits != 1 {
		t.Fatalf("rule 3 hit %d times, want 1", got.Hits)
	}
}

// TestInjectByRange: a rule on a partition key range hits the requests whose key or range lie
// in it, and no other.
func TestInjectByRange(t *testing.T) {
	s := newFaultServer(t)
	ct, _ := s.e.Container("db", "c")
	in := map[uint32]string{}
	for i := 0; len(in) < 2; i++ {
		k := string(rune('a' + i))
		e, _ := ct.EPK(epk.Key{epk.String(k)})
		in[ct.PartitionID(e)] = k
	}
	expect(t, s.manager(s.key, "POST", "/_partita/faults", `{"database":"db","container":"c","partitionKeyRangeId":"1","status":449}`), http.StatusCreated, "rule")
	expect(t, s.master("GET", "/dbs/db/colls/c/docs/x", "", pk(in[1])), 449, "read in range 1")
	expect(t, s.master("GET", "/dbs/db/colls/c/docs/x", "", pk(in[0])), http.StatusNotFound, "read in range 0")
	q := map[string]string{"x-ms-documentdb-isquery": "true", "content-type": "application/query+json", "x-ms-documentdb-query-enablecrosspartition": "true"}
	q["x-ms-documentdb-partitionkeyrangeid"] = "0"
	expect(t, s.master("POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c"}`, q), http.StatusOK, "query on range 0")
	q["x-ms-documentdb-partitionkeyrangeid"] = "1"
	expect(t, s.master("POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c"}`, q), 449, "query on range 1")
}

// TestSplitEndpoint: a split on demand answers the children, which the partition key ranges
// then show; what cannot split is refused and changes nothing.
func TestSplitEndpoint(t *testing.T) {
	s := newFaultServer(t)
	w := s.master("POST", "/dbs/db/colls/c/partitions/1/split", `{"at":"30"}`, nil)
	expect(t, w, http.StatusOK, "split at 30")
	var resp SplitResponse
	json.Unmarshal(w.Body.Bytes(), &resp)
	if resp.Parent != 1 || len(resp.Children) != 2 || resp.Children[0].ID != 2 || resp.Children[1].ID != 3 ||
		resp.Children[0].MaxExclusive != "30" || resp.Children[1].MinInclusive != "30" || resp.Children[1].Parents[0] != 1 {
		t.Fatalf("split answer %s", w.Body)
	}
	w = s.master("GET", "/dbs/db/colls/c/pkranges", "", nil)
	expect(t, w, http.StatusOK, "pkranges")
	var ranges struct {
		Ranges []struct {
			ID      string   `json:"id"`
			Parents []string `json:"parents"`
		} `json:"PartitionKeyRanges"`
	}
	json.Unmarshal(w.Body.Bytes(), &ranges)
	if len(ranges.Ranges) != 3 || ranges.Ranges[2].ID != "3" || len(ranges.Ranges[2].Parents) != 1 || ranges.Ranges[2].Parents[0] != "1" {
		t.Fatalf("pkranges after the split: %s", w.Body)
	}
	for _, tc := range []struct {
		path, body string
		code       int
	}{
		{"/dbs/db/colls/c/partitions/1/split", "", http.StatusNotFound},              // gone
		{"/dbs/db/colls/c/partitions/x/split", "", http.StatusBadRequest},            // not an id
		{"/dbs/db/colls/c/partitions/0/split", `{"at":"zz"}`, http.StatusBadRequest}, // not hex
		{"/dbs/db/colls/c/partitions/0/split", `{"at":"30"}`, http.StatusBadRequest}, // outside
		{"/dbs/db/colls/c/partitions/0/split", `{"where":"10"}`, http.StatusBadRequest},
		{"/dbs/db/colls/nope/partitions/0/split", "", http.StatusNotFound},
	} {
		expect(t, s.master("POST", tc.path, tc.body, nil), tc.code, tc.path+" "+tc.body)
	}
	if info, _ := s.e.ContainerInfo("db", "c"); len(info.Partitions) != 3 {
		t.Fatalf("%d partitions after refused splits, want 3", len(info.Partitions))
	}
}

// The cluster status of a node alone: no node id, and each partition its own to lead.
func TestClusterStatusAlone(t *testing.T) {
	s := newFaultServer(t)
	w := s.manager(s.key, "GET", "/_partita/cluster", "")
	expect(t, w, http.StatusOK, "cluster status")
	var st engine.NodeStatus
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Node != 0 || len(st.Replicas) != 2 || !st.Replicas[0].Leading || st.Replicas[0].Container != "c" {
		t.Fatalf("status of a node alone: %+v", st)
	}
}

// The all-versions change feed starts from now or from a continuation only, as the service's:
// from the beginning or a point in time it is refused with 400 and the service's words.
func TestAllVersionsFeedStarts(t *testing.T) {
	s := newFaultServer(t)
	feed := func(hdr map[string]string) *httptest.ResponseRecorder {
		hdr["A-IM"] = "Full-Fidelity Feed"
		hdr["x-ms-documentdb-partitionkeyrangeid"] = "0"
		return s.master("GET", "/dbs/db/colls/c/docs", "", hdr)
	}
	for what, hdr := range map[string]map[string]string{
		"beginning":     {},
		"point in time": {"If-Modified-Since": "Mon, 02 Jan 2026 15:04:05 GMT"},
	} {
		w := feed(hdr)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "is not supported with 'All Versions and Deletes' mode") {
			t.Errorf("from the %s: %d %s", what, w.Code, w.Body)
		}
	}
	// From now and from a continuation the start is not what is refused (this server keeps no
	// versions, --change-feed-retention 0, which is refused for its own reason; the JavaScript
	// suite reads the mode from now).
	for what, start := range map[string]string{"now": "*", "a continuation": `"0"`} {
		if w := feed(map[string]string{"If-None-Match": start}); strings.Contains(w.Body.String(), "is not supported with") {
			t.Errorf("from %s: %d %s", what, w.Code, w.Body)
		}
	}
}
