package cql

import (
	"crypto/md5"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/partita-db/partita/internal/engine"
)

func signedIn(t *testing.T, x *fakeExec, o Options) *client {
	_, addr := startServer(t, x, o)
	c := dial(t, addr)
	c.login(testUser, testKey)
	return c
}

func execute(id []byte, skip bool, values ...[]byte) *message.Execute {
	e := &message.Execute{QueryId: id, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelLocalQuorum, SkipMetadata: skip}}
	for _, v := range values {
		e.Options.PositionalValues = append(e.Options.PositionalValues, primitive.NewValue(v))
	}
	return e
}

// PREPARE gives the id and metadata drivers need; EXECUTE of an id the server does not hold,
// or whose schema changed, is UNPREPARED with that id, and preparing again mends it.
func TestPreparedFlow(t *testing.T) {
	x := newFakeExec()
	c := signedIn(t, x, Options{})
	c.call(query("USE ks"))
	const text = "INSERT INTO kv (k, v) VALUES (?, ?)"
	p, ok := c.call(&message.Prepare{Query: text}).(*message.PreparedResult)
	if !ok {
		t.Fatalf("PREPARE answered %v", p)
	}
	id := md5.Sum([]byte("ks" + text))
	want := &message.PreparedResult{
		PreparedQueryId: id[:],
		VariablesMetadata: &message.VariablesMetadata{PkIndices: []uint16{0}, Columns: []*message.ColumnMetadata{
			{Keyspace: "ks", Table: "kv", Name: "k", Type: datatype.Varchar},
			{Keyspace: "ks", Table: "kv", Name: "v", Type: datatype.Int},
		}},
		ResultMetadata: &message.RowsMetadata{},
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("PREPARE answered %v %v %v, want %v %v", p, p.VariablesMetadata, p.ResultMetadata, want.VariablesMetadata, want.ResultMetadata)
	}
	if m := c.call(execute(id[:], false, []byte("a"), int32Bytes(1))); !reflect.DeepEqual(m, &message.VoidResult{}) {
		t.Fatalf("EXECUTE answered %v", m)
	}
	other := md5.Sum([]byte("never prepared"))
	if m, ok := c.call(execute(other[:], false)).(*message.Unprepared); !ok || !reflect.DeepEqual(m.Id, other[:]) {
		t.Fatalf("EXECUTE of an unknown id answered %v, want UNPREPARED with the id", m)
	}
	x.mu.Lock()
	x.stale[id] = true
	x.mu.Unlock()
	if m, ok := c.call(execute(id[:], false, []byte("b"), int32Bytes(2))).(*message.Unprepared); !ok || !reflect.DeepEqual(m.Id, id[:]) {
		t.Fatalf("EXECUTE of a stale statement answered %v, want UNPREPARED with its id", m)
	}
	if m := c.call(execute(id[:], false, []byte("b"), int32Bytes(2))); code(m) != 0x2500 {
		t.Fatalf("EXECUTE after the stale statement was dropped answered %v, want UNPREPARED", m)
	}
	c.call(&message.Prepare{Query: text})
	if m := c.call(execute(id[:], false, []byte("b"), int32Bytes(2))); !reflect.DeepEqual(m, &message.VoidResult{}) {
		t.Fatalf("EXECUTE after preparing again answered %v", m)
	}
	// Another connection shares the prepared statements.
	d := dial(t, c.nc.RemoteAddr().String())
	d.login(testUser, testKey)
	if m := d.call(execute(id[:], false, []byte("c"), int32Bytes(3))); !reflect.DeepEqual(m, &message.VoidResult{}) {
		t.Fatalf("EXECUTE on a second connection answered %v", m)
	}
	if len(x.kv) != 3 {
		t.Fatalf("stored %d rows, want 3", len(x.kv))
	}
}

// The prepared statement cache keeps the most recently used ones.
func TestPreparedCacheBound(t *testing.T) {
	x := newFakeExec()
	s := New(x, Options{PreparedCapacity: 2})
	c := &conn{srv: s}
	sess := c.sessionNow()
	var ids [][16]byte
	for _, text := range []string{"USE ks", "SELECT k, v FROM ks.kv", "SELECT wait"} {
		p, _ := x.Prepare(&sess, text)
		s.prepared.put(p)
		ids = append(ids, p.ID)
		if len(ids) == 2 {
			s.prepared.get(ids[0][:]) // the first is now more recent than the second
		}
	}
	if s.prepared.get(ids[0][:]) == nil || s.prepared.get(ids[1][:]) != nil || s.prepared.get(ids[2][:]) == nil {
		t.Fatal("the cache dropped other than the least recently used statement")
	}
}

// Rows come with their metadata (one table spec), pages with a paging state that resumes them;
// EXECUTE's skip-metadata flag leaves the columns out.
func TestPaging(t *testing.T) {
	x := newFakeExec()
	c := signedIn(t, x, Options{})
	c.call(query("USE ks"))
	for _, k := range []string{"e", "b", "d", "a", "c"} {
		c.call(query("INSERT INTO kv (k, v) VALUES (?, ?)", []byte(k), int32Bytes(int32(k[0]))))
	}
	var got []string
	var state []byte
	for pages := 0; ; pages++ {
		q := query("SELECT k, v FROM ks.kv")
		q.Options.PageSize, q.Options.PagingState = 2, state
		rows, ok := c.call(q).(*message.RowsResult)
		if !ok || rows.Metadata.ColumnCount != 2 || len(rows.Metadata.Columns) != 2 || rows.Metadata.Columns[0].Table != "kv" {
			t.Fatalf("SELECT answered %v", rows)
		}
		for _, r := range rows.Data {
			got = append(got, string(r[0]))
		}
		if state = rows.Metadata.PagingState; state == nil {
			break
		}
		if pages > 5 {
			t.Fatal("paging does not end")
		}
	}
	if !reflect.DeepEqual(got, []string{"a", "b", "c", "d", "e"}) {
		t.Fatalf("pages gave %v", got)
	}
	p := c.call(&message.Prepare{Query: "SELECT k, v FROM ks.kv"}).(*message.PreparedResult)
	if p.ResultMetadata.ColumnCount != 2 || len(p.ResultMetadata.Columns) != 2 {
		t.Fatalf("PREPARE of a SELECT gave result metadata %v", p.ResultMetadata)
	}
	rows := c.call(execute(p.PreparedQueryId, true)).(*message.RowsResult)
	if rows.Metadata.ColumnCount != 2 || rows.Metadata.Columns != nil || len(rows.Data) != 5 {
		t.Fatalf("EXECUTE with skip metadata answered %v", rows)
	}
}

// A batch mixes statements given as text and by prepared id.
func TestBatch(t *testing.T) {
	x := newFakeExec()
	c := signedIn(t, x, Options{})
	c.call(query("USE ks"))
	const text = "INSERT INTO kv (k, v) VALUES (?, ?)"
	p := c.call(&message.Prepare{Query: text}).(*message.PreparedResult)
	ts := int64(1234)
	b := &message.Batch{Type: primitive.BatchTypeUnlogged, Consistency: primitive.ConsistencyLevelOne, DefaultTimestamp: &ts, Children: []*message.BatchChild{
		{Query: text, Values: []*primitive.Value{primitive.NewValue([]byte("x")), primitive.NewValue(int32Bytes(1))}},
		{Id: p.PreparedQueryId, Values: []*primitive.Value{primitive.NewValue([]byte("y")), primitive.NewValue(int32Bytes(2))}},
	}}
	if m := c.call(b); !reflect.DeepEqual(m, &message.VoidResult{}) {
		t.Fatalf("BATCH answered %v", m)
	}
	if len(x.kv) != 2 {
		t.Fatalf("the batch stored %d rows, want 2", len(x.kv))
	}
	unknown := md5.Sum([]byte("unknown"))
	b.Children[1].Id = unknown[:]
	if m, ok := c.call(b).(*message.Unprepared); !ok || !reflect.DeepEqual(m.Id, unknown[:]) {
		t.Fatalf("BATCH naming an unknown id answered %v", m)
	}
	b.Children[1].Id = p.PreparedQueryId
	x.mu.Lock()
	x.stale[[16]byte(p.PreparedQueryId)] = true
	x.mu.Unlock()
	if m, ok := c.call(b).(*message.Unprepared); !ok || !reflect.DeepEqual(m.Id, p.PreparedQueryId) {
		t.Fatalf("BATCH with a stale statement answered %v, want UNPREPARED with its id", m)
	}
	b.Children[0].Query = "SELECT k, v FROM ks.kv"
	b.Children = b.Children[:1]
	if m := c.call(b); code(m) != 0x2200 {
		t.Fatalf("BATCH with a SELECT answered %v, want INVALID", m)
	}
}

// A schema change is answered with SCHEMA_CHANGE and pushed as an EVENT on stream -1 to the
// connections registered for it.
func TestSchemaChangeEvents(t *testing.T) {
	x := newFakeExec()
	_, addr := startServer(t, x, Options{})
	listener := dial(t, addr)
	listener.login(testUser, testKey)
	reg := &message.Register{EventTypes: []primitive.EventType{primitive.EventTypeTopologyChange, primitive.EventTypeStatusChange, primitive.EventTypeSchemaChange}}
	if m := listener.call(reg); !reflect.DeepEqual(m, &message.Ready{}) {
		t.Fatalf("REGISTER answered %v", m)
	}
	other := dial(t, addr)
	other.login(testUser, testKey)
	want := &message.SchemaChangeResult{ChangeType: primitive.SchemaChangeTypeCreated, Target: primitive.SchemaChangeTargetTable, Keyspace: "ks", Object: "t"}
	if m := other.call(query("CREATE TABLE ks.t (a int PRIMARY KEY)")); !reflect.DeepEqual(m, want) {
		t.Fatalf("CREATE TABLE answered %v", m)
	}
	f := listener.recv()
	wantEvent := &message.SchemaChangeEvent{ChangeType: primitive.SchemaChangeTypeCreated, Target: primitive.SchemaChangeTargetTable, Keyspace: "ks", Object: "t"}
	if f.Header.StreamId != -1 || !reflect.DeepEqual(f.Body.Message, wantEvent) {
		t.Fatalf("the registered connection got %v on stream %d", f.Body.Message, f.Header.StreamId)
	}
	// The unregistered connection got nothing before its next answer.
	if m := other.call(query("USE ks")); code(m) != -1 {
		t.Fatalf("USE answered %v", m)
	}
}

// Errors reach the driver with their codes: a syntax error, an invalid statement, overload.
func TestErrorsOnTheWire(t *testing.T) {
	c := signedIn(t, newFakeExec(), Options{})
	if m := c.call(query("SELEC k FROM t")); code(m) != 0x2000 {
		t.Fatalf("a syntax error answered %v", m)
	}
	if m := c.call(query("SELECT k FROM nowhere")); code(m) != 0x2200 {
		t.Fatalf("an unknown table answered %v", m)
	}
	m, ok := c.call(query("SELECT throttled")).(*message.Overloaded)
	if !ok || !containsRetry(m.ErrorMessage, 250*time.Millisecond) {
		t.Fatalf("a throttled request answered %v", m)
	}
}

// A cluster's nodes coming and going reach the connections registered for them: a node seen
// for the first time as TOPOLOGY_CHANGE NEW_NODE and STATUS_CHANGE UP, a node that leaves the
// live list as DOWN, and UP when it is back; the nodes there at the start make no event, and a
// connection registered for schema changes only gets none of these.
func TestPeerEvents(t *testing.T) {
	var mu sync.Mutex
	a, b := netip.MustParseAddrPort("127.0.0.2:9042"), netip.MustParseAddrPort("127.0.0.3:9042")
	live := []netip.AddrPort{a}
	peers := func() ([]netip.AddrPort, error) {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(live), nil
	}
	setLive := func(ps ...netip.AddrPort) {
		mu.Lock()
		live = ps
		mu.Unlock()
	}
	_, addr := startServer(t, newFakeExec(), Options{Peers: peers, PeersEvery: 10 * time.Millisecond})
	c := dial(t, addr)
	c.login(testUser, testKey)
	if m := c.call(&message.Register{EventTypes: []primitive.EventType{primitive.EventTypeTopologyChange, primitive.EventTypeStatusChange}}); !reflect.DeepEqual(m, &message.Ready{}) {
		t.Fatalf("REGISTER answered %v", m)
	}
	schemaOnly := dial(t, addr)
	schemaOnly.login(testUser, testKey)
	schemaOnly.call(&message.Register{EventTypes: []primitive.EventType{primitive.EventTypeSchemaChange}})
	time.Sleep(50 * time.Millisecond) // a few polls of the first list: no event
	expect := func(want ...message.Message) {
		t.Helper()
		for _, w := range want {
			f := c.recv()
			// As text: the decoded address is a 16-byte net.IP, the one sent 4 bytes.
			if f.Header.StreamId != -1 || fmt.Sprint(f.Body.Message) != fmt.Sprint(w) {
				t.Fatalf("got %v on stream %d, want %v", f.Body.Message, f.Header.StreamId, w)
			}
		}
	}
	inetOf := func(ap netip.AddrPort) *primitive.Inet {
		return &primitive.Inet{Addr: ap.Addr().AsSlice(), Port: int32(ap.Port())}
	}
	setLive(a, b)
	expect(&message.TopologyChangeEvent{ChangeType: primitive.TopologyChangeTypeNewNode, Address: inetOf(b)},
		&message.StatusChangeEvent{ChangeType: primitive.StatusChangeTypeUp, Address: inetOf(b)})
	setLive(b)
	expect(&message.StatusChangeEvent{ChangeType: primitive.StatusChangeTypeDown, Address: inetOf(a)})
	setLive(a, b)
	expect(&message.StatusChangeEvent{ChangeType: primitive.StatusChangeTypeUp, Address: inetOf(a)})
	// The schema-only connection got nothing before its next answer.
	if m := schemaOnly.call(query("USE ks")); code(m) != -1 {
		t.Fatalf("USE answered %v", m)
	}
}

// A driver's consistency level reads as the Cosmos DB level the docs give: one replica's
// answer is Eventual, a quorum's, every replica's and the serial levels are Strong.
func TestReadLevel(t *testing.T) {
	for c, want := range map[primitive.ConsistencyLevel]engine.Level{
		primitive.ConsistencyLevelOne: engine.Eventual, primitive.ConsistencyLevelLocalOne: engine.Eventual,
		primitive.ConsistencyLevelTwo: engine.Eventual, primitive.ConsistencyLevelAny: engine.Eventual,
		primitive.ConsistencyLevelQuorum: engine.Strong, primitive.ConsistencyLevelLocalQuorum: engine.Strong,
		primitive.ConsistencyLevelAll: engine.Strong, primitive.ConsistencyLevelSerial: engine.Strong,
		primitive.ConsistencyLevelLocalSerial: engine.Strong, primitive.ConsistencyLevelEachQuorum: engine.Strong,
	} {
		if got := readLevel(c); got != want {
			t.Errorf("%v reads as %v, want %v", c, got, want)
		}
	}
}
