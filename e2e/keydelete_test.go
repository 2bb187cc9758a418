package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Delete by partition key through the REST API, signed as the .NET, Java and Python SDKs sign
// it: the key's items are gone for queries at once while another key's stay; the deletion is
// listed in the partitions view and by partita partitions until the background deletion ends,
// and it goes on after the server is killed.
func TestDeleteByPartitionKey(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, false)
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	c.throughputContainer(t, 400)
	pad := strings.Repeat("x", 800)
	create := func(id, pk string) {
		t.Helper()
		for {
			code, _, b := c.do(t, "POST", "/dbs/db/colls/c/docs", []byte(fmt.Sprintf(`{"id":%q,"pk":%q,"pad":%q}`, id, pk, pad)),
				map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf(`[%q]`, pk)})
			if code == 429 {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			if code != 201 {
				t.Fatalf("create %s: %d %s", id, code, b)
			}
			return
		}
	}
	for i := range 60 {
		create(fmt.Sprintf("a%02d", i), "gone")
	}
	for i := range 5 {
		create(fmt.Sprintf("b%d", i), "kept")
	}
	ids := func(pk string) int {
		t.Helper()
		code, _, b := c.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"query":"SELECT c.id FROM c"}`), map[string]string{
			"x-ms-documentdb-isquery": "true", "content-type": "application/query+json",
			"x-ms-documentdb-partitionkey": fmt.Sprintf(`[%q]`, pk)})
		var resp struct{ Documents []json.RawMessage }
		if err := json.Unmarshal(b, &resp); code != 200 || err != nil {
			t.Fatalf("query of %s: %d %s", pk, code, b)
		}
		return len(resp.Documents)
	}
	deletions := func() int {
		t.Helper()
		code, _, b := c.do(t, "GET", "/dbs/db/colls/c/partitions", nil, nil)
		var resp struct {
			KeyDeletes []struct {
				PartitionKey json.RawMessage `json:"partitionKey"`
			} `json:"partitionKeyDeletes"`
		}
		if err := json.Unmarshal(b, &resp); code != 200 || err != nil {
			t.Fatalf("partitions view: %d %s", code, b)
		}
		return len(resp.KeyDeletes)
	}

	code, _, b := c.do(t, "POST", "/dbs/db/colls/c/operations/partitionkeydelete", nil, map[string]string{"x-ms-documentdb-partitionkey": `["gone"]`})
	if code != 200 {
		t.Fatalf("delete by partition key: %d %s", code, b)
	}
	if n, m := ids("gone"), ids("kept"); n != 0 || m != 5 {
		t.Fatalf("at once: %d items of the deleted key, %d of the other", n, m)
	}
	if n := deletions(); n != 1 {
		t.Fatalf("the partitions view lists %d deletions", n)
	}
	out, err := exec.Command(partitaBin, "partitions", "--endpoint", s.Endpoint, "--db", "db", "--container", "c").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `deleting the items of partition key ["gone"]`) {
		t.Fatalf("partita partitions: %v\n%s", err, out)
	}

	// Killed while its partition deletes at most 40 RU/s of about 600: the deletion goes on.
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s = startServerIn(t, dir, false)
	c.s = s
	if n, m := ids("gone"), ids("kept"); n != 0 || m != 5 {
		t.Fatalf("after the restart: %d items of the deleted key, %d of the other", n, m)
	}
	deadline := time.Now().Add(90 * time.Second)
	for deletions() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the deletion did not end within 90 s")
		}
		time.Sleep(500 * time.Millisecond)
	}
	code, _, b = c.do(t, "GET", "/dbs/db/colls/c/partitions", nil, nil)
	var view struct {
		Partitions []struct{ Items int } `json:"partitions"`
	}
	if err := json.Unmarshal(b, &view); code != 200 || err != nil || len(view.Partitions) != 1 || view.Partitions[0].Items != 5 {
		t.Fatalf("once the deletion ended, the partition holds: %d %s", code, b)
	}
}
