package cosmos

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/masterkey"
)

// indexTestServer is a handler over a container whose policy indexes /name only, holding
// bob (indexed) and cyd (written with the Exclude directive).
func indexTestServer(t *testing.T) func(method, path, resType, resLink, body string, hdr map[string]string) *httptest.ResponseRecorder {
	e, err := engine.Open(engine.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	e.CreateDatabase("db", nil)
	policy := `{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/name/?"}],"excludedPaths":[{"path":"/*"}]}`
	if _, err := e.CreateContainer("db", engine.ContainerSpec{ID: "c", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/pk"}, Version: 2},
		Indexing: []byte(policy)}); err != nil {
		t.Fatal(err)
	}
	do := signedRequests(t, e)
	for _, it := range []struct{ body, directive string }{
		{`{"id":"bob","pk":"p","name":"Bob","age":25}`, ""},
		{`{"id":"cyd","pk":"p","name":"Cyd","age":25}`, "Exclude"},
	} {
		w := do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", it.body,
			map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-indexing-directive": it.directive})
		if w.Code != http.StatusCreated {
			t.Fatalf("create: %d %s", w.Code, w.Body)
		}
	}
	return do
}

// signedRequests serves e through a handler and returns a function that sends it a request
// signed for resType and resLink, as an SDK signs it.
func signedRequests(t *testing.T, e *engine.Engine) func(method, path, resType, resLink, body string, hdr map[string]string) *httptest.ResponseRecorder {
	h, err := NewHandler(e, Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := masterkey.Parse(testKey)
	return func(method, path, resType, resLink, body string, hdr map[string]string) *httptest.ResponseRecorder {
		date := time.Now().UTC().Format(http.TimeFormat)
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("x-ms-date", date)
		req.Header.Set("Authorization", key.Authorization(strings.ToLower(method), resType, resLink, date))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return received(w)
	}
}

func TestIndexMetricsHeader(t *testing.T) {
	do := indexTestServer(t)
	query := func(sql string, hdr map[string]string) *httptest.ResponseRecorder {
		h := map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true",
			"x-ms-documentdb-query-enablecrosspartition": "true"}
		for k, v := range hdr {
			h[k] = v
		}
		w := do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", `{"query":"`+sql+`"}`, h)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", sql, w.Code, w.Body)
		}
		return w
	}
	// Without the request header, no index metrics.
	if w := query("SELECT * FROM c WHERE c.name = 'Bob'", nil); w.Header().Get("x-ms-cosmos-index-utilization") != "" {
		t.Error("index metrics sent without x-ms-cosmos-populateindexmetrics")
	}
	metrics := func(sql string) (map[string][]map[string]any, string) {
		w := query(sql, map[string]string{"x-ms-cosmos-populateindexmetrics": "true"})
		raw, err := base64.StdEncoding.DecodeString(w.Header().Get("x-ms-cosmos-index-utilization"))
		if err != nil {
			t.Fatalf("%s: index metrics are not base64: %v", sql, err)
		}
		var m map[string][]map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: index metrics %s: %v", sql, raw, err)
		}
		return m, w.Header().Get("x-ms-documentdb-query-metrics")
	}
	m, qm := metrics("SELECT * FROM c WHERE c.name = 'Bob'")
	if u := m["UtilizedSingleIndexes"]; len(u) != 1 || u[0]["IndexSpec"] != "/name/?" || u[0]["IndexImpactScore"] != "High" {
		t.Errorf("utilized %v", m["UtilizedSingleIndexes"])
	}
	for _, k := range []string{"PotentialSingleIndexes", "UtilizedCompositeIndexes", "PotentialCompositeIndexes"} {
		if v, ok := m[k]; !ok || len(v) != 0 {
			t.Errorf("%s: %v, want an empty list", k, v)
		}
	}
	if !strings.Contains(qm, "retrievedDocumentCount=1;") || !strings.Contains(qm, "indexUtilizationRatio=1.00") {
		t.Errorf("query metrics of an index read: %s", qm)
	}
	// A filter on a path the policy leaves out scans the partition (the excluded item is not
	// read: it is not the query's) and names the missing index.
	m, qm = metrics("SELECT * FROM c WHERE c.age = 25")
	if p := m["PotentialSingleIndexes"]; len(p) != 1 || p[0]["IndexSpec"] != "/age/?" || len(m["UtilizedSingleIndexes"]) != 0 {
		t.Errorf("metrics of a scan: %v", m)
	}
	if !strings.Contains(qm, "retrievedDocumentCount=1;") || !strings.Contains(qm, "outputDocumentCount=1;") || !strings.Contains(qm, "indexUtilizationRatio=0.00") {
		t.Errorf("query metrics of a scan: %s", qm)
	}
}

func TestIndexingDirectiveHeader(t *testing.T) {
	do := indexTestServer(t)
	w := do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", `{"id":"x","pk":"p"}`,
		map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-indexing-directive": "Sometimes"})
	if w.Code != http.StatusBadRequest {
		t.Errorf("an invalid directive: %d %s", w.Code, w.Body)
	}
	// The excluded item is still there for point reads.
	w = do("GET", "/dbs/db/colls/c/docs/cyd", "docs", "dbs/db/colls/c/docs/cyd", "", map[string]string{"x-ms-documentdb-partitionkey": `["p"]`})
	if w.Code != http.StatusOK {
		t.Errorf("reading the excluded item: %d %s", w.Code, w.Body)
	}
}
