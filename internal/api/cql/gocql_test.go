package cql

import (
	"net"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// gocql v1.7.0 discovers the protocol version, signs in, reads system.local and system.peers,
// USEs a keyspace, prepares and executes, and pages.
func TestGocqlSmoke(t *testing.T) {
	x := newFakeExec()
	_, addr := startServer(t, x, Options{})
	host, port, _ := net.SplitHostPort(addr)
	cluster := gocql.NewCluster(host)
	cluster.Port, _ = strconv.Atoi(port)
	cluster.Keyspace = "ks"
	cluster.Authenticator = gocql.PasswordAuthenticator{Username: testUser, Password: testKey}
	cluster.Timeout, cluster.ConnectTimeout = 20*time.Second, 20*time.Second // hang guards
	cluster.NumConns = 2
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	defer s.Close()
	for i, k := range []string{"c", "a", "b"} {
		if err := s.Query("INSERT INTO kv (k, v) VALUES (?, ?)", k, i).Exec(); err != nil {
			t.Fatalf("INSERT: %v", err)
		}
	}
	iter := s.Query("SELECT k, v FROM ks.kv").PageSize(2).Iter()
	var keys []string
	var k string
	var v int
	for iter.Scan(&k, &v) {
		keys = append(keys, k+strconv.Itoa(v))
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if !sort.StringsAreSorted(keys) || len(keys) != 3 || keys[0] != "a1" {
		t.Fatalf("read back %v, want a1 b2 c0", keys)
	}
	if err := s.Query("SELEC nonsense").Exec(); err == nil {
		t.Fatal("a syntax error succeeded")
	} else if re, ok := err.(gocql.RequestError); !ok || re.Code() != gocql.ErrCodeSyntax {
		t.Fatalf("a syntax error gave %v", err)
	}

	bad := gocql.NewCluster(host)
	bad.Port = cluster.Port
	bad.Authenticator = gocql.PasswordAuthenticator{Username: testUser, Password: testBadKey}
	bad.ConnectTimeout = 20 * time.Second
	if s, err := bad.CreateSession(); err == nil {
		s.Close()
		t.Fatal("connected with a wrong key")
	}
}
