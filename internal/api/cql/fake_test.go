package cql

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"net"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlexec"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/fault"
)

// fakeExec stands in for the CQL engine: a fixed set of statements over one table ks.kv
// (k text PRIMARY KEY, v int) and the system tables gocql reads on connect. Any other text is
// parsed by the real parser (so syntax errors are real) and refused as an unknown table.
type fakeExec struct {
	mu       sync.Mutex
	kv       map[string][]byte
	watchers map[int]func(cqlexec.SchemaChange)
	nextW    int
	// stale lists prepared ids whose next Execute answers Gone (their schema changed).
	stale map[[16]byte]bool

	// wait: "SELECT wait" blocks until waitN calls are running at once (proof of concurrency).
	waitN, waiting int
	waitAll        chan struct{}
	// gate: "SELECT gate" reports its start on gateStarted and blocks until gate yields;
	// gateMax is the most running at once.
	gate, gateStarted    chan struct{}
	gateRunning, gateMax int
	// noBlocking refuses "SELECT wait" and "SELECT gate" (for the fuzzer, which may write them).
	noBlocking bool
}

func newFakeExec() *fakeExec {
	return &fakeExec{kv: map[string][]byte{}, watchers: map[int]func(cqlexec.SchemaChange){},
		stale: map[[16]byte]bool{}, waitAll: make(chan struct{}),
		gate: make(chan struct{}), gateStarted: make(chan struct{})}
}

var (
	textT = &cqlvalue.Type{Kind: cqlvalue.Text}
	intT  = &cqlvalue.Type{Kind: cqlvalue.Int}
	inetT = &cqlvalue.Type{Kind: cqlvalue.Inet}
	uuidT = &cqlvalue.Type{Kind: cqlvalue.UUID}
	setT  = &cqlvalue.Type{Kind: cqlvalue.Set, Elems: []*cqlvalue.Type{textT}}
)

func kvCol(name string, t *cqlvalue.Type) cqlexec.Column {
	return cqlexec.Column{Keyspace: "ks", Table: "kv", Name: name, Type: t}
}

func sysCols(table string, names ...any) []cqlexec.Column {
	var cols []cqlexec.Column
	for i := 0; i < len(names); i += 2 {
		cols = append(cols, cqlexec.Column{Keyspace: "system", Table: table, Name: names[i].(string), Type: names[i+1].(*cqlvalue.Type)})
	}
	return cols
}

type fakeStmt struct {
	kind            cqlexec.Kind
	params, columns []cqlexec.Column
	pk              []uint16
	run             func(x *fakeExec, s *cqlexec.Session, o cqlexec.Options) (*cqlexec.Result, error)
}

var (
	localCols = sysCols("local", "key", textT, "broadcast_address", inetT, "cluster_name", textT,
		"cql_version", textT, "data_center", textT, "host_id", uuidT, "listen_address", inetT,
		"partitioner", textT, "rack", textT, "release_version", textT, "rpc_address", inetT,
		"schema_version", uuidT, "tokens", setT, "native_protocol_version", textT)
	peersCols = sysCols("peers", "peer", inetT, "data_center", textT, "host_id", uuidT,
		"preferred_ip", inetT, "rack", textT, "release_version", textT, "rpc_address", inetT,
		"schema_version", uuidT, "tokens", setT)
	localhost = []byte{127, 0, 0, 1}
	schemaV   = []byte("0123456789abcdef")
)

func textSet(vs ...string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(vs)))
	for _, v := range vs {
		b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, v...)
	}
	return b
}

func int32Bytes(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

var fakeStmts = map[string]*fakeStmt{
	"SELECT * FROM system.local WHERE key='local'": {kind: cqlexec.KindSelect, columns: localCols,
		run: func(x *fakeExec, s *cqlexec.Session, o cqlexec.Options) (*cqlexec.Result, error) {
			row := [][]byte{[]byte("local"), localhost, []byte("partita"), []byte("3.4.5"), []byte("dc1"),
				[]byte("host-id-16-bytes"), localhost, []byte("org.apache.cassandra.dht.Murmur3Partitioner"),
				[]byte("rack1"), []byte("3.11.17"), localhost, schemaV, textSet("0"), []byte("4")}
			return &cqlexec.Result{Kind: cqlexec.ResultRows, Columns: localCols, Rows: [][][]byte{row}}, nil
		}},
	"SELECT schema_version FROM system.local WHERE key='local'": {kind: cqlexec.KindSelect, columns: localCols[11:12],
		run: func(x *fakeExec, s *cqlexec.Session, o cqlexec.Options) (*cqlexec.Result, error) {
			return &cqlexec.Result{Kind: cqlexec.ResultRows, Columns: localCols[11:12], Rows: [][][]byte{{schemaV}}}, nil
		}},
	"SELECT * FROM system.peers": {kind: cqlexec.KindSelect, columns: peersCols,
		run: func(x *fakeExec, s *cqlexec.Session, o cqlexec.Options) (*cqlexec.Result, error) {
			return &cqlexec.Result{Kind: cqlexec.ResultRows, Columns: peersCols}, nil
		}},
	"USE ks": {kind: cqlexec.KindUse,
		run: func(x *fakeExec, s *cqlexec.Session, o cqlexec.Options) (*cqlexec.Result, error) {
			return &cqlexec.Result{Kind: cqlexec.ResultSetKeyspace, Keyspace: "ks"}, nil
		}},
	"INSERT INTO kv (k, v) VALUES (?, ?)": {kind: cqlexec.KindWrite, params: []cqlexec.Column{kvCol("k", textT), kvCol("v", intT)}, pk: []uint16{0},
		run: func(x *fakeExec, s *cqlexec.Session, o cqlexec.Options) (*cqlexec.Result, error) {
			if s.Keyspace != "ks" {
				return nil, cql.Invalid(fault.Pos{}, "No keyspace has been specified")
			}
			if s.ReadOnly {
				return nil, fault.New(fault.Forbidden, "the read-only key may not write")
			}
			if len(o.Values) != 2 || o.Values[0].Null || o.Values[0].Unset {
				return nil, fault.New(fault.BadRequest, "expected 2 values with a key")
			}
			x.mu.Lock()
			defer x.mu.Unlock()
			x.kv[string(o.Values[0].Bytes)] = o.Values[1].Bytes
			return &cqlexec.Result{Kind: cqlexec.ResultVoid}, nil
		}},
	"SELECT k, v FROM ks.kv": {kind: cqlexec.KindSelect, columns: []cqlexec.Column{kvCol("k", textT), kvCol("v", intT)},
		run: func(x *fakeExec, s *cqlexec.Session, o cqlexec.Options) (*cqlexec.Result, error) {
			x.mu.Lock()
			defer x.mu.Unlock()
			keys := make([]string, 0, len(x.kv))
			for k := range x.kv {
				if k > string(o.PagingState) {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			res := &cqlexec.Result{Kind: cqlexec.ResultRows, Columns: []cqlexec.Column{kvCol("k", textT), kvCol("v", intT)}}
			if o.PageSize > 0 && len(keys) > o.PageSize {
				keys = keys[:o.PageSize]
				res.PagingState = []byte(keys[len(keys)-1])
			}
			for _, k := range keys {
				res.Rows = append(res.Rows, [][]byte{[]byte(k), x.kv[k]})
			}
			return res, nil
		}},
	"CREATE TABLE ks.t (a int PRIMARY KEY)": {kind: cqlexec.KindSchema,
		run: func(x *fakeExec, s *cqlexec.Session, o cqlexec.Options) (*cqlexec.Result, error) {
			ch := cqlexec.SchemaChange{Change: "CREATED", Target: "TABLE", Keyspace: "ks", Name: "t"}
			x.mu.Lock()
			ws := make([]func(cqlexec.SchemaChange), 0, len(x.watchers))
			for _, w := range x.watchers {
				ws = append(ws, w)
			}
			x.mu.Unlock()
			for _, w := range ws {
				w(ch)
			}
			return &cqlexec.Result{Kind: cqlexec.ResultSchemaChange, Change: ch}, nil
		}},
	"SELECT wait": {kind: cqlexec.KindSelect,
		run: func(x *fakeExec, s *cqlexec.Session, o cqlexec.Options) (*cqlexec.Result, error) {
			x.mu.Lock()
			x.waiting++
			if x.waiting == x.waitN {
				close(x.waitAll)
			}
			x.mu.Unlock()
			select {
			case <-x.waitAll:
				return &cqlexec.Result{Kind: cqlexec.ResultVoid}, nil
			case <-time.After(20 * time.Second): // a hang guard, not an assertion on time
				return nil, errors.New("requests did not run concurrently")
			}
		}},
	"SELECT gate": {kind: cqlexec.KindSelect,
		run: func(x *fakeExec, s *cqlexec.Session, o cqlexec.Options) (*cqlexec.Result, error) {
			x.mu.Lock()
			x.gateRunning++
			x.gateMax = max(x.gateMax, x.gateRunning)
			x.mu.Unlock()
			x.gateStarted <- struct{}{}
			<-x.gate
			x.mu.Lock()
			x.gateRunning--
			x.mu.Unlock()
			return &cqlexec.Result{Kind: cqlexec.ResultVoid}, nil
		}},
	"SELECT throttled": {kind: cqlexec.KindSelect,
		run: func(x *fakeExec, s *cqlexec.Session, o cqlexec.Options) (*cqlexec.Result, error) {
			return nil, fault.Throttle(250 * time.Millisecond)
		}},
	"SELECT panic": {kind: cqlexec.KindSelect,
		run: func(x *fakeExec, s *cqlexec.Session, o cqlexec.Options) (*cqlexec.Result, error) {
			panic("boom")
		}},
}

func init() { fakeStmts[`USE "ks"`] = fakeStmts["USE ks"] } // as gocql writes it

func (x *fakeExec) Prepare(s *cqlexec.Session, text string) (*cqlexec.Prepared, error) {
	st, ok := fakeStmts[text]
	if x.noBlocking && (text == "SELECT wait" || text == "SELECT gate") {
		ok = false
	}
	if !ok {
		if _, err := cql.Parse(text); err != nil {
			return nil, err
		}
		return nil, cql.Invalid(fault.Pos{}, "unconfigured table in %q", text)
	}
	return &cqlexec.Prepared{ID: md5.Sum([]byte(s.Keyspace + text)), Text: text, Keyspace: s.Keyspace,
		Params: st.params, PKIndices: st.pk, Columns: st.columns, Kind: st.kind}, nil
}

func (x *fakeExec) Execute(s *cqlexec.Session, p *cqlexec.Prepared, o cqlexec.Options) (*cqlexec.Result, error) {
	x.mu.Lock()
	stale := x.stale[p.ID]
	delete(x.stale, p.ID)
	x.mu.Unlock()
	if stale {
		return nil, fault.New(fault.Gone, "the table's schema changed")
	}
	if len(o.Values) != len(p.Params) {
		return nil, cql.Invalid(fault.Pos{}, "There were %d markers(?) in CQL but %d bound variables", len(p.Params), len(o.Values))
	}
	sess := *s
	if p.Keyspace != "" {
		sess.Keyspace = p.Keyspace
	}
	return fakeStmts[p.Text].run(x, &sess, o)
}

func (x *fakeExec) Batch(s *cqlexec.Session, kind cql.BatchKind, entries []cqlexec.BatchEntry, o cqlexec.Options) (*cqlexec.Result, error) {
	for _, e := range entries {
		if e.Prepared.Kind != cqlexec.KindWrite {
			return nil, cql.Invalid(fault.Pos{}, "Only INSERT, UPDATE and DELETE statements are allowed in a batch")
		}
	}
	for _, e := range entries {
		if _, err := x.Execute(s, e.Prepared, cqlexec.Options{Values: e.Values}); err != nil {
			return nil, err
		}
	}
	return &cqlexec.Result{Kind: cqlexec.ResultVoid}, nil
}

func (x *fakeExec) Watch(fn func(cqlexec.SchemaChange)) (stop func()) {
	x.mu.Lock()
	defer x.mu.Unlock()
	id := x.nextW
	x.nextW++
	x.watchers[id] = fn
	return func() {
		x.mu.Lock()
		delete(x.watchers, id)
		x.mu.Unlock()
	}
}

// The account the tests sign in to.
const (
	testUser   = "partita"
	testKey    = "primary-key=="
	testROKey  = "read-only-key=="
	testBadKey = "wrong-key=="
)

// startServer serves x on a loopback port until the test ends.
func startServer(t testing.TB, x Executor, o Options) (*Server, string) {
	if o.Username == "" {
		o.Username, o.Key, o.ReadOnlyKey = testUser, testKey, testROKey
	}
	s := New(x, o)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Shutdown(context.Background())
		if err := <-served; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v after Shutdown", err)
		}
	})
	return s, ln.Addr().String()
}
