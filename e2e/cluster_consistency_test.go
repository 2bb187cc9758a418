package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// etagLSN is the LSN an item version's etag encodes (partition.ETag): its last 16 hex digits.
func etagLSN(t *testing.T, etag string) uint64 {
	t.Helper()
	h := strings.ReplaceAll(strings.Trim(etag, `"`), "-", "")
	n, err := strconv.ParseUint(h[len(h)-16:], 16, 64)
	if err != nil {
		t.Fatalf("etag %q: %v", etag, err)
	}
	return n
}

// sessionClient is one client session: its merged session tokens, the LSN by range.
type sessionClient struct {
	mu     sync.Mutex
	tokens map[string]uint64
}

// merge takes in the tokens of a response.
func (s *sessionClient) merge(t *testing.T, h *string) {
	if h == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tok := range strings.Split(*h, ",") {
		r, rest, ok := strings.Cut(tok, ":")
		_, lsn, ok2 := strings.Cut(rest, "#")
		n, err := strconv.ParseUint(lsn, 10, 64)
		if !ok || !ok2 || err != nil {
			t.Fatalf("session token %q", *h)
		}
		s.tokens[r] = max(s.tokens[r], n)
	}
}

// header is the session's tokens as a request carries them.
func (s *sessionClient) header() *string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	for r, n := range s.tokens {
		parts = append(parts, fmt.Sprintf("%s:-1#%d", r, n))
	}
	h := strings.Join(parts, ",")
	return &h
}

// On a three-process cluster at the default level, Session: clients that write and read
// through a different node each time, passing back the session tokens they were given, read
// their own writes, never read a version older than one they read before, and see their own
// writes in the order they made them, while the partitions split and a fourth node is
// drained (its replicas move to the others); reads are served by followers as well as leaders
// (partita_replica_reads_total); Eventual reads through every node are served too, and how
// far behind they are is measured. A node read the moment it resumes from a pause waits for
// a session's write, where an Eventual read may be served from before it.
func TestClusterSessionConsistency(t *testing.T) {
	// At info, a failure's log shows the replicas' moves, splits and snapshots.
	all := startClusterOf(t, 4, func(int) []string { return []string{"--log-level", "info"} })
	nodes := all[:3] // the clients' nodes; the fourth is drained while they run
	cx := ctx(t)
	createDBAndContainer(t, nodes[0].sdk(t), nodes[1].sdk(t), 12000) // two partitions
	cs := containersOn(t, nodes)
	keys := []string{"a", "b", "c", "d", "e", "f"}
	for _, k := range keys {
		body, _ := json.Marshal(map[string]any{"id": k, "pk": k, "v": 0})
		retrying(t, "create "+k, func() error {
			_, err := cs[0].UpsertItem(cx, azcosmos.NewPartitionKeyString(k), body, nil)
			return err
		})
	}
	// The clients start without a token for these writes, not theirs: a follower that has not
	// applied them yet may answer 404, as Cosmos DB's may. They start once every node has.
	ev := azcosmos.ConsistencyLevelEventual
	for i, c := range cs {
		for _, k := range keys {
			retrying(t, fmt.Sprintf("node %d has %s", i+1, k), func() error {
				_, err := c.ReadItem(cx, azcosmos.NewPartitionKeyString(k), k, &azcosmos.ItemOptions{ConsistencyLevel: &ev})
				return err
			})
		}
	}
	readsBy := func(role string) (n float64) {
		for _, nd := range nodes {
			n += metricValue(t, nd.server, `partita_replica_reads_total{replica="`+role+`"}`)
		}
		return n
	}
	followerReads := readsBy("follower")

	var (
		mu         sync.Mutex
		latest     = map[string]uint64{} // the highest LSN acknowledged of each key
		stalest    uint64                // the most LSNs an eventual read was behind it
		violations atomic.Int64
		drained    atomic.Bool
		failed     = make(chan error, 16)
		wg         sync.WaitGroup
	)
	// The clients stop when the test does, failed or not: none outlives it.
	defer wg.Wait()
	defer drained.Store(true)
	for client := range 3 {
		wg.Go(func() {
			s := &sessionClient{tokens: map[string]uint64{}}
			wrote := map[string]uint64{} // this session's last write of each key
			read := map[string]uint64{}  // the newest version of each key it read
			// 120 requests, and on until the drain and the split are done.
			for i := 0; i < 120 || !drained.Load(); i++ {
				k := keys[(client*7+i)%len(keys)]
				pk := azcosmos.NewPartitionKeyString(k)
				via := cs[(client+i)%3]
				if i%3 == 0 {
					body, _ := json.Marshal(map[string]any{"id": k, "pk": k, "v": i})
					r, err := via.UpsertItem(cx, pk, body, &azcosmos.ItemOptions{SessionToken: s.header()})
					if err != nil {
						failed <- fmt.Errorf("client %d: write %d of %s through node %d: %w", client, i, k, (client+i)%3+1, err)
						return
					}
					s.merge(t, r.SessionToken)
					lsn := etagLSN(t, string(r.ETag))
					if lsn <= wrote[k] {
						violations.Add(1)
						t.Errorf("client %d: its write of %s at LSN %d follows its own at %d (monotonic writes)", client, k, lsn, wrote[k])
					}
					wrote[k] = lsn
					mu.Lock()
					latest[k] = max(latest[k], lsn)
					mu.Unlock()
					continue
				}
				r, err := via.ReadItem(cx, pk, k, &azcosmos.ItemOptions{SessionToken: s.header()})
				if err != nil {
					failed <- fmt.Errorf("client %d: session read %d of %s through node %d: %w", client, i, k, (client+i)%3+1, err)
					return
				}
				s.merge(t, r.SessionToken)
				lsn := etagLSN(t, string(r.ETag))
				if lsn < wrote[k] {
					violations.Add(1)
					t.Errorf("client %d read %s at LSN %d after writing it at %d (read your writes)", client, k, lsn, wrote[k])
				}
				if lsn < read[k] {
					violations.Add(1)
					t.Errorf("client %d read %s at LSN %d after reading it at %d (monotonic reads)", client, k, lsn, read[k])
				}
				read[k] = lsn

				// The same key at Eventual, through the next node, with no token.
				mu.Lock()
				before := latest[k]
				mu.Unlock()
				r, err = cs[(client+i+1)%3].ReadItem(cx, pk, k, &azcosmos.ItemOptions{ConsistencyLevel: &ev})
				if err != nil {
					failed <- fmt.Errorf("client %d: eventual read %d of %s through node %d: %w", client, i, k, (client+i+1)%3+1, err)
					return
				}
				if got := etagLSN(t, string(r.ETag)); got < before {
					mu.Lock()
					stalest = max(stalest, before-got)
					mu.Unlock()
				}
			}
		})
	}
	// Meanwhile the throughput is raised through node 2, which splits the partitions: the
	// children honour their parents' tokens. Then the fourth node is drained: its replicas
	// move to the others, and its leaderships too.
	time.Sleep(500 * time.Millisecond)
	if _, err := cs[1].ReplaceThroughput(cx, azcosmos.NewManualThroughputProperties(40000), nil); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if out, err := exec.Command(partitaBin, "node", "drain", all[3].args[1], "--endpoint", nodes[0].Endpoint, "--timeout", "60s").CombinedOutput(); err != nil {
		t.Fatalf("node drain: %v\n%s", err, out)
	}
	t.Logf("node 4 drained in %v", time.Since(began).Round(time.Millisecond))
	// The clients go on until the split shows too: node 1 then holds more than the two
	// partitions (every partition has a replica on each of the three nodes left).
	retrying(t, "the split while the clients run", func() error {
		if n := metricValue(t, nodes[0].server, "partita_node_replicas"); n <= 2 {
			return fmt.Errorf("node 1 holds %v partitions", n)
		}
		return nil
	})
	drained.Store(true)
	wg.Wait()
	close(failed)
	for err := range failed {
		t.Fatal(err)
	}
	if violations.Load() > 0 {
		t.Fatalf("%d violations of the session guarantees", violations.Load())
	}
	t.Logf("the two partitions became %v while the clients ran", metricValue(t, nodes[0].server, "partita_node_replicas"))
	// A follower held back: node 3 is paused while a write goes through node 1, and read the
	// moment it resumes, before its leader has sent it the write. With the write's session
	// token it waits to catch up; at Eventual it may answer with what it holds.
	stale := 0
	for round, k := range keys {
		pk := azcosmos.NewPartitionKeyString(k)
		nodes[2].cmd.Process.Signal(syscall.SIGSTOP)
		body, _ := json.Marshal(map[string]any{"id": k, "pk": k, "v": 1000 + round})
		var w azcosmos.ItemResponse
		retrying(t, "write while node 3 is paused", func() error { // its partition may have been led there
			var err error
			w, err = cs[0].UpsertItem(cx, pk, body, nil)
			return err
		})
		nodes[2].cmd.Process.Signal(syscall.SIGCONT)
		ev := azcosmos.ConsistencyLevelEventual
		e, err := cs[2].ReadItem(cx, pk, k, &azcosmos.ItemOptions{ConsistencyLevel: &ev})
		if err != nil {
			t.Fatal(err)
		}
		if etagLSN(t, string(e.ETag)) < etagLSN(t, string(w.ETag)) {
			stale++
		}
		r, err := cs[2].ReadItem(cx, pk, k, &azcosmos.ItemOptions{SessionToken: w.SessionToken})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := etagLSN(t, string(r.ETag)), etagLSN(t, string(w.ETag)); got < want {
			t.Fatalf("a session read through the resumed node 3 returned %s at LSN %d, before the session's write at %d", k, got, want)
		}
	}
	t.Logf("just after it resumed, node 3 served %d of %d eventual reads from before the write", stale, len(keys))

	served := readsBy("follower") - followerReads
	t.Logf("followers served %v reads, leaders %v; an eventual read was at most %d LSNs behind the newest acknowledged version",
		served, readsBy("leader"), stalest)
	if served == 0 {
		t.Fatal("no read was served by a follower")
	}
}

// At an account level of Strong, a read costs twice the request units of the same read at a
// weaker level the request asks for, as on the service; a stronger level than the account's
// is refused.
func TestStrongReadsCostTwice(t *testing.T) {
	srv := startServer(t, false, "--consistency", "Strong")
	cx := ctx(t)
	client := srv.sdk(t)
	if _, err := client.CreateDatabase(cx, azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := client.NewDatabase("db")
	if _, err := db.CreateContainer(cx, azcosmos.ContainerProperties{ID: "c",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		t.Fatal(err)
	}
	c, _ := db.NewContainer("c")
	pk := azcosmos.NewPartitionKeyString("p")
	if _, err := c.CreateItem(cx, pk, []byte(`{"id":"x","pk":"p"}`), nil); err != nil {
		t.Fatal(err)
	}
	strong, err := c.ReadItem(cx, pk, "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []azcosmos.ConsistencyLevel{azcosmos.ConsistencyLevelSession, azcosmos.ConsistencyLevelEventual} {
		weak, err := c.ReadItem(cx, pk, "x", &azcosmos.ItemOptions{ConsistencyLevel: &l})
		if err != nil {
			t.Fatal(err)
		}
		if strong.RequestCharge != 2*weak.RequestCharge {
			t.Fatalf("a Strong read costs %v RU, a %s read %v; want twice", strong.RequestCharge, l, weak.RequestCharge)
		}
	}
	q := c.NewQueryItemsPager("SELECT * FROM c", pk, nil)
	sq, err := q.NextPage(cx)
	if err != nil {
		t.Fatal(err)
	}
	ev := azcosmos.ConsistencyLevelEventual
	q = c.NewQueryItemsPager("SELECT * FROM c", pk, &azcosmos.QueryOptions{ConsistencyLevel: &ev})
	wq, err := q.NextPage(cx)
	if err != nil {
		t.Fatal(err)
	}
	if sq.RequestCharge != 2*wq.RequestCharge {
		t.Fatalf("a Strong query costs %v RU, an Eventual one %v; want twice", sq.RequestCharge, wq.RequestCharge)
	}
}

// At the weak levels reads are served by followers and may be behind, but only by a prefix:
// on a three-process cluster whose account is at Bounded Staleness (5 s, 1000 versions), one
// client writes items 0, 1, 2, ... of one logical partition in order while others count them
// through every node at Eventual, Consistent Prefix and Bounded Staleness. Every read sees
// items 0 to m-1 and no other (never a write without those before it); Bounded Staleness
// reads never miss a write acknowledged more than 5 s before they began, nor more than 1000,
// even through a follower's node paused for 6 s, where Eventual reads through it may. How far behind each
// level's reads were is measured and reported.
func TestClusterPrefixAndBoundedStaleness(t *testing.T) {
	const (
		bound    = 5 * time.Second
		versions = 1000
	)
	nodes := startClusterOf(t, 3, func(int) []string {
		return []string{"--consistency", "BoundedStaleness", "--max-staleness-interval", bound.String(), "--max-staleness-prefix", strconv.Itoa(versions)}
	})
	// The account says its level, bound and replica sets.
	code, _, body := rawClient{s: nodes[1].server, key: emulatorKey, now: time.Now}.do(t, "GET", "/", nil, nil)
	var account struct {
		Consistency struct {
			Level    string `json:"defaultConsistencyLevel"`
			Prefix   int    `json:"maxStalenessPrefix"`
			Interval int    `json:"maxIntervalInSeconds"`
		} `json:"userConsistencyPolicy"`
		Replication struct {
			Min int `json:"minReplicaSetSize"`
		} `json:"userReplicationPolicy"`
	}
	if err := json.Unmarshal(body, &account); code != 200 || err != nil || account.Consistency.Level != "BoundedStaleness" ||
		account.Consistency.Prefix != versions || account.Consistency.Interval != 5 || account.Replication.Min != 3 {
		t.Fatalf("the database account: %d %s", code, body)
	}
	cx := ctx(t)
	createDBAndContainer(t, nodes[0].sdk(t), nodes[1].sdk(t), 10000) // one partition, and no 429s
	cs := containersOn(t, nodes)
	pk := azcosmos.NewPartitionKeyString("p")
	// The client writes through the partition's leader's node, and a follower's node is
	// paused: what the follower missed meanwhile is what its reads may lack as it resumes.
	lead, paused := -1, -1
	retrying(t, "the partition has a leader", func() error {
		for i, nd := range nodes {
			if metricValue(t, nd.server, "partita_node_leaders") > 0 {
				lead = i
				paused = (i + 1) % len(nodes)
				return nil
			}
		}
		return errors.New("no leader yet")
	})
	followerReads := 0.0
	for _, nd := range nodes {
		followerReads += metricValue(t, nd.server, `partita_replica_reads_total{replica="follower"}`)
	}

	// acked[n] is when item n's write was acknowledged; items are written one after another.
	var (
		mu    sync.Mutex
		acked []time.Time
	)
	ackedBy := func(at time.Time) (n int) { // how many writes were acknowledged before at
		mu.Lock()
		defer mu.Unlock()
		for n < len(acked) && acked[n].Before(at) {
			n++
		}
		return n
	}
	stop := make(chan struct{})
	// wait sleeps for d, or reports that the test is ending.
	wait := func(d time.Duration) (stopped bool) {
		select {
		case <-stop:
			return true
		case <-time.After(d):
			return false
		}
	}
	var writer, readers sync.WaitGroup
	writer.Go(func() {
		for n := 0; ; n++ {
			if wait(20 * time.Millisecond) {
				return
			}
			body, _ := json.Marshal(map[string]any{"id": strconv.Itoa(n), "pk": "p", "n": n})
			for { // a write the node cannot make yet (its leader paused) is made again
				if _, err := cs[lead].UpsertItem(cx, pk, body, nil); err == nil {
					break
				}
				if wait(50 * time.Millisecond) {
					return
				}
			}
			mu.Lock()
			acked = append(acked, time.Now())
			mu.Unlock()
		}
	})

	type lag struct {
		reads, stale int
		versions     int           // the most acknowledged writes a read missed
		age          time.Duration // the oldest acknowledged write a read missed, by its age then
	}
	levels := []azcosmos.ConsistencyLevel{azcosmos.ConsistencyLevelEventual, azcosmos.ConsistencyLevelConsistentPrefix, azcosmos.ConsistencyLevelBoundedStaleness}
	lags := map[azcosmos.ConsistencyLevel]*lag{}
	for _, l := range levels {
		lags[l] = &lag{}
	}
	failed := make(chan error, 16)
	for i := range cs {
		for _, level := range levels {
			readers.Go(func() {
				q := `SELECT COUNT(1) AS count, MAX(c.n) AS max FROM c WHERE c.pk = "p"`
				for {
					if wait(10 * time.Millisecond) { // leaves the writer its share of 2 cores
						return
					}
					start := time.Now()
					page, err := cs[i].NewQueryItemsPager(q, pk, &azcosmos.QueryOptions{ConsistencyLevel: &level}).NextPage(cx)
					if err != nil {
						// A node whose replica cannot confirm it is fresh (its leader paused)
						// refuses; the client tries again.
						time.Sleep(50 * time.Millisecond)
						continue
					}
					var got struct {
						Count int  `json:"count"`
						Max   *int `json:"max"`
					}
					if len(page.Items) != 1 || json.Unmarshal(page.Items[0], &got) != nil {
						failed <- fmt.Errorf("%s through node %d: %q", level, i+1, page.Items)
						return
					}
					if got.Max == nil && got.Count != 0 || got.Max != nil && *got.Max != got.Count-1 {
						failed <- fmt.Errorf("%s through node %d saw %d items, the last item %d: a gap in the partition's order", level, i+1, got.Count, *got.Max)
						return
					}
					before := ackedBy(start)
					mu.Lock()
					lg := lags[level]
					lg.reads++
					if missed := before - got.Count; missed > 0 {
						lg.stale++
						lg.versions = max(lg.versions, missed)
						lg.age = max(lg.age, start.Sub(acked[got.Count]))
					}
					mu.Unlock()
				}
			})
		}
	}
	time.Sleep(4 * time.Second)
	// The follower's node is paused longer than the bound; the readers through it wait, and
	// are served as it resumes.
	nodes[paused].cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(bound + time.Second)
	nodes[paused].cmd.Process.Signal(syscall.SIGCONT)
	time.Sleep(4 * time.Second)
	close(stop)
	writer.Wait()
	readers.Wait()
	close(failed)
	for err := range failed {
		t.Fatal(err)
	}
	for _, l := range levels {
		lg := lags[l]
		t.Logf("%s: %d reads, %d behind the acknowledged writes, by at most %d writes and %v", l, lg.reads, lg.stale, lg.versions, lg.age.Round(time.Millisecond))
		if lg.reads == 0 {
			t.Fatalf("no %s read was served", l)
		}
	}
	if b := lags[azcosmos.ConsistencyLevelBoundedStaleness]; b.age >= bound || b.versions > versions {
		t.Fatalf("a Bounded Staleness read missed a write acknowledged %v before it, or %d writes: beyond the bound of %v and %d", b.age, b.versions, bound, versions)
	}
	served := -followerReads
	for _, nd := range nodes {
		served += metricValue(t, nd.server, `partita_replica_reads_total{replica="follower"}`)
	}
	if served == 0 {
		t.Fatal("no read was served by a follower")
	}
	t.Logf("%d writes; followers served %v reads", len(acked), served)
}
