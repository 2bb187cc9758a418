package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/gocql/gocql"
)

// The nemesis's workloads (nemesisWorkload): registers at Strong, through the Go SDK and gocql,
// checked by porcupine; counters at Session, through the Go SDK with session tokens, checked
// for read-your-writes and monotonic reads.

// nemesisSDK is a Go SDK client of node n that tries each operation once: a history records
// what each did, and a retry inside the SDK would hide a first try of unknown outcome behind a
// second one's answer.
func nemesisSDK(n *nemesisNode) (*azcosmos.Client, error) {
	cred, err := azcosmos.NewKeyCredential(emulatorKey)
	if err != nil {
		return nil, err
	}
	return azcosmos.NewClientWithKey("http://"+n.api()+"/", cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: &http.Client{Timeout: 10 * time.Second},
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}})
}

// nemesisContainers makes container "c" of database "db" (two partitions) through the first
// node, and returns a client of it on every node.
func nemesisContainers(t *testing.T, cx context.Context, nodes []*nemesisNode) []*azcosmos.ContainerClient {
	var cs []*azcosmos.ContainerClient
	for _, n := range nodes {
		sdk, err := nemesisSDK(n)
		if err != nil {
			t.Fatal(err)
		}
		c, err := sdk.NewContainer("db", "c")
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	sdk, _ := nemesisSDK(nodes[0])
	retrying(t, "creating the container", func() error {
		if _, err := sdk.CreateDatabase(cx, azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil && statusOf(err) != 409 {
			return err
		}
		db, _ := sdk.NewDatabase("db")
		tp := azcosmos.NewManualThroughputProperties(12000)
		_, err := db.CreateContainer(cx, azcosmos.ContainerProperties{ID: "c",
			PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Kind: azcosmos.PartitionKeyKindHash, Version: 2}},
			&azcosmos.CreateContainerOptions{ThroughputProperties: &tp})
		if statusOf(err) == 409 {
			return nil
		}
		return err
	})
	return cs
}

// nemesisKeys are n keys named prefix0, prefix1, ...
func nemesisKeys(prefix string, n int) []string {
	var keys []string
	for k := range n {
		keys = append(keys, fmt.Sprint(prefix, k))
	}
	return keys
}

// opTimeout bounds one client operation.
const opTimeout = 5 * time.Second

// registers is the Strong workload: each key a register, written with unique values and read,
// through the Go SDK (items of container c) and through gocql (rows of table nem.reg), on
// random nodes; porcupine checks every key's history.
type registers struct {
	sdk      []*azcosmos.ContainerClient
	cql      []*cqlNode
	sdkKeys  []string
	cqlKeys  []string
	hist     *registerHistory
	next     atomic.Int64
	eventual azcosmos.ConsistencyLevel
}

func newRegisters() *registers {
	return &registers{sdkKeys: nemesisKeys("k", 16), cqlKeys: nemesisKeys("r", 8), hist: newRegisterHistory(),
		eventual: azcosmos.ConsistencyLevelEventual}
}

func (*registers) level() string { return "Strong" }

// keys are every register, the SDK's and CQL's.
func (w *registers) keys() []string { return append(slices.Clone(w.sdkKeys), w.cqlKeys...) }

func (w *registers) setup(t *testing.T, cx context.Context, nodes []*nemesisNode) {
	w.sdk = nemesisContainers(t, cx, nodes)
	for _, n := range nodes {
		w.cql = append(w.cql, &cqlNode{addr: n.cql()})
	}
	retrying(t, "creating the table", func() error {
		s, err := w.cql[0].session()
		if err == nil {
			err = s.Query(`CREATE KEYSPACE IF NOT EXISTS nem WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`).Exec()
		}
		if err == nil {
			err = s.Query(`CREATE TABLE IF NOT EXISTS nem.reg (k text PRIMARY KEY, v int) WITH cosmosdb_provisioned_throughput = 12000`).Exec()
		}
		return err
	})
	t.Cleanup(func() {
		for _, c := range w.cql {
			c.close()
		}
	})
	// Every key written once before the faults, so that every node has something to serve.
	for _, k := range w.sdkKeys {
		retrying(t, "the first write of "+k, func() error { return w.write(cx, 99, 0, k) })
	}
	for _, k := range w.cqlKeys {
		retrying(t, "the first write of "+k, func() error { return w.write(cx, 99, 0, k) })
	}
}

// write writes a new value to key through node n's client, and records it.
func (w *registers) write(cx context.Context, client, n int, key string) error {
	v := int(w.next.Add(1))
	ctx, cancel := context.WithTimeout(cx, opTimeout)
	defer cancel()
	called := time.Now()
	var err error
	if strings.HasPrefix(key, "r") {
		var s *gocql.Session
		if s, err = w.cql[n].session(); err != nil {
			return err // not sent
		}
		err = s.Query(`INSERT INTO nem.reg (k, v) VALUES (?, ?)`, key, v).WithContext(ctx).Exec()
		if errors.Is(err, gocql.ErrNoConnections) {
			w.cql[n].drop(s)
			return err // not sent
		}
	} else {
		body, _ := json.Marshal(map[string]any{"id": key, "pk": key, "v": v})
		_, err = w.sdk[n].UpsertItem(ctx, azcosmos.NewPartitionKeyString(key), body, nil)
	}
	if err != nil {
		w.hist.record(client, regIn{Key: key, Write: true, V: v}, regOut{V: -1}, called, time.Time{}) // perhaps applied
		return err
	}
	w.hist.record(client, regIn{Key: key, Write: true, V: v}, regOut{}, called, time.Now())
	return nil
}

// read reads key through node n, at Strong (QUORUM) or, with eventual, from n's replica.
func (w *registers) read(cx context.Context, n int, key string, eventual bool) (regOut, error) {
	ctx, cancel := context.WithTimeout(cx, opTimeout)
	defer cancel()
	if strings.HasPrefix(key, "r") {
		s, err := w.cql[n].session()
		if err != nil {
			return regOut{}, err
		}
		q := s.Query(`SELECT v FROM nem.reg WHERE k = ?`, key).WithContext(ctx)
		if eventual {
			q = q.Consistency(gocql.One)
		}
		var v int
		switch err := q.Scan(&v); {
		case err == nil:
			return regOut{V: v, Found: true}, nil
		case errors.Is(err, gocql.ErrNotFound):
			return regOut{}, nil
		default:
			if errors.Is(err, gocql.ErrNoConnections) {
				w.cql[n].drop(s)
			}
			return regOut{}, err
		}
	}
	var level *azcosmos.ConsistencyLevel
	if eventual {
		level = &w.eventual
	}
	v, found, err := nemesisRead(ctx, w.sdk[n], key, level)
	return regOut{V: v, Found: found}, err
}

func (w *registers) op(cx context.Context, c int, r *rand.Rand) {
	n := r.IntN(len(w.sdk))
	keys := w.sdkKeys
	if c%3 == 2 { // two clients of six speak CQL
		keys = w.cqlKeys
	}
	key := keys[r.IntN(len(keys))]
	if r.IntN(2) == 0 {
		if err := w.write(cx, c, n, key); err != nil {
			time.Sleep(200 * time.Millisecond)
		}
		return
	}
	called := time.Now()
	out, err := w.read(cx, n, key, false)
	if err != nil {
		time.Sleep(200 * time.Millisecond) // a read that failed observed nothing
		return
	}
	w.hist.record(c, regIn{Key: key}, out, called, time.Now())
}

// whole: every node reads every key, and its own replica has caught up (its Eventual read
// equals its Strong one; the clients have stopped).
func (w *registers) whole(cx context.Context) error {
	for n := range w.sdk {
		for _, k := range w.keys() {
			strong, err := w.read(cx, n, k, false)
			if err != nil {
				return fmt.Errorf("node %d: a Strong read of %s: %w", n+1, k, err)
			}
			ev, err := w.read(cx, n, k, true)
			if err != nil {
				return fmt.Errorf("node %d: an Eventual read of %s: %w", n+1, k, err)
			}
			if ev != strong {
				return fmt.Errorf("node %d: an Eventual read of %s gives %+v, a Strong one %+v", n+1, k, ev, strong)
			}
		}
	}
	return nil
}

func (w *registers) check(t *testing.T, cx context.Context) {
	for n := range w.sdk {
		for _, k := range w.keys() {
			called := time.Now()
			out, err := w.read(cx, n, k, false)
			if err != nil {
				t.Fatalf("the final read of %s through node %d: %v", k, n+1, err)
			}
			w.hist.record(100+n, regIn{Key: k}, out, called, time.Now())
		}
	}
	w.hist.check(t)
}

// cqlNode is a gocql session to one node, made again when the driver has given up on it (it
// may, while the node is down or cut off).
type cqlNode struct {
	addr string
	mu   sync.Mutex
	s    *gocql.Session
}

func (c *cqlNode) session() (*gocql.Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.s != nil {
		return c.s, nil
	}
	host, port, _ := net.SplitHostPort(c.addr)
	cluster := gocql.NewCluster(host)
	cluster.Port, _ = strconv.Atoi(port)
	cluster.ProtoVersion = 4
	cluster.Timeout = opTimeout
	cluster.ConnectTimeout = 2 * time.Second
	cluster.Authenticator = gocql.PasswordAuthenticator{Username: "partita", Password: emulatorKey}
	cluster.DisableInitialHostLookup = true
	cluster.Consistency = gocql.Quorum
	cluster.RetryPolicy = overloadedRetry{}
	cluster.Logger = log.New(io.Discard, "", 0) // its reconnections while a node is down
	s, err := cluster.CreateSession()
	if err != nil {
		return nil, err
	}
	c.s = s
	return s, nil
}

// drop forgets s, if it is still the node's session, for a new one at the next call.
func (c *cqlNode) drop(s *gocql.Session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.s == s {
		c.s = nil
		go s.Close()
	}
}

func (c *cqlNode) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.s != nil {
		c.s.Close()
	}
}

// sessions is the Session workload: each key an item with a counter n, incremented by
// patches and read, by clients that each carry the session tokens they were given, through
// random nodes. A client must read every counter at least at the value its own last
// acknowledged write or read of it gave (read-your-writes, monotonic reads).
type sessions struct {
	t       *testing.T // for the session tokens' parser
	sdk     []*azcosmos.ContainerClient
	keys    []string
	clients [6]counterClient
	// acked is the highest value an acknowledged write gave each key.
	mu         sync.Mutex
	acked      map[string]int
	violations []string
	reads      atomic.Int64
	writes     atomic.Int64
	eventual   azcosmos.ConsistencyLevel
}

// counterClient is what one client knows: its session, and the highest value it saw of each
// key.
type counterClient struct {
	session *sessionClient
	seen    map[string]int
}

func newSessions() *sessions {
	w := &sessions{keys: nemesisKeys("k", 16), acked: map[string]int{}, eventual: azcosmos.ConsistencyLevelEventual}
	for i := range w.clients {
		w.clients[i] = counterClient{session: &sessionClient{tokens: map[string]uint64{}}, seen: map[string]int{}}
	}
	return w
}

func (*sessions) level() string { return "Session" }

func (w *sessions) setup(t *testing.T, cx context.Context, nodes []*nemesisNode) {
	w.t, w.sdk = t, nemesisContainers(t, cx, nodes)
	for _, k := range w.keys {
		body, _ := json.Marshal(map[string]any{"id": k, "pk": k, "n": 0})
		retrying(t, "creating "+k, func() error {
			_, err := w.sdk[0].UpsertItem(cx, azcosmos.NewPartitionKeyString(k), body, nil)
			return err
		})
	}
}

// token is the client's session token as a request carries it; none before its first answer.
func (c *counterClient) token() *string {
	if h := c.session.header(); *h != "" {
		return h
	}
	return nil
}

func (w *sessions) op(cx context.Context, c int, r *rand.Rand) {
	cl := &w.clients[c] // each client is its own goroutine's
	n := r.IntN(len(w.sdk))
	key := w.keys[r.IntN(len(w.keys))]
	ctx, cancel := context.WithTimeout(cx, opTimeout)
	defer cancel()
	pk := azcosmos.NewPartitionKeyString(key)
	var (
		resp azcosmos.ItemResponse
		err  error
	)
	write := r.IntN(2) == 0
	if write {
		var ops azcosmos.PatchOperations
		ops.AppendIncrement("/n", 1)
		resp, err = w.sdk[n].PatchItem(ctx, pk, key, ops, &azcosmos.ItemOptions{SessionToken: cl.token(), EnableContentResponseOnWrite: true})
	} else {
		resp, err = w.sdk[n].ReadItem(ctx, pk, key, &azcosmos.ItemOptions{SessionToken: cl.token()})
	}
	if err != nil {
		time.Sleep(200 * time.Millisecond)
		return
	}
	cl.session.merge(w.t, resp.SessionToken)
	var doc struct{ N int }
	if err := json.Unmarshal(resp.Value, &doc); err != nil {
		w.violate(fmt.Sprintf("client %d: node %d answered %s with %q", c, n+1, key, resp.Value))
		return
	}
	if doc.N < cl.seen[key] {
		kind := "read"
		if write {
			kind = "write"
		}
		w.violate(fmt.Sprintf("client %d: a %s of %s through node %d gave %d after the client saw %d", c, kind, key, n+1, doc.N, cl.seen[key]))
	}
	cl.seen[key] = max(cl.seen[key], doc.N)
	if write {
		w.writes.Add(1)
		w.mu.Lock()
		w.acked[key] = max(w.acked[key], doc.N)
		w.mu.Unlock()
	} else {
		w.reads.Add(1)
	}
}

func (w *sessions) violate(v string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.violations = append(w.violations, v)
}

// whole: every node's replica holds every key at one value, at least the highest any
// acknowledged write gave it.
func (w *sessions) whole(cx context.Context) error {
	for _, k := range w.keys {
		var first int
		for n := range w.sdk {
			ctx, cancel := context.WithTimeout(cx, opTimeout)
			resp, err := w.sdk[n].ReadItem(ctx, azcosmos.NewPartitionKeyString(k), k, &azcosmos.ItemOptions{ConsistencyLevel: &w.eventual})
			cancel()
			if err != nil {
				return fmt.Errorf("node %d: an Eventual read of %s: %w", n+1, k, err)
			}
			var doc struct{ N int }
			json.Unmarshal(resp.Value, &doc)
			w.mu.Lock()
			acked := w.acked[k]
			w.mu.Unlock()
			switch {
			case doc.N < acked:
				return fmt.Errorf("node %d: %s is %d, an acknowledged write gave %d", n+1, k, doc.N, acked)
			case n == 0:
				first = doc.N
			case doc.N != first:
				return fmt.Errorf("node %d: %s is %d, node 1 has %d", n+1, k, doc.N, first)
			}
		}
	}
	return nil
}

func (w *sessions) check(t *testing.T, _ context.Context) {
	t.Logf("%d acknowledged writes and %d reads", w.writes.Load(), w.reads.Load())
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range w.violations {
		t.Error(v)
	}
	if w.writes.Load() < 50 || w.reads.Load() < 50 {
		t.Fatalf("too little happened: %d writes, %d reads", w.writes.Load(), w.reads.Load())
	}
}

// nemesisRead reads key's register: its value and whether it exists.
func nemesisRead(ctx context.Context, c *azcosmos.ContainerClient, key string, level *azcosmos.ConsistencyLevel) (int, bool, error) {
	var opts *azcosmos.ItemOptions
	if level != nil {
		opts = &azcosmos.ItemOptions{ConsistencyLevel: level}
	}
	resp, err := c.ReadItem(ctx, azcosmos.NewPartitionKeyString(key), key, opts)
	if statusOf(err) == 404 {
		var re *azcore.ResponseError
		if errors.As(err, &re) && re.ErrorCode == "NotFound" {
			return 0, false, nil
		}
	}
	if err != nil {
		return 0, false, err
	}
	var doc struct{ V int }
	if err := json.Unmarshal(resp.Value, &doc); err != nil {
		return 0, false, err
	}
	return doc.V, true, nil
}
