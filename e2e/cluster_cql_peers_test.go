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
// spreads the statements over them, and every row written is read back. A fourth node that
// joins on 127.0.0.4 reaches the driver by the TOPOLOGY_CHANGE event it registered for.
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
