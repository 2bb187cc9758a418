package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/gocql/gocql"
	"github.com/partita-db/partita/internal/controlplane/controlplanetest"
)

// Four processes with --replicas 3: each partition lives on three of them, so every node
// lacks a replica of some partition (the node that created the container aside). Every node
// still serves all of it: the Go SDK writes, reads, patches, runs a stored procedure, queries
// across partitions and reads the change feed through each node, and gocql inserts, selects
// and runs compare-and-set increments through each, those on partitions a node does not hold
// served by a node that does.
func TestClusterReplicasProcesses(t *testing.T) {
	cqlAddrs := []string{controlplanetest.FreeAddr(t), controlplanetest.FreeAddr(t), controlplanetest.FreeAddr(t), controlplanetest.FreeAddr(t)}
	nodes := startClusterOf(t, 4, func(i int) []string { return []string{"--replicas", "3", "--cql-addr", cqlAddrs[i]} })
	cx := ctx(t)
	createDBAndContainer(t, nodes[0].sdk(t), nodes[0].sdk(t), 12000) // two partitions
	cs := containersOn(t, nodes)

	// Where the replicas are, as the nodes' metrics count them: three per partition, and a
	// node holding fewer than both.
	held := map[int]int{}
	retrying(t, "the replicas placed", func() error {
		total := 0
		for i, n := range nodes {
			held[i] = int(metricValue(t, n.server, "partita_node_replicas"))
			total += held[i]
		}
		if total != 6 {
			return fmt.Errorf("%d replicas in all (%v), want 6", total, held)
		}
		return nil
	})
	if !slices.ContainsFunc([]int{0, 1, 2, 3}, func(i int) bool { return held[i] < 2 }) {
		t.Fatalf("every node holds both partitions: %v", held)
	}

	const perNode = 12
	pk := func(i int) string { return fmt.Sprint("k", i%7) }
	for n, c := range cs {
		for j := range perNode {
			i := n*perNode + j
			body := fmt.Sprintf(`{"id":"%d","pk":%q,"n":0}`, i, pk(i))
			retrying(t, "create", func() error {
				_, err := c.UpsertItem(cx, azcosmos.NewPartitionKeyString(pk(i)), []byte(body), nil)
				return err
			})
		}
	}
	total := len(cs) * perNode
	for n, c := range cs {
		for i := range total {
			if _, err := c.ReadItem(cx, azcosmos.NewPartitionKeyString(pk(i)), fmt.Sprint(i), nil); err != nil {
				t.Fatalf("node %d reads item %d: %v", n, i, err)
			}
		}
		if got := countAll(t, c); got != total {
			t.Fatalf("node %d counts %d items, want %d", n, got, total)
		}
		pager := c.NewQueryItemsPager("SELECT VALUE c.id FROM c ORDER BY c.id DESC", azcosmos.NewPartitionKey(), nil)
		var ids []string
		for pager.More() {
			page, err := pager.NextPage(cx)
			if err != nil {
				t.Fatalf("node %d, ORDER BY: %v", n, err)
			}
			for _, raw := range page.Items {
				var id string
				json.Unmarshal(raw, &id)
				ids = append(ids, id)
			}
		}
		if desc := func(a, b string) int { return strings.Compare(b, a) }; len(ids) != total || !slices.IsSortedFunc(ids, desc) {
			t.Fatalf("node %d, ORDER BY c.id DESC: %d ids, sorted %v", n, len(ids), slices.IsSortedFunc(ids, desc))
		}
		feed := map[string]bool{}
		opts := azcosmos.ChangeFeedOptions{FeedRange: &azcosmos.FeedRange{MinInclusive: "", MaxExclusive: "FF"}, StartFrom: &time.Time{}}
		for range 100 {
			resp, err := c.ReadChangeFeed(cx, &opts)
			if err != nil {
				t.Fatalf("node %d, change feed: %v", n, err)
			}
			if resp.Count == 0 {
				break
			}
			for _, raw := range resp.Items {
				var ch struct{ ID string }
				json.Unmarshal(raw, &ch)
				feed[ch.ID] = true
			}
			opts.Continuation, opts.StartFrom = &resp.ContinuationToken, nil
		}
		if len(feed) != total {
			t.Fatalf("node %d: the change feed has %d items, want %d", n, len(feed), total)
		}
	}

	// Patches and a stored procedure on every logical partition, through every node.
	raw := rawClient{s: nodes[0].server, key: emulatorKey, now: time.Now}
	if code, _, b := raw.do(t, "POST", "/dbs/db/colls/c/sprocs", []byte(`{"id":"bump","body":"function bump(id) { var c = getContext().getCollection(); c.readDocument(c.getAltLink() + '/docs/' + id, {}, function (err, d) { if (err) throw err; d.n += 1; c.replaceDocument(d._self, d, {}, function (err) { if (err) throw err; }); }); }"}`), map[string]string{"Content-Type": "application/json"}); code != http.StatusCreated {
		t.Fatalf("create the procedure: %d %s", code, b)
	}
	for n, c := range cs {
		for k := range 7 {
			key := azcosmos.NewPartitionKeyString(pk(k))
			retrying(t, "patch", func() error {
				var ops azcosmos.PatchOperations
				ops.AppendIncrement("/n", 1)
				_, err := c.PatchItem(cx, key, fmt.Sprint(k), ops, nil)
				return err
			})
			rn := rawClient{s: nodes[n].server, key: emulatorKey, now: time.Now}
			retrying(t, "procedure", func() error {
				code, _, b := rn.do(t, "POST", "/dbs/db/colls/c/sprocs/bump", []byte(fmt.Sprintf(`["%d"]`, k)),
					map[string]string{"Content-Type": "application/json", "x-ms-documentdb-partitionkey": fmt.Sprintf(`[%q]`, pk(k))})
				if code != http.StatusOK {
					return fmt.Errorf("%d %s", code, b)
				}
				return nil
			})
		}
	}
	for k := range 7 {
		resp, err := cs[3].ReadItem(cx, azcosmos.NewPartitionKeyString(pk(k)), fmt.Sprint(k), nil)
		if err != nil {
			t.Fatal(err)
		}
		var item struct{ N int }
		json.Unmarshal(resp.Value, &item)
		if item.N != 2*len(cs) {
			t.Errorf("item %d: n = %d after a patch and a procedure through each of %d nodes", k, item.N, len(cs))
		}
	}

	// The Cassandra API through every node.
	var sessions []*gocql.Session
	for i := range nodes {
		sessions = append(sessions, nodeSession(t, cqlAddrs[i]))
	}
	mustExec(t, sessions[0], `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`)
	mustExec(t, sessions[0], `CREATE TABLE shop.accounts (owner text, name text, balance bigint, PRIMARY KEY (owner, name)) WITH cosmosdb_provisioned_throughput = 12000`)
	for i := range 40 {
		retrying(t, "insert", func() error {
			return sessions[i%4].Query(`INSERT INTO shop.accounts (owner, name, balance) VALUES (?, ?, ?)`, fmt.Sprint("o", i%8), fmt.Sprint("a", i), int64(0)).Exec()
		})
	}
	for n, s := range sessions {
		var count int
		if err := s.Query(`SELECT COUNT(*) FROM shop.accounts`).Scan(&count); err != nil || count != 40 {
			t.Fatalf("node %d counts %d rows, want 40 (%v)", n, count, err)
		}
		for o := range 8 {
			if err := s.Query(`SELECT COUNT(*) FROM shop.accounts WHERE owner = ?`, fmt.Sprint("o", o)).Scan(&count); err != nil || count != 5 {
				t.Fatalf("node %d counts %d rows of o%d, want 5 (%v)", n, count, o, err)
			}
			for done := false; !done; {
				var b int64
				if err := s.Query(`SELECT balance FROM shop.accounts WHERE owner = ? AND name = ?`, fmt.Sprint("o", o), fmt.Sprint("a", o)).Scan(&b); err != nil {
					t.Fatalf("node %d reads: %v", n, err)
				}
				applied, err := s.Query(`UPDATE shop.accounts SET balance = ? WHERE owner = ? AND name = ? IF balance = ?`, b+1, fmt.Sprint("o", o), fmt.Sprint("a", o), b).ScanCAS(new(int64))
				if err != nil {
					t.Fatalf("node %d, compare-and-set: %v", n, err)
				}
				done = applied
			}
		}
	}
	for o := range 8 {
		var b int64
		if err := sessions[1].Query(`SELECT balance FROM shop.accounts WHERE owner = ? AND name = ?`, fmt.Sprint("o", o), fmt.Sprint("a", o)).Scan(&b); err != nil || b != 4 {
			t.Errorf("row a%d: balance %d after an increment through each of four nodes (%v)", o, b, err)
		}
	}
	t.Logf("replicas per node %v; %d items and 40 rows served through every node", held, total)
}

// metricValue is the value of an unlabelled metric on s's /metrics; 0 when it has none.
func metricValue(t *testing.T, s *server, name string) float64 {
	t.Helper()
	resp, err := s.client.Get(s.Endpoint + "metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v
		}
	}
	return 0
}
