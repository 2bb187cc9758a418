package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"gopkg.in/inf.v0"

	"github.com/partita-db/partita/internal/controlplane/controlplanetest"
)

// The Cassandra API through gocql v1.7.0, token-aware, against a real partita serve: schema,
// prepared statements routed by token, paging over 10,000 rows, batches, lightweight
// transactions, TTL, token ranges that cover the ring exactly once (across partitions split
// by throughput), errors with Cassandra's codes, and 429s as Overloaded.

// cqlServer starts a server with the Cassandra API on a free port and returns a session
// factory for it.
func cqlServer(t testing.TB, useTLS bool, extraArgs ...string) (*server, *gocql.ClusterConfig) {
	t.Helper()
	addr := controlplanetest.FreeAddr(t)
	s := startServer(t, useTLS, append([]string{"--cql-addr", addr}, extraArgs...)...)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the CQL port %s did not open", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cluster := gocql.NewCluster("127.0.0.1")
	_, port, _ := net.SplitHostPort(addr)
	cluster.Port, _ = strconv.Atoi(port)
	cluster.ProtoVersion = 4
	cluster.Timeout = 20 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	cluster.Authenticator = gocql.PasswordAuthenticator{Username: "partita", Password: emulatorKey}
	cluster.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	cluster.Consistency = gocql.LocalQuorum
	cluster.RetryPolicy = overloadedRetry{}
	if useTLS {
		cluster.SslOpts = &gocql.SslOptions{Config: s.tlsConfig(t)}
	}
	return s, cluster
}

// overloadedRetry retries a statement refused with Overloaded (a 429) on the same node after a
// growing pause, and nothing else: the retry policy Cosmos DB's Cassandra API asks clients to
// use. gocql's own policies retry on the next host, and Partita is one.
type overloadedRetry struct{}

func (overloadedRetry) Attempt(q gocql.RetryableQuery) bool {
	if q.Attempts() > 20 {
		return false
	}
	time.Sleep(time.Duration(min(q.Attempts(), 10)) * 50 * time.Millisecond)
	return true
}

func (overloadedRetry) GetRetryType(err error) gocql.RetryType {
	var re gocql.RequestError
	if errors.As(err, &re) && re.Code() == gocql.ErrCodeOverloaded {
		return gocql.Retry
	}
	return gocql.Rethrow
}

func cqlSession(t testing.TB, cluster *gocql.ClusterConfig) *gocql.Session {
	t.Helper()
	sess, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(sess.Close)
	return sess
}

func mustExec(t testing.TB, sess *gocql.Session, stmt string, values ...any) {
	t.Helper()
	if err := sess.Query(stmt, values...).Exec(); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

func TestCQLWithGocql(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", useTLS), func(t *testing.T) {
			srv, cluster := cqlServer(t, useTLS)
			sess := cqlSession(t, cluster)
			testCQLSchema(t, sess)
			testCQLPrepared(t, sess)
			if !useTLS {
				testCQLPaging(t, sess)
				testCQLTableInMetrics(t, srv)
				testCQLBatchesAndLWT(t, sess)
				testCQLConcurrentLWT(t, sess)
				testCQLTTL(t, sess)
				testCQLErrors(t, sess)
			}
		})
	}
}

func testCQLSchema(t *testing.T, sess *gocql.Session) {
	mustExec(t, sess, `CREATE KEYSPACE IF NOT EXISTS shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	mustExec(t, sess, `CREATE TABLE IF NOT EXISTS shop.orders (customer text, placed timestamp, id uuid, total decimal, items list<text>, tags set<text>, PRIMARY KEY (customer, placed, id)) WITH CLUSTERING ORDER BY (placed DESC, id ASC)`)
	ks, err := sess.KeyspaceMetadata("shop")
	if err != nil {
		t.Fatal(err)
	}
	tm := ks.Tables["orders"]
	if tm == nil {
		t.Fatalf("no metadata for shop.orders: %+v", ks.Tables)
	}
	if len(tm.PartitionKey) != 1 || tm.PartitionKey[0].Name != "customer" || len(tm.ClusteringColumns) != 2 ||
		tm.ClusteringColumns[0].Name != "placed" || tm.ClusteringColumns[0].ClusteringOrder != "desc" {
		t.Fatalf("table metadata: pk %+v clustering %+v", tm.PartitionKey, tm.ClusteringColumns)
	}
	if c := tm.Columns["items"]; c == nil || c.Type.Type() != gocql.TypeList {
		t.Fatalf("items column: %+v", c)
	}
	mustExec(t, sess, `ALTER TABLE shop.orders ADD note text`)
	if err := sess.Query(`CREATE TABLE shop.orders (a int PRIMARY KEY)`).Exec(); err == nil {
		t.Fatal("creating an existing table succeeded")
	} else if re, ok := err.(*gocql.RequestErrAlreadyExists); !ok || re.Table != "orders" {
		t.Fatalf("creating an existing table: %T %v", err, err)
	}
}

func testCQLPrepared(t *testing.T, sess *gocql.Session) {
	when := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	ids := map[int]gocql.UUID{}
	for i := range 5 {
		id := gocql.TimeUUID()
		ids[i] = id
		mustExec(t, sess, `INSERT INTO shop.orders (customer, placed, id, total, items, tags) VALUES (?, ?, ?, ?, ?, ?)`,
			"ada", when.Add(time.Duration(i)*time.Hour), id, inf.NewDec(1250, 2), []string{"tea", "cake"}, []string{"b", "a"})
	}
	iter := sess.Query(`SELECT placed, id, items, tags FROM shop.orders WHERE customer = ?`, "ada").Iter()
	var placed time.Time
	var id gocql.UUID
	var items, tags []string
	var got []time.Time
	for iter.Scan(&placed, &id, &items, &tags) {
		got = append(got, placed)
		if len(items) != 2 || items[0] != "tea" || len(tags) != 2 || tags[0] != "a" {
			t.Fatalf("collections read back as %v %v", items, tags)
		}
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || !sort.SliceIsSorted(got, func(i, j int) bool { return got[i].After(got[j]) }) {
		t.Fatalf("rows not in descending clustering order: %v", got)
	}
	// Token-aware routing: the driver builds the routing key from the partition key indices
	// of the prepared statement's metadata, a composite key too.
	key, err := sess.Query(`SELECT id FROM shop.orders WHERE customer = ?`, "ada").GetRoutingKey()
	if err != nil || string(key) != "ada" {
		t.Fatalf("routing key %q, %v", key, err)
	}
	mustExec(t, sess, `CREATE TABLE shop.pairs (a text, b int, v text, PRIMARY KEY ((a, b)))`)
	key, err = sess.Query(`UPDATE shop.pairs SET v = ? WHERE b = ? AND a = ?`, "x", 7, "k").GetRoutingKey()
	if want := "\x00\x01k\x00\x00\x04\x00\x00\x00\x07\x00"; err != nil || string(key) != want {
		t.Fatalf("composite routing key %q, %v; want %q", key, err, want)
	}
	// A clustering slice, and ORDER BY reversing the clustering order.
	var n int
	if err := sess.Query(`SELECT count(*) FROM shop.orders WHERE customer = ? AND placed >= ? AND placed < ?`, "ada", when.Add(time.Hour), when.Add(3*time.Hour)).Scan(&n); err != nil || n != 2 {
		t.Fatalf("slice count = %d, %v", n, err)
	}
	iter = sess.Query(`SELECT placed FROM shop.orders WHERE customer = ? ORDER BY placed ASC LIMIT 2`, "ada").Iter()
	got = got[:0]
	for iter.Scan(&placed) {
		got = append(got, placed)
	}
	if err := iter.Close(); err != nil || len(got) != 2 || !got[0].Equal(when) {
		t.Fatalf("ORDER BY ASC LIMIT 2 = %v, %v", got, err)
	}
}

func testCQLPaging(t *testing.T, sess *gocql.Session) {
	mustExec(t, sess, `CREATE TABLE shop.events (day int, seq int, body text, PRIMARY KEY (day, seq)) WITH cosmosdb_provisioned_throughput = 40000`)
	const rows = 10000
	b := sess.NewBatch(gocql.UnloggedBatch)
	for i := range rows {
		b.Query(`INSERT INTO shop.events (day, seq, body) VALUES (?, ?, ?)`, i%7, i, "event "+strconv.Itoa(i))
		if len(b.Entries) == 100 {
			if err := sess.ExecuteBatch(b); err != nil {
				t.Fatal(err)
			}
			b = sess.NewBatch(gocql.UnloggedBatch)
		}
	}
	// The whole table, in pages of 333: every row once.
	seen := make([]bool, rows)
	iter := sess.Query(`SELECT seq FROM shop.events`).PageSize(333).Iter()
	var seq, count, pages int
	for iter.Scan(&seq) {
		if seen[seq] {
			t.Fatalf("row %d returned twice", seq)
		}
		seen[seq] = true
		count++
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if count != rows {
		t.Fatalf("read %d rows of %d", count, rows)
	}
	// One partition in pages, with manual paging state, in clustering order.
	var state []byte
	last := -1
	for {
		iter := sess.Query(`SELECT seq FROM shop.events WHERE day = 3`).PageSize(100).PageState(state).Iter()
		for iter.Scan(&seq) {
			if seq <= last {
				t.Fatalf("partition rows out of order: %d after %d", seq, last)
			}
			last = seq
			count++
		}
		state = iter.PageState()
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		pages++
		if len(state) == 0 {
			break
		}
	}
	if pages < 14 {
		t.Fatalf("partition 3 came in %d pages", pages)
	}
	// Token ranges from the driver's own ring cover the ring exactly once.
	testCQLTokenRanges(t, sess, rows)
}

// testCQLTokenRanges splits the ring at the tokens system.local announces and reads each
// range with token() restrictions: every row exactly once.
func testCQLTokenRanges(t *testing.T, sess *gocql.Session, rows int) {
	var tokens []string
	if err := sess.Query(`SELECT tokens FROM system.local WHERE key = 'local'`).Scan(&tokens); err != nil {
		t.Fatal(err)
	}
	var ring []int64
	for _, s := range tokens {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		ring = append(ring, v)
	}
	sort.Slice(ring, func(i, j int) bool { return ring[i] < ring[j] })
	seen := make([]int, rows)
	read := func(q string, args ...any) {
		iter := sess.Query(q, args...).PageSize(1000).Iter()
		var seq int
		var tok int64
		for iter.Scan(&seq, &tok) {
			seen[seq]++
		}
		if err := iter.Close(); err != nil {
			t.Fatalf("%s %v: %v", q, args, err)
		}
	}
	// (last, max] and [min, first] are the wrapping range, unwrapped.
	read(`SELECT seq, token(day) FROM shop.events WHERE token(day) > ?`, ring[len(ring)-1])
	read(`SELECT seq, token(day) FROM shop.events WHERE token(day) <= ?`, ring[0])
	for i := 1; i < len(ring); i++ {
		read(`SELECT seq, token(day) FROM shop.events WHERE token(day) > ? AND token(day) <= ?`, ring[i-1], ring[i])
	}
	for seq, n := range seen {
		if n != 1 {
			t.Fatalf("row %d read %d times over the token ranges", seq, n)
		}
	}
}

// testCQLTableInMetrics: a table is a container of the engine, so the admin view shows its
// physical partitions and what they hold, while the REST API refuses its rows. (Through a
// node of a cluster, the figures of partitions led elsewhere are a couple of seconds old:
// they are read again until they add up.)
func testCQLTableInMetrics(t *testing.T, s *server) {
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	err := retry("the table's partitions and rows", func() error {
		code, _, b := c.do(t, "GET", "/dbs/shop/colls/events/partitions", nil, nil)
		var resp struct {
			Partitions []struct {
				Items int64 `json:"items"`
			} `json:"partitions"`
		}
		if code != 200 || json.Unmarshal(b, &resp) != nil {
			t.Fatalf("partitions of shop.events: %d %s", code, b)
		}
		var items int64
		for _, p := range resp.Partitions {
			items += p.Items
		}
		if len(resp.Partitions) != 7 || items != 10000 {
			return fmt.Errorf("shop.events: %d partitions holding %d rows, want 7 holding 10000: %s", len(resp.Partitions), items, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if code, _, b := c.do(t, "GET", "/dbs/shop/colls/events/docs", nil, nil); code != 400 {
		t.Fatalf("reading a table's rows through the REST API: %d %s", code, b)
	}
}

func testCQLBatchesAndLWT(t *testing.T, sess *gocql.Session) {
	mustExec(t, sess, `CREATE TABLE shop.accounts (owner text, name text, balance bigint, PRIMARY KEY (owner, name))`)
	b := sess.NewBatch(gocql.LoggedBatch)
	b.Query(`INSERT INTO shop.accounts (owner, name, balance) VALUES (?, ?, ?)`, "bo", "checking", int64(100))
	b.Query(`INSERT INTO shop.accounts (owner, name, balance) VALUES (?, ?, ?)`, "bo", "savings", int64(900))
	if err := sess.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	applied, err := sess.Query(`INSERT INTO shop.accounts (owner, name, balance) VALUES (?, ?, ?) IF NOT EXISTS`, "bo", "checking", int64(1)).MapScanCAS(map[string]any{})
	if err != nil || applied {
		t.Fatalf("IF NOT EXISTS on an existing row applied=%v err=%v", applied, err)
	}
	var balance int64
	applied, err = sess.Query(`UPDATE shop.accounts SET balance = ? WHERE owner = ? AND name = ? IF balance = ?`, int64(50), "bo", "checking", int64(100)).ScanCAS(&balance)
	if err != nil || !applied {
		t.Fatalf("IF balance = 100: applied=%v err=%v", applied, err)
	}
	applied, err = sess.Query(`UPDATE shop.accounts SET balance = ? WHERE owner = ? AND name = ? IF balance = ?`, int64(0), "bo", "checking", int64(100)).ScanCAS(&balance)
	if err != nil || applied || balance != 50 {
		t.Fatalf("stale IF: applied=%v balance=%d err=%v", applied, balance, err)
	}
	// A conditional batch on one partition applies all or nothing.
	b = sess.NewBatch(gocql.LoggedBatch)
	b.Query(`UPDATE shop.accounts SET balance = ? WHERE owner = ? AND name = ? IF balance = ?`, int64(0), "bo", "checking", int64(999))
	b.Query(`UPDATE shop.accounts SET balance = ? WHERE owner = ? AND name = ?`, int64(0), "bo", "savings")
	applied, _, err = sess.ExecuteBatchCAS(b)
	if err != nil || applied {
		t.Fatalf("conditional batch with a false condition: applied=%v err=%v", applied, err)
	}
	if err := sess.Query(`SELECT balance FROM shop.accounts WHERE owner = ? AND name = ?`, "bo", "savings").Scan(&balance); err != nil || balance != 900 {
		t.Fatalf("savings after a refused batch = %d, %v", balance, err)
	}
}

func testCQLTTL(t *testing.T, sess *gocql.Session) {
	mustExec(t, sess, `CREATE TABLE shop.sessions (id text PRIMARY KEY, user text)`)
	mustExec(t, sess, `INSERT INTO shop.sessions (id, user) VALUES (?, ?) USING TTL 1`, "s1", "ada")
	mustExec(t, sess, `INSERT INTO shop.sessions (id, user) VALUES (?, ?) USING TTL 3600`, "s2", "bo")
	var ttl int
	if err := sess.Query(`SELECT ttl(user) FROM shop.sessions WHERE id = ?`, "s2").Scan(&ttl); err != nil || ttl < 3500 || ttl > 3600 {
		t.Fatalf("ttl(user) = %d, %v", ttl, err)
	}
	time.Sleep(2100 * time.Millisecond)
	var user string
	if err := sess.Query(`SELECT user FROM shop.sessions WHERE id = ?`, "s1").Scan(&user); !errors.Is(err, gocql.ErrNotFound) {
		t.Fatalf("an expired row read back: %q %v", user, err)
	}
}

func testCQLErrors(t *testing.T, sess *gocql.Session) {
	cases := map[string]int{
		`SELEC * FROM shop.orders`:                      gocql.ErrCodeSyntax,
		`SELECT * FROM shop.nope`:                       gocql.ErrCodeInvalid,
		`SELECT * FROM shop.orders WHERE total = 1`:     gocql.ErrCodeInvalid,
		`INSERT INTO shop.orders (customer) VALUES (1)`: gocql.ErrCodeInvalid,
	}
	// A partition's spent budget answers Overloaded (the REST API's 429), with the wait.
	mustExec(t, sess, `CREATE TABLE shop.small (k int PRIMARY KEY, v text) WITH cosmosdb_provisioned_throughput = 400`)
	var overloaded error
	for i := 0; i < 2000 && overloaded == nil; i++ {
		err := sess.Query(`INSERT INTO shop.small (k, v) VALUES (?, ?)`, i%3, "a value of some length to cost more").RetryPolicy(nil).Exec()
		var re gocql.RequestError
		if errors.As(err, &re) && re.Code() == gocql.ErrCodeOverloaded {
			overloaded = err
		} else if err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	if overloaded == nil || !strings.Contains(overloaded.Error(), "RetryAfterMs=") {
		t.Fatalf("2,000 inserts into 400 RU/s were never refused as Overloaded with a wait: %v", overloaded)
	}
	for q, code := range cases {
		err := sess.Query(q).Exec()
		var re gocql.RequestError
		if !errors.As(err, &re) || re.Code() != code {
			t.Errorf("%s: got %v, want code %#x", q, err, code)
		}
	}
}

// Lightweight transactions that race on one row are each applied once: compare-and-set
// increments from three goroutines add up (two that read the same balance cannot both apply).
func testCQLConcurrentLWT(t *testing.T, sess *gocql.Session) {
	mustExec(t, sess, `INSERT INTO shop.accounts (owner, name, balance) VALUES (?, ?, ?)`, "race", "counter", int64(0))
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < 10; {
				var b int64
				if err := sess.Query(`SELECT balance FROM shop.accounts WHERE owner = ? AND name = ?`, "race", "counter").Scan(&b); err != nil {
					t.Error(err)
					return
				}
				applied, err := sess.Query(`UPDATE shop.accounts SET balance = ? WHERE owner = ? AND name = ? IF balance = ?`, b+1, "race", "counter", b).ScanCAS(new(int64))
				if err != nil {
					t.Error(err)
					return
				}
				if applied {
					done++
				}
			}
		}()
	}
	wg.Wait()
	var b int64
	if err := sess.Query(`SELECT balance FROM shop.accounts WHERE owner = ? AND name = ?`, "race", "counter").Scan(&b); err != nil || b != 30 {
		t.Fatalf("30 racing compare-and-set increments gave %d (%v)", b, err)
	}
}
