package e2e

import (
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Partition metrics reach operators three ways: Prometheus, the JSON admin endpoint, and the
// `partita partitions` command.
func TestPartitionMetrics(t *testing.T) {
	s := startServer(t, true)
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	c.do(t, "POST", "/dbs", []byte(`{"id":"db"}`), nil)
	c.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"version":2}}`), map[string]string{"x-ms-offer-throughput": "20000"})
	for i := range 40 {
		pk := "hot"
		if i%4 == 0 {
			pk = fmt.Sprint("k", i)
		}
		if code, _, b := c.do(t, "POST", "/dbs/db/colls/c/docs", []byte(fmt.Sprintf(`{"id":"%d","pk":%q}`, i, pk)),
			map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf("[%q]", pk)}); code != 201 {
			t.Fatalf("create: %d %s", code, b)
		}
	}

	resp, err := s.client.Get(s.Endpoint + "metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`partita_partition_items{container="c",database="db",partition="0"}`, "partita_partition_ru_per_second", "partita_partition_throttled_total"} {
		if !strings.Contains(string(body), want) {
			t.Fatalf("/metrics lacks %s:\n%.2000s", want, body)
		}
	}

	out, err := exec.Command(partitaBin, "partitions", "--endpoint", s.Endpoint, "--db", "db", "--container", "c", "--insecure").CombinedOutput()
	if err != nil {
		t.Fatalf("partita partitions: %v\n%s", err, out)
	}
	text := string(out)
	// The hot logical partition is named by its key value, its EPK's first digits beside it.
	if !strings.Contains(text, "db / c: 4 physical partitions") || strings.Count(text, "\n") < 6 || !strings.Contains(text, "5000") ||
		!strings.Contains(text, `"hot" `) {
		t.Fatalf("partita partitions printed:\n%s", text)
	}
	// The hot logical partition (30 of the 40 writes) is named as the hottest of its partition,
	// with its key value; the ranges' places in the hash space are quarters.
	code, _, b := c.do(t, "GET", "/dbs/db/colls/c/partitions", nil, nil)
	if code != 200 || !strings.Contains(string(b), `"hottestLogicalPartitions":[{"epk"`) || !strings.Contains(string(b), `"items":30`) ||
		!strings.Contains(string(b), `"key":"hot"`) || !strings.Contains(string(b), `"hashStart":0,"hashEnd":0.25`) ||
		!strings.Contains(string(b), `"hashVersion":2`) {
		t.Fatalf("admin view: %d %s", code, b)
	}
	// A version 1 container's ranges are quarters of its hash space too, where their EPKs all
	// begin near 05C1.
	c.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"v1","partitionKey":{"paths":["/pk"],"version":1}}`), map[string]string{"x-ms-offer-throughput": "20000"})
	if code, _, b := c.do(t, "POST", "/dbs/db/colls/v1/docs", []byte(`{"id":"1","pk":"tenant-42"}`), map[string]string{"x-ms-documentdb-partitionkey": `["tenant-42"]`}); code != 201 {
		t.Fatalf("create: %d %s", code, b)
	}
	code, _, b = c.do(t, "GET", "/dbs/db/colls/v1/partitions", nil, nil)
	if code != 200 || !strings.Contains(string(b), `"hashVersion":1`) || !strings.Contains(string(b), `"hashStart":0.25,"hashEnd":0.5`) ||
		!strings.Contains(string(b), `"key":"tenant-42"`) {
		t.Fatalf("admin view of a version 1 container: %d %s", code, b)
	}
	// The writes just made show in the partitions' consumption history.
	if !strings.Contains(string(b), `"historyStepSeconds":5`) || !strings.Contains(string(b), `"normalizedRUHistory":[{"time":`) {
		t.Fatalf("admin view has no consumption history: %s", b)
	}
}
