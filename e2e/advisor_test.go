package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/partita-db/partita/internal/advisor"
)

// orderItems are n orders over three regions (the low-cardinality key), 400 customers and a
// unique id, as JSON lines.
func orderItems(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf(`{"id":"o%d","region":%q,"customer":"cust%d","total":%d}`, i, []string{"eu", "us", "asia"}[i%3], (i*7)%400, i%97))
	}
	return out
}

// A low-cardinality key gets synthetic-key proposals from `partita advise --file`, and each
// proposal's predicted spread over 4 physical partitions is what Partita does with the data:
// the items, loaded with the proposed key into a container with 4 partitions, fall into its
// partitions in exactly the predicted counts. Two layouts: a container created with 20,000
// RU/s (4 equal ranges at creation) and one raised from 400 to 40,000 RU/s (split in two,
// then each half in two: midpoints of equal halves are the same boundaries).
func TestAdvisorSyntheticSpreadMatchesPartita(t *testing.T) {
	dir := t.TempDir()
	items := orderItems(1200)
	file := filepath.Join(dir, "orders.jsonl")
	os.WriteFile(file, append(slices.Concat(joinLines(items)...), '\n'), 0o600)
	queries := filepath.Join(dir, "queries.sql")
	os.WriteFile(queries, []byte(strings.Repeat("SELECT * FROM c WHERE c.region = @region\n", 9)+"SELECT * FROM c WHERE c.customer = 'cust1'\n"), 0o600)

	out, err := exec.Command(partitaBin, "advise", "--file", file, "--queries", queries, "--current", "/region",
		"--partitions", "4", "--write-rate", "40000", "--json").Output()
	if err != nil {
		t.Fatalf("partita advise --json: %v\n%s", err, out)
	}
	var adv advisor.Advice
	if err := json.Unmarshal(out, &adv); err != nil {
		t.Fatal(err)
	}
	for _, c := range adv.Candidates {
		if strings.Join(c.Paths, ",") == "/region" && (c.Verdict != "poor" || !slices.ContainsFunc(c.Reasons, func(r string) bool {
			return strings.Contains(r, "only 3 distinct values")
		})) {
			t.Fatalf("/region: %+v", c)
		}
		if len(c.Paths) == 1 && c.Verdict == "good" {
			t.Fatalf("a good single key: %+v", c)
		}
	}
	if len(adv.Synthetic) != 3 || adv.Queries != 10 {
		t.Fatalf("%d synthetic proposals, %d queries:\n%s", len(adv.Synthetic), adv.Queries, out)
	}
	text, err := exec.Command(partitaBin, "advise", "--file", file, "--queries", queries, "--current", "/region", "--partitions", "4").CombinedOutput()
	if err != nil || !strings.Contains(string(text), "No single property is a good key") || !strings.Contains(string(text), "hash-suffix") {
		t.Fatalf("partita advise: %v\n%s", err, text)
	}

	s := startServer(t, false)
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	if code, _, b := c.do(t, "POST", "/dbs", []byte(`{"id":"db"}`), nil); code != 201 {
		t.Fatalf("create database: %d %s", code, b)
	}
	for i, syn := range adv.Synthetic {
		for _, raise := range []bool{false, true} {
			name := fmt.Sprintf("%s-%v", syn.Kind, raise)
			ru := "20000"
			if raise {
				ru = "400"
			}
			if code, _, b := c.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"`+name+`","partitionKey":{"paths":["/partitionKey"],"version":2}}`),
				map[string]string{"x-ms-offer-throughput": ru}); code != 201 {
				t.Fatalf("create container: %d %s", code, b)
			}
			if raise {
				tp := azcosmos.NewManualThroughputProperties(40000)
				ct, err := s.sdk(t).NewContainer("db", name)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ct.ReplaceThroughput(ctx(t), tp, nil); err != nil {
					t.Fatal(err)
				}
			}
			values := advisor.SyntheticValues(syn, items)
			for j, raw := range items {
				var m map[string]any
				json.Unmarshal(raw, &m)
				m["partitionKey"] = values[j]
				body, _ := json.Marshal(m)
				pk, _ := json.Marshal([]string{values[j]})
				if code, _, b := c.do(t, "POST", "/dbs/db/colls/"+name+"/docs", body, map[string]string{"x-ms-documentdb-partitionkey": string(pk)}); code != 201 {
					t.Fatalf("create item: %d %s", code, b)
				}
			}
			got := partitionCounts(t, c, name)
			want := make([]int64, len(syn.PredictedSpread))
			for k, sh := range syn.PredictedSpread {
				want[k] = int64(sh.Items)
			}
			t.Logf("%s: items per partition %v, predicted %v", name, got, want)
			if !slices.Equal(got, want) {
				t.Errorf("proposal %d (%s), container raised=%v: items per partition %v, predicted %v", i, syn.Kind, raise, got, want)
			}
		}
	}
}

func joinLines(items [][]byte) [][]byte {
	out := make([][]byte, 0, 2*len(items))
	for i, it := range items {
		if i > 0 {
			out = append(out, []byte("\n"))
		}
		out = append(out, it)
	}
	return out
}

// partitionCounts is the container's items per physical partition, in EPK order, from the
// admin view.
func partitionCounts(t *testing.T, c rawClient, container string) []int64 {
	t.Helper()
	code, _, b := c.do(t, "GET", "/dbs/db/colls/"+container+"/partitions", nil, nil)
	var resp struct {
		Partitions []struct {
			MinInclusive string `json:"minInclusive"`
			Items        int64  `json:"items"`
		} `json:"partitions"`
	}
	if code != 200 || json.Unmarshal(b, &resp) != nil {
		t.Fatalf("partitions: %d %s", code, b)
	}
	sort.Slice(resp.Partitions, func(i, j int) bool { return resp.Partitions[i].MinInclusive < resp.Partitions[j].MinInclusive })
	out := make([]int64, len(resp.Partitions))
	for i, p := range resp.Partitions {
		out[i] = p.Items
	}
	return out
}

// The advice endpoint answers the shape the explorer reads, from the container's items, the
// request units its logical partitions drew and the queries it ran (once per query, not per
// page); `partita advise --db --container` prints it; a missing container is 404 and bad
// parameters are 400, in Cosmos's error shape.
func TestAdviceEndpoint(t *testing.T) {
	s := startServer(t, true)
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	c.do(t, "POST", "/dbs", []byte(`{"id":"db"}`), nil)
	if code, _, b := c.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"orders","partitionKey":{"paths":["/region"],"version":2}}`),
		map[string]string{"x-ms-offer-throughput": "20000"}); code != 201 {
		t.Fatalf("create container: %d %s", code, b)
	}
	for _, raw := range orderItems(600) {
		var m struct{ Region string }
		json.Unmarshal(raw, &m)
		if code, _, b := c.do(t, "POST", "/dbs/db/colls/orders/docs", raw, map[string]string{"x-ms-documentdb-partitionkey": `["` + m.Region + `"]`}); code != 201 {
			t.Fatalf("create item: %d %s", code, b)
		}
	}
	query := func(body string, extra map[string]string) (string, []byte) {
		h := map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true",
			"x-ms-documentdb-query-enablecrosspartition": "true"}
		for k, v := range extra {
			h[k] = v
		}
		code, hdr, b := c.do(t, "POST", "/dbs/db/colls/orders/docs", []byte(body), h)
		if code != 200 {
			t.Fatalf("query: %d %s", code, b)
		}
		return hdr.Get("x-ms-continuation"), b
	}
	// Three runs by region, each read in pages of 50 (200 results: four pages, one query).
	for range 3 {
		next, _ := query(`{"query":"SELECT * FROM c WHERE c.region = @r","parameters":[{"name":"@r","value":"eu"}]}`, map[string]string{"x-ms-max-item-count": "50"})
		pages := 1
		for next != "" {
			next, _ = query(`{"query":"SELECT * FROM c WHERE c.region = @r","parameters":[{"name":"@r","value":"eu"}]}`,
				map[string]string{"x-ms-max-item-count": "50", "x-ms-continuation": next})
			pages++
		}
		if pages < 2 {
			t.Fatalf("%d pages", pages)
		}
	}
	// An SDK that plans a query asks for its plan, which counts as the query (it never sends
	// the query whole), then runs it range by range: those requests are not queries of their
	// own.
	query(`{"query":"SELECT * FROM c WHERE c.customer = 'cust7'"}`, map[string]string{"x-ms-cosmos-is-query-plan-request": "true",
		"x-ms-cosmos-supported-query-features": "Aggregate, Distinct, MultipleOrderBy, OffsetAndLimit, OrderBy, Top, CompositeAggregate, GroupBy, MultipleAggregates"})
	query(`{"query":"SELECT * FROM c WHERE c.customer = 'cust7'"}`, map[string]string{"x-ms-documentdb-partitionkeyrangeid": "0"})

	code, _, b := c.do(t, "GET", "/dbs/db/colls/orders/advice?sample=500&partitions=4", nil, nil)
	if code != 200 {
		t.Fatalf("advice: %d %s", code, b)
	}
	// The shape, by name, as the explorer reads it.
	var shape map[string]any
	json.Unmarshal(b, &shape)
	for _, k := range []string{"database", "container", "sampled", "current", "candidates", "synthetic"} {
		if _, ok := shape[k]; !ok {
			t.Fatalf("advice lacks %q: %s", k, b)
		}
	}
	cand := shape["candidates"].([]any)[0].(map[string]any)
	for _, k := range []string{"paths", "rank", "score", "verdict", "cardinality", "storageSkew", "requestSkew", "fanOutShare", "capRisk", "reasons"} {
		if _, ok := cand[k]; !ok {
			t.Fatalf("candidate lacks %q: %v", k, cand)
		}
	}
	syn := shape["synthetic"].([]any)
	if len(syn) == 0 {
		t.Fatalf("no synthetic proposals for a 3-value key: %s", b)
	}
	for _, k := range []string{"kind", "description", "paths", "suffixes", "predictedSpread", "reasons"} {
		if _, ok := syn[1].(map[string]any)[k]; !ok {
			t.Fatalf("synthetic proposal lacks %q: %v", k, syn[1])
		}
	}
	spread := syn[0].(map[string]any)["predictedSpread"].([]any)[0].(map[string]any)
	if _, ok := spread["partition"]; !ok || spread["share"] == nil {
		t.Fatalf("spread entry: %v", spread)
	}

	var adv advisor.Advice
	json.Unmarshal(b, &adv)
	if adv.Database != "db" || adv.Container != "orders" || adv.Sampled != 500 || !slices.Equal(adv.Current, []string{"/region"}) ||
		adv.Partitions != 4 || adv.TotalItems != 600 || adv.Queries != 4 {
		t.Fatalf("advice: %+v", adv)
	}
	byPaths := map[string]advisor.Candidate{}
	for _, c := range adv.Candidates {
		byPaths[strings.Join(c.Paths, ",")] = c
	}
	region, customer := byPaths["/region"], byPaths["/customer"]
	// Three of the four queries pin one region; one pins a customer.
	if !region.IsCurrent || region.Verdict != "poor" || region.FanOutShare == nil || *region.FanOutShare != 0.25 ||
		customer.FanOutShare == nil || *customer.FanOutShare != 0.75 {
		t.Fatalf("/region %+v\n/customer %+v", region, customer)
	}
	// The writes charged each region's logical partition: the current key has a request skew,
	// and a key the current one does not determine has none.
	if region.RequestSkew == nil || customer.RequestSkew != nil {
		t.Fatalf("request skew: /region %v, /customer %v", region.RequestSkew, customer.RequestSkew)
	}

	out, err := exec.Command(partitaBin, "advise", "--endpoint", s.Endpoint, "--insecure", "--db", "db", "--container", "orders", "--sample", "500").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "db / orders: 500 items sampled of 600; current partition key /region") ||
		!strings.Contains(string(out), "/region (current)") {
		t.Fatalf("partita advise: %v\n%s", err, out)
	}

	if code, _, b := c.do(t, "GET", "/dbs/db/colls/nope/advice", nil, nil); code != 404 {
		t.Fatalf("missing container: %d %s", code, b)
	} else {
		cosmosError(t, b)
	}
	for _, q := range []string{"sample=0", "sample=abc", "sample=10001", "partitions=0", "partitions=5000", "writeRate=-1", "growth=0.5", "growth=NaN"} {
		code, _, b := c.do(t, "GET", "/dbs/db/colls/orders/advice?"+q, nil, nil)
		if code != 400 {
			t.Fatalf("?%s: %d %s", q, code, b)
		}
		if msg := cosmosError(t, b); !strings.Contains(msg, "query parameter") {
			t.Fatalf("?%s: %s", q, msg)
		}
	}
	out, err = exec.Command(partitaBin, "advise", "--endpoint", s.Endpoint, "--insecure", "--db", "db", "--container", "nope").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "404") {
		t.Fatalf("partita advise of a missing container: %v\n%s", err, out)
	}
}

// `partita advise` refuses what it cannot judge, with a message and a failing exit status.
func TestAdviseCommandRefuses(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"a\":1}\nnot json\n"), 0o600)
	good := filepath.Join(dir, "good.jsonl")
	os.WriteFile(good, []byte("{\"a\":1}\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give --db and --container, or --file"},
		{[]string{"--file", bad}, "line 2 is not JSON"},
		{[]string{"--file", filepath.Join(dir, "absent")}, "no such file"},
		{[]string{"--file", good, "--current", "region"}, "is not a partition key path"},
		{[]string{"--file", good, "--db", "db", "--container", "c"}, "not both"},
		{[]string{"--file", good, "--sample", "5"}, "--sample is for --db"},
		{[]string{"--db", "db", "--container", "c", "--queries", good}, "are for --file"},
	} {
		out, err := exec.Command(partitaBin, append([]string{"advise"}, tc.args...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("advise %v: %v\n%s", tc.args, err, out)
		}
	}
}
