package e2e

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/partita-db/partita/internal/controlplane/controlplanetest"
)

// gocql discovers a cluster's nodes from the one it is given: three nodes on 127.0.0.1-3, with
// one CQL port (Cassandra 3.11's system.peers has no port column), list each other in
// system.peers with their tokens; the driver connects to all three, its token-aware policy
// spreads the statements over them, and every row written is read back. A session started
// once the table exists reads a ring dealt by the partitions' leaders, and its inserts reach
// the leaders without a hop. A fourth node that joins on 127.0.0.4 reaches the driver by the
// TOPOLOGY_CHANGE event it registered for.
func TestClusterCQLPeers(t *testing.T) {
	t.Setenv("PARTITA_CLUSTER_SECRET", "the e2e cluster's shared secret")
	ips := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"}
	cqlPort := freePortOn(t, ips)
	var addrs []string
	for _, ip := range ips {
		addrs = append(addrs, net.JoinHostPort(ip, strconv.Itoa(freePortOn(t, ips))))
	}
	join := strings.Join(addrs[:3], ",")
	var nodes []*server
	for i, ip := range ips[:3] {
		nodes = append(nodes, launchServer(t, t.TempDir(), false, "--cluster-addr", addrs[i], "--join", join,
			"--cql-addr", net.JoinHostPort(ip, strconv.Itoa(cqlPort))))
	}
	for _, n := range nodes {
		n.waitListening(t, time.Minute)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	cluster := gocql.NewCluster("127.0.0.2")
	cluster.Port = cqlPort
	cluster.ProtoVersion = 4
	cluster.Timeout = 30 * time.Second
	cluster.Authenticator = gocql.PasswordAuthenticator{Username: "partita", Password: emulatorKey}
	cluster.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	cluster.HostFilter = gocql.HostFilterFunc(func(h *gocql.HostInfo) bool {
		mu.Lock()
		seen[h.ConnectAddress().String()] = true
		mu.Unlock()
		return true
	})
	cluster.RetryPolicy = overloadedRetry{}
	s := cqlSession(t, cluster)

	var peers []string
	var tokens int
	iter := s.Query(`SELECT rpc_address, tokens FROM system.peers`).Iter()
	var rpc net.IP
	var ts []string
	for iter.Scan(&rpc, &ts) {
		peers = append(peers, rpc.String())
		tokens += len(ts)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(peers)
	if len(peers) != 2 || tokens != 16 {
		t.Fatalf("system.peers through one node: %v with %d tokens, want the two others with 8 each", peers, tokens)
	}
	mu.Lock()
	got := len(seen)
	mu.Unlock()
	if got != 3 {
		t.Fatalf("gocql found the hosts %v, want all three", seen)
	}

	mustExec(t, s, `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`)
	mustExec(t, s, `CREATE TABLE shop.orders (owner text, id int, total bigint, PRIMARY KEY (owner, id))`)
	for i := range 60 {
		retrying(t, "insert", func() error {
			return s.Query(`INSERT INTO shop.orders (owner, id, total) VALUES (?, ?, ?)`, fmt.Sprint("o", i%12), i, int64(i)).Exec()
		})
	}
	for o := range 12 {
		var count int
		if err := s.Query(`SELECT COUNT(*) FROM shop.orders WHERE owner = ?`, fmt.Sprint("o", o)).Scan(&count); err != nil || count != 5 {
			t.Fatalf("owner o%d has %d rows, want 5 (%v)", o, count, err)
		}
	}

	// A session that connects once the table exists learns a ring dealt by its partitions'
	// leaders: its token-aware inserts reach each row's leader at once, so (leaderships
	// standing still) none is forwarded, where the ring dealt evenly sent two in three on.
	sent := func() (n float64) {
		for _, nd := range nodes {
			n += metricValue(t, nd, `partita_forwarded_requests_total{direction="sent"}`)
		}
		return n
	}
	led := gocql.NewCluster("127.0.0.1")
	led.Port, led.ProtoVersion, led.Timeout = cqlPort, 4, 30*time.Second
	led.Authenticator = cluster.Authenticator
	led.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	s2 := cqlSession(t, led)
	next := 60
	retrying(t, "token-aware inserts reach the leaders", func() error {
		// The driver connects to the peers it found after the session starts: until it
		// has, it sends their statements elsewhere.
		before := sent()
		for range 30 {
			if err := s2.Query(`INSERT INTO shop.orders (owner, id, total) VALUES (?, ?, ?)`, fmt.Sprint("p", next), next, int64(next)).Exec(); err != nil {
				return err
			}
			next++
		}
		n := sent() - before
		if n > 2 {
			return fmt.Errorf("%v of 30 inserts forwarded to a leader", n)
		}
		t.Logf("%v of 30 token-aware inserts forwarded to a leader", n)
		return nil
	})

	// At ONE a SELECT reads as Eventual: the replica of whichever node the driver picked
	// answers, a follower's too.
	followerReads := func() (n float64) {
		for _, nd := range nodes {
			n += metricValue(t, nd, `partita_replica_reads_total{replica="follower"}`)
		}
		return n
	}
	before := followerReads()
	for o := range 12 {
		var count int
		if err := s.Query(`SELECT COUNT(*) FROM shop.orders WHERE owner = ?`, fmt.Sprint("o", o)).Consistency(gocql.One).Scan(&count); err != nil || count != 5 {
			t.Fatalf("at ONE, owner o%d has %d rows, want 5 (%v)", o, count, err)
		}
	}
	if followerReads() == before {
		t.Fatal("no SELECT at ONE was served by a follower")
	}

	fourth := launchServer(t, t.TempDir(), false, "--cluster-addr", addrs[3], "--join", join,
		"--cql-addr", net.JoinHostPort(ips[3], strconv.Itoa(cqlPort)))
	fourth.waitListening(t, time.Minute)
	joined := time.Now()
	retrying(t, "gocql learns of the fourth node", func() error {
		mu.Lock()
		defer mu.Unlock()
		if !seen[ips[3]] {
			return fmt.Errorf("gocql knows %v", seen)
		}
		return nil
	})
	t.Logf("gocql added the fourth node %v after it listened", time.Since(joined).Round(time.Millisecond))
	for o := range 12 {
		var count int
		if err := s.Query(`SELECT COUNT(*) FROM shop.orders WHERE owner = ?`, fmt.Sprint("o", o)).Scan(&count); err != nil || count != 5 {
			t.Fatalf("with four nodes, owner o%d has %d rows, want 5 (%v)", o, count, err)
		}
	}
}

// freePortOn is a port free on every one of ips.
func freePortOn(t *testing.T, ips []string) int {
	t.Helper()
	for range 100 {
		addr := controlplanetest.FreeAddr(t)
		_, p, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(p)
		free := true
		for _, ip := range ips {
			ln, err := net.Listen("tcp", net.JoinHostPort(ip, p))
			if err != nil {
				free = false
				break
			}
			ln.Close()
		}
		if free {
			return port
		}
	}
	t.Fatal("no port free on every address")
	return 0
}
