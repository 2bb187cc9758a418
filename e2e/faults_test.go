package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/masterkey"
)

// Fault injection and splits on demand through the management API, against the Go SDK
// (azcosmos v1.5.0 with the e2e client's 2 retries), the way an application's test suite uses
// them (docs/testing-your-app.md). What the SDK does with each injected answer is what it does
// with the service's: these tests pin it down, so the guide can say it.

// faultServer is a server whose containers start with 4 partitions, with the rate limit off
// so that every 429 seen is an injected one.
func faultServer(t *testing.T) (*server, rawClient) {
	s := startServer(t, false, "--min-partitions", "4", "--rate-limit=false")
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	return s, c
}

// manage sends a management request, signed as the API documents: type "faults" with link ""
// for /_partita/faults and "faults/{id}" for one rule.
func manage(t *testing.T, s *server, method, path string, body any) (int, []byte) {
	t.Helper()
	var payload []byte
	if body != nil {
		payload, _ = json.Marshal(body)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(s.Endpoint, "/")+path, bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	link := strings.TrimPrefix(strings.TrimPrefix(path, "/_partita/faults"), "/")
	if link != "" {
		link = "faults/" + link
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	key, _ := masterkey.Parse(emulatorKey)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("Authorization", key.Authorization(method, "faults", link, date))
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

type faultRule struct {
	ID        string `json:"id"`
	Action    string `json:"action"`
	Remaining *int64 `json:"remaining"`
	Hits      int64  `json:"hits"`
}

// addRule adds a fault rule and returns its id.
func addRule(t *testing.T, s *server, spec map[string]any) string {
	t.Helper()
	code, b := manage(t, s, "POST", "/_partita/faults", spec)
	if code != http.StatusCreated {
		t.Fatalf("add rule %v: %d %s", spec, code, b)
	}
	var r faultRule
	json.Unmarshal(b, &r)
	return r.ID
}

func getRule(t *testing.T, s *server, id string) faultRule {
	t.Helper()
	code, b := manage(t, s, "GET", "/_partita/faults/"+id, nil)
	if code != http.StatusOK {
		t.Fatalf("get rule %s: %d %s", id, code, b)
	}
	var r faultRule
	json.Unmarshal(b, &r)
	return r
}

func clearRules(t *testing.T, s *server) {
	t.Helper()
	if code, b := manage(t, s, "DELETE", "/_partita/faults", nil); code != http.StatusOK {
		t.Fatalf("clear rules: %d %s", code, b)
	}
}

// faultItems creates database db with container c on /pk (4 partitions) holding n items i0..
// with keys k0.. .
func faultItems(t *testing.T, s *server, n int) *azcosmos.ContainerClient {
	t.Helper()
	cl := s.sdk(t)
	ctx := ctx(t)
	if _, err := cl.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := cl.NewDatabase("db")
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "c",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Version: 2}}, nil); err != nil {
		t.Fatal(err)
	}
	c, _ := db.NewContainer("c")
	for i := range n {
		body := fmt.Sprintf(`{"id":"i%d","pk":"k%d","n":%d}`, i, i, i)
		if _, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString(fmt.Sprint("k", i)), []byte(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func readItem(t *testing.T, c *azcosmos.ContainerClient, i int) error {
	_, err := c.ReadItem(ctx(t), azcosmos.NewPartitionKeyString(fmt.Sprint("k", i)), fmt.Sprint("i", i), nil)
	return err
}

// TestGoSDKRecoversFromInjectedFaults: what the Go SDK does with each injected answer.
func TestGoSDKRecoversFromInjectedFaults(t *testing.T) {
	s, raw := faultServer(t)
	c := faultItems(t, s, 40)
	ctx := ctx(t)

	t.Run("429 is retried after the retry-after, and a rule for the next N fires N times", func(t *testing.T) {
		defer clearRules(t, s)
		id := addRule(t, s, map[string]any{"database": "db", "container": "c", "operations": []string{"read"}, "status": 429, "retryAfterMs": 20, "count": 2})
		if err := readItem(t, c, 1); err != nil {
			t.Fatalf("read after two injected 429s: %v", err)
		}
		for i := range 5 {
			if err := readItem(t, c, i); err != nil {
				t.Fatalf("read %d after the rule is spent: %v", i, err)
			}
		}
		if r := getRule(t, s, id); r.Hits != 2 || r.Remaining == nil || *r.Remaining != 0 {
			t.Fatalf("rule after its 2 requests: %+v", r)
		}
	})

	t.Run("410/1002 on ReadMany's queries: the SDK re-reads the ranges and retries", func(t *testing.T) {
		defer clearRules(t, s)
		var ids []azcosmos.ItemIdentity
		for _, i := range []int{0, 5, 11, 23, 38} {
			ids = append(ids, azcosmos.ItemIdentity{ID: fmt.Sprint("i", i), PartitionKey: azcosmos.NewPartitionKeyString(fmt.Sprint("k", i))})
		}
		if _, err := c.ReadManyItems(ctx, ids, nil); err != nil { // the SDK caches the ranges
			t.Fatal(err)
		}
		id := addRule(t, s, map[string]any{"database": "db", "container": "c", "operations": []string{"query"}, "status": 410, "substatus": 1002, "count": 1})
		// A rule that only counts: the ranges the SDK reads again after the 410.
		refresh := addRule(t, s, map[string]any{"database": "db", "container": "c", "operations": []string{"pkranges"}, "latencyMs": 1})
		resp, err := c.ReadManyItems(ctx, ids, nil)
		if err != nil {
			t.Fatalf("ReadMany after an injected 410/1002: %v", err)
		}
		if len(resp.Items) != len(ids) {
			t.Fatalf("ReadMany found %d items, want %d", len(resp.Items), len(ids))
		}
		if r := getRule(t, s, id); r.Hits != 1 {
			t.Fatalf("rule hit %d times, want 1", r.Hits)
		}
		if r := getRule(t, s, refresh); r.Hits == 0 {
			t.Fatal("the SDK did not read the partition key ranges again after the 410/1002")
		}
	})

	t.Run("410/1002 on a point read reaches the application", func(t *testing.T) {
		defer clearRules(t, s)
		addRule(t, s, map[string]any{"database": "db", "container": "c", "operations": []string{"read"}, "status": 410, "count": 1})
		if err := readItem(t, c, 3); statusOf(err) != http.StatusGone {
			t.Fatalf("point read under 410/1002: %v, want 410", err)
		}
		if err := readItem(t, c, 3); err != nil {
			t.Fatalf("the next read: %v", err)
		}
	})

	t.Run("410/1002 on a query reaches the application", func(t *testing.T) {
		defer clearRules(t, s)
		addRule(t, s, map[string]any{"database": "db", "container": "c", "operations": []string{"query"}, "status": 410, "count": 1})
		pager := c.NewQueryItemsPager("SELECT * FROM c", azcosmos.NewPartitionKey(), nil)
		if _, err := pager.NextPage(ctx); statusOf(err) != http.StatusGone {
			t.Fatalf("query under 410/1002: %v", err)
		}
		pager = c.NewQueryItemsPager("SELECT * FROM c", azcosmos.NewPartitionKey(), nil)
		if page, err := pager.NextPage(ctx); err != nil || len(page.Items) == 0 {
			t.Fatalf("the application's retry: %v", err)
		}
	})

	t.Run("449 reaches the application and the write is not applied", func(t *testing.T) {
		defer clearRules(t, s)
		addRule(t, s, map[string]any{"database": "db", "container": "c", "operations": []string{"create"}, "status": 449, "count": 1})
		body := []byte(`{"id":"new449","pk":"k449"}`)
		_, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString("k449"), body, nil)
		if statusOf(err) != 449 {
			t.Fatalf("create under 449: %v", err)
		}
		if _, err := c.ReadItem(ctx, azcosmos.NewPartitionKeyString("k449"), "new449", nil); statusOf(err) != http.StatusNotFound {
			t.Fatalf("the refused create was applied: %v", err)
		}
		if _, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString("k449"), body, nil); err != nil {
			t.Fatalf("the application's own retry: %v", err)
		}
	})

	t.Run("503 reaches the application (one region: nowhere to fail over)", func(t *testing.T) {
		defer clearRules(t, s)
		id := addRule(t, s, map[string]any{"database": "db", "container": "c", "operations": []string{"read"}, "status": 503, "count": 1})
		if err := readItem(t, c, 4); statusOf(err) != http.StatusServiceUnavailable {
			t.Fatalf("read under 503: %v", err)
		}
		if r := getRule(t, s, id); r.Hits != 1 {
			t.Fatalf("rule hit %d times, want 1", r.Hits)
		}
	})

	t.Run("408 on a read is retried once; on a write it reaches the application", func(t *testing.T) {
		defer clearRules(t, s)
		id := addRule(t, s, map[string]any{"database": "db", "container": "c", "operations": []string{"read"}, "status": 408, "count": 1})
		if err := readItem(t, c, 5); err != nil {
			t.Fatalf("read after an injected 408: %v", err)
		}
		if r := getRule(t, s, id); r.Hits != 1 {
			t.Fatalf("read rule hit %d times, want 1", r.Hits)
		}
		addRule(t, s, map[string]any{"database": "db", "container": "c", "operations": []string{"upsert"}, "status": 408, "count": 1})
		if _, err := c.UpsertItem(ctx, azcosmos.NewPartitionKeyString("k5"), []byte(`{"id":"i5","pk":"k5","n":-1}`), nil); statusOf(err) != http.StatusRequestTimeout {
			t.Fatalf("upsert under 408: %v", err)
		}
		got, _ := c.ReadItem(ctx, azcosmos.NewPartitionKeyString("k5"), "i5", nil)
		if !bytes.Contains(got.Value, []byte(`"n":5`)) {
			t.Fatalf("the refused upsert was applied: %s", got.Value)
		}
	})

	t.Run("latency delays, then serves", func(t *testing.T) {
		defer clearRules(t, s)
		id := addRule(t, s, map[string]any{"database": "db", "container": "c", "latencyMs": 30, "count": 3})
		for i := range 3 {
			if err := readItem(t, c, i); err != nil {
				t.Fatal(err)
			}
		}
		if r := getRule(t, s, id); r.Hits != 3 {
			t.Fatalf("latency rule hit %d times, want 3", r.Hits)
		}
	})

	t.Run("a rule on a partition key range hits only that range", func(t *testing.T) {
		defer clearRules(t, s)
		ranges := checkRangesTile(t, raw)
		target := ranges[2]
		id := addRule(t, s, map[string]any{"database": "db", "container": "c", "operations": []string{"read"}, "status": 503, "partitionKeyRangeId": target.ID})
		inside := 0
		for i := range 40 {
			e := epk.HashV2(epk.Key{epk.String(fmt.Sprint("k", i))}).Hex()
			in := e >= target.MinInclusive && (e < target.MaxExclusive || target.MaxExclusive == "FF")
			err := readItem(t, c, i)
			switch {
			case in && statusOf(err) != http.StatusServiceUnavailable:
				t.Fatalf("k%d (EPK %s) is in range %s [%s, %s) but its read answered %v", i, e, target.ID, target.MinInclusive, target.MaxExclusive, err)
			case !in && err != nil:
				t.Fatalf("k%d (EPK %s) is outside range %s but its read failed: %v", i, e, target.ID, err)
			}
			if in {
				inside++
			}
		}
		if r := getRule(t, s, id); inside == 0 || r.Hits != int64(inside) {
			t.Fatalf("%d keys in the range, rule hit %d times", inside, r.Hits)
		}
	})

	t.Run("an expired rule stops", func(t *testing.T) {
		defer clearRules(t, s)
		id := addRule(t, s, map[string]any{"database": "db", "container": "c", "operations": []string{"read"}, "status": 503, "ttlMs": 300})
		if err := readItem(t, c, 6); statusOf(err) != http.StatusServiceUnavailable {
			t.Fatalf("read before the rule expires: %v", err)
		}
		time.Sleep(400 * time.Millisecond) // past the TTL
		if err := readItem(t, c, 6); err != nil {
			t.Fatalf("read after the rule expired: %v", err)
		}
		if code, _ := manage(t, s, "GET", "/_partita/faults/"+id, nil); code != http.StatusNotFound {
			t.Fatalf("the expired rule is still listed: %d", code)
		}
	})

	t.Run("injected answers are counted in /metrics", func(t *testing.T) {
		resp, err := s.client.Get(s.Endpoint + "metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// Rule 1 (the first subtest) injected two 429s.
		for _, want := range []string{`partita_faults_injected_total{action="429",rule="1"} 2`, `partita_faults_injected_total{action="410/1002",rule="2"} 1`,
			`partita_faults_injected_total{action="latency",rule="`} {
			if !strings.Contains(string(body), want) {
				t.Fatalf("/metrics lacks %s:\n%s", want, grepLines(string(body), "partita_faults"))
			}
		}
	})
}

func grepLines(text, substr string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestGoSDKQueryAcrossInjectedSplits: a paginated cross-partition query whose partitions split
// between its pages (splits on demand through the management API) returns every item exactly
// once.
func TestGoSDKQueryAcrossInjectedSplits(t *testing.T) {
	s, raw := faultServer(t)
	c := faultItems(t, s, 200)
	ctx := ctx(t)
	for _, sql := range []string{"SELECT * FROM c", "SELECT * FROM c ORDER BY c.n"} {
		pager := c.NewQueryItemsPager(sql, azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{PageSizeHint: 25})
		seen := map[string]int{}
		pages := 0
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatalf("%s: page %d: %v", sql, pages, err)
			}
			pages++
			for _, b := range page.Items {
				var it struct{ ID string }
				json.Unmarshal(b, &it)
				seen[it.ID]++
			}
			if pages <= 3 { // split the widest live range after each of the first pages
				splitWidest(t, raw)
			}
		}
		if len(seen) != 200 || pages < 8 {
			t.Fatalf("%s: %d distinct items in %d pages, want 200 in at least 8", sql, len(seen), pages)
		}
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("%s: item %s returned %d times", sql, id, n)
			}
		}
	}
	if rs := checkRangesTile(t, raw); len(rs) != 10 {
		t.Fatalf("%d ranges after 6 splits of 4, want 10", len(rs))
	}
}

// splitWidest splits the live range with the lowest id (always one of the widest, since
// children get higher ids) through the management API.
func splitWidest(t *testing.T, raw rawClient) {
	t.Helper()
	rs := checkRangesTile(t, raw)
	sort.Slice(rs, func(i, j int) bool {
		return len(rs[i].ID) < len(rs[j].ID) || len(rs[i].ID) == len(rs[j].ID) && rs[i].ID < rs[j].ID
	})
	code, _, b := raw.do(t, "POST", "/dbs/db/colls/c/partitions/"+rs[0].ID+"/split", nil, nil)
	if code != http.StatusOK {
		t.Fatalf("split range %s: %d %s", rs[0].ID, code, b)
	}
}

// TestChaosCommands: `partita chaos` adds, lists and removes rules and splits partitions.
func TestChaosCommands(t *testing.T) {
	s, raw := faultServer(t)
	c := faultItems(t, s, 10)
	chaos := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(partitaBin, append(append([]string{"chaos"}, args...), "--endpoint", s.Endpoint)...).CombinedOutput()
		if err != nil {
			t.Fatalf("partita chaos %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := chaos("add", "--db", "db", "--container", "c", "--op", "read", "--status", "503", "--count", "2", "--ttl", "5m")
	if !regexp.MustCompile(`^rule 1: answer 503 to read on db/c, the next 2, until \d\d:\d\d:\d\d\n$`).MatchString(out) {
		t.Fatalf("chaos add printed %q", out)
	}
	chaos("add", "--op", "query,readfeed", "--latency", "10ms", "--rate", "0.5")
	for range 3 {
		readItem(t, c, 1)
	}
	out = chaos("list")
	if !regexp.MustCompile(`(?m)^1\s+503\s+db/c\s+read\s+always\s+0\s+2\s+\d\d:\d\d:\d\d$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^2\s+latency 10ms\s+every container\s+query,readfeed\s+0\.5\s+-\s+0\s+never$`).MatchString(out) {
		t.Fatalf("chaos list printed:\n%s", out)
	}
	if out := chaos("rm", "1"); out != "removed rule 1\n" {
		t.Fatalf("chaos rm printed %q", out)
	}
	if out := chaos("rm", "--all"); out != "removed 1 rules\n" {
		t.Fatalf("chaos rm --all printed %q", out)
	}
	if out := chaos("list"); out != "no fault rules\n" {
		t.Fatalf("chaos list printed %q", out)
	}
	bad, err := exec.Command(partitaBin, "chaos", "add", "--status", "500", "--endpoint", s.Endpoint).CombinedOutput()
	if err == nil || !strings.Contains(string(bad), "status 500 cannot be injected") {
		t.Fatalf("chaos add --status 500: %v %s", err, bad)
	}

	out = chaos("split", "--db", "db", "--container", "c", "--partition", "2")
	if !regexp.MustCompile(`^split partition 2 of db / c:\n  4 \[20000000…,28\) parents \[2\]\n  5 \[28,30000000…\) parents \[2\]\n$`).MatchString(out) {
		t.Fatalf("chaos split printed %q", out)
	}
	out = chaos("split", "--db", "db", "--container", "c") // the one with the most items
	if !strings.HasPrefix(out, "split partition ") {
		t.Fatalf("chaos split printed %q", out)
	}
	if rs := checkRangesTile(t, raw); len(rs) != 6 {
		t.Fatalf("%d ranges after two splits of 4", len(rs))
	}
	for i := range 10 {
		if err := readItem(t, c, i); err != nil {
			t.Fatalf("read %d after the splits: %v", i, err)
		}
	}
}
