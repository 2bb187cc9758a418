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
