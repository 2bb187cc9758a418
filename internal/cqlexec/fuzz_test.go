package cqlexec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/storage"
)

// Hostile input against the executor: statement text, bound values (any bytes, null or
// unset, by position or by name), paging states and page sizes. Whatever comes in, Execute
// must answer with a clean error (a *fault.Error, a *cql.InvalidError around one, never of
// kind Internal) or a result, and a failed statement must leave every table as it was.

// fuzzSchema covers the shapes of key and column the executor treats apart: a simple key, a
// compound key with a DESC clustering column and a static column, a composite partition key,
// collections (multi-cell and frozen), a counter table and frozen collections as keys.
var fuzzSchema = []string{
	"CREATE KEYSPACE fz WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
	"CREATE TABLE fz.kv (k int PRIMARY KEY, v text, n bigint)",
	"CREATE TABLE fz.ev (p text, c1 int, c2 text, s int STATIC, v int, PRIMARY KEY (p, c1, c2)) WITH CLUSTERING ORDER BY (c1 DESC, c2 ASC)",
	"CREATE TABLE fz.cp (a int, b text, c int, v blob, PRIMARY KEY ((a, b), c))",
	"CREATE TABLE fz.coll (k int PRIMARY KEY, l list<int>, s set<text>, m map<text, int>, fl frozen<list<int>>, t tuple<int, text>)",
	"CREATE TABLE fz.cnt (k text PRIMARY KEY, c counter)",
	"CREATE TABLE fz.fk (k frozen<set<int>>, c frozen<map<int, text>>, v text, PRIMARY KEY (k, c))",
}

var fuzzTables = []string{"kv", "ev", "cp", "coll", "cnt", "fk"}

// fuzzData are the rows every input starts from.
var fuzzData = []string{
	"INSERT INTO fz.kv (k, v, n) VALUES (1, 'one', 10)",
	"INSERT INTO fz.kv (k, v, n) VALUES (2, 'two', 20)",
	"INSERT INTO fz.kv (k, v) VALUES (3, 'three')",
	"INSERT INTO fz.ev (p, c1, c2, v, s) VALUES ('a', 1, 'x', 10, 100)",
	"INSERT INTO fz.ev (p, c1, c2, v) VALUES ('a', 2, 'y', 20)",
	"INSERT INTO fz.ev (p, c1, c2, v) VALUES ('a', 2, 'z', 30)",
	"INSERT INTO fz.ev (p, c1, c2, v) VALUES ('b', 1, 'x', 40)",
	"INSERT INTO fz.ev (p, s) VALUES ('c', 7)",
	"INSERT INTO fz.cp (a, b, c, v) VALUES (1, 'x', 1, 0x01)",
	"INSERT INTO fz.cp (a, b, c, v) VALUES (1, 'x', 2, 0x02)",
	"INSERT INTO fz.cp (a, b, c, v) VALUES (1, 'y', 1, 0x03)",
	"INSERT INTO fz.coll (k, l, s, m, fl, t) VALUES (1, [1, 2, 3], {'a', 'b'}, {'x': 1, 'y': 2}, [4, 5], (1, 'p'))",
	"INSERT INTO fz.coll (k, l) VALUES (2, [7])",
	"UPDATE fz.cnt SET c = c + 5 WHERE k = 'a'",
	"UPDATE fz.cnt SET c = c - 2 WHERE k = 'b'",
	"INSERT INTO fz.fk (k, c, v) VALUES ({1, 2}, {1: 'a'}, 'first')",
	"INSERT INTO fz.fk (k, c, v) VALUES ({1, 2}, {2: 'b'}, 'second')",
	"INSERT INTO fz.fk (k, c, v) VALUES ({3}, {1: 'a'}, 'third')",
}

// fuzzSeeds are statements against the fuzz schema, valid and not; the scenario files add
// theirs (fuzzScenarioStatements).
var fuzzSeeds = []string{
	"SELECT * FROM kv",
	"SELECT * FROM kv WHERE k = ?",
	"SELECT * FROM kv WHERE k IN ?",
	"SELECT * FROM kv WHERE k IN (?, ?, ?)",
	"SELECT v, n FROM kv WHERE token(k) > ? AND token(k) <= ?",
	"SELECT * FROM kv WHERE v = ? ALLOW FILTERING",
	"SELECT count(*), max(n), sum(n), avg(n) FROM kv",
	"SELECT k, writetime(v), ttl(v), token(k) FROM kv LIMIT ?",
	"INSERT INTO kv (k, v, n) VALUES (?, ?, ?) USING TTL ? AND TIMESTAMP ?",
	"INSERT INTO kv (k, v) VALUES (?, ?) IF NOT EXISTS",
	"UPDATE kv SET v = ? WHERE k = ? IF n = ?",
	"UPDATE kv SET v = ? WHERE k IN ? IF EXISTS",
	"DELETE FROM kv WHERE k = ?",
	"DELETE v FROM kv WHERE k IN (?, ?)",
	"SELECT * FROM ev WHERE p = ? AND c1 = ? AND c2 > ?",
	"SELECT * FROM ev WHERE p = ? AND c1 IN ? AND c2 IN ?",
	"SELECT * FROM ev WHERE p IN ? ORDER BY c1 ASC",
	"SELECT * FROM ev WHERE p = ? AND (c1, c2) > (?, ?)",
	"SELECT * FROM ev WHERE p = ? AND (c1, c2) >= ? ORDER BY c1 ASC, c2 DESC",
	"SELECT DISTINCT p, s FROM ev",
	"SELECT p, c1, s FROM ev PER PARTITION LIMIT ? LIMIT ?",
	"SELECT * FROM ev WHERE c2 = ? ALLOW FILTERING",
	"SELECT * FROM ev WHERE s > ? ALLOW FILTERING",
	"UPDATE ev SET s = ? WHERE p = ?",
	"UPDATE ev SET v = ?, s = ? WHERE p = ? AND c1 = ? AND c2 = ?",
	"DELETE FROM ev WHERE p = ? AND c1 > ?",
	"DELETE FROM ev WHERE p = ? AND c1 = ? AND c2 < ?",
	"DELETE FROM ev WHERE p IN ?",
	"DELETE s FROM ev WHERE p = ? IF s = ?",
	"SELECT * FROM cp WHERE a = ? AND b = ?",
	"SELECT * FROM cp WHERE a IN ? AND b IN ? AND c IN ?",
	"SELECT * FROM cp WHERE a = ? ALLOW FILTERING",
	"SELECT * FROM cp WHERE token(a, b) = ?",
	"INSERT INTO cp (a, b, c, v) VALUES (?, ?, ?, ?)",
	"UPDATE cp SET v = ? WHERE a IN ? AND b IN ? AND c IN ?",
	"SELECT * FROM coll WHERE l CONTAINS ? ALLOW FILTERING",
	"SELECT * FROM coll WHERE m CONTAINS KEY ? ALLOW FILTERING",
	"SELECT * FROM coll WHERE t = ? ALLOW FILTERING",
	"UPDATE coll SET l = l + ?, s = s - ?, m = m + ? WHERE k = ?",
	"UPDATE coll SET l[?] = ? WHERE k IN (1, 2)",
	"UPDATE coll SET m[?] = ?, l = ? + l WHERE k = ?",
	"UPDATE coll SET fl = ?, t = ? WHERE k = ?",
	"DELETE l[?], m[?], s[?] FROM coll WHERE k = ?",
	"UPDATE coll SET l = l - ? WHERE k = ? IF l[?] = ?",
	"UPDATE coll SET m = m - ? WHERE k = ? IF m[?] IN ?",
	"UPDATE cnt SET c = c + ? WHERE k = ?",
	"UPDATE cnt SET c = c - ? WHERE k IN ?",
	"SELECT k, c FROM cnt WHERE k = ?",
	"SELECT * FROM fk WHERE k = ? AND c >= ?",
	"INSERT INTO fk (k, c, v) VALUES (?, ?, ?)",
	"DELETE FROM fk WHERE k = ? AND c = ?",
	"BEGIN BATCH INSERT INTO kv (k, v) VALUES (?, ?); UPDATE kv SET n = ? WHERE k = ?; APPLY BATCH",
	"BEGIN BATCH UPDATE coll SET l[?] = 1 WHERE k = 1; UPDATE coll SET l[?] = 1 WHERE k = 2; APPLY BATCH",
	"BEGIN UNLOGGED BATCH USING TIMESTAMP ? INSERT INTO ev (p, c1, c2) VALUES (?, ?, ?) IF NOT EXISTS; UPDATE ev SET s = ? WHERE p = ?; APPLY BATCH",
	"BEGIN COUNTER BATCH UPDATE cnt SET c = c + ? WHERE k = ?; UPDATE cnt SET c = c + 1 WHERE k = 'z'; APPLY BATCH",
	"SELECT * FROM system.local",
	"SELECT * FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?",
	"SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name IN ?",
	"CREATE TABLE x (k int PRIMARY KEY, v frozen<map<int, list<text>>>)",
	"ALTER TABLE kv ADD w text",
	"ALTER TABLE kv DROP v",
	"DROP TABLE cnt",
	"TRUNCATE ev",
	"CREATE TYPE addr (street text, n int)",
	"USE fz",
	"SELECT * FROM kv WHERE k = :key AND v = :val ALLOW FILTERING",
}

// fuzzFixture is an engine holding the fuzz schema and data, with its dump.
type fuzzFixture struct {
	eng  *engine.Engine
	x    *Executor
	dump []byte
}

// newFuzzFixture builds the schema and data on an engine held in memory.
func newFuzzFixture(tb testing.TB) *fuzzFixture {
	eng, err := engine.Open(engine.Options{Dir: "/fuzz", FS: storage.NewMemFS()})
	if err != nil {
		tb.Fatal(err)
	}
	x := New(eng, nil)
	now := time.Unix(1_700_000_000, 0)
	x.now = func() time.Time { return now }
	s := &Session{}
	for _, text := range append(append([]string{}, fuzzSchema...), fuzzData...) {
		p, err := x.Prepare(s, text)
		if err == nil {
			_, err = x.Execute(s, p, Options{})
		}
		if err != nil {
			tb.Fatalf("%s: %v", text, err)
		}
	}
	f := &fuzzFixture{eng: eng, x: x}
	f.dump = f.dumpAll(tb)
	return f
}

func (f *fuzzFixture) close() { f.eng.Close() }

// dumpAll is every table of the fuzz keyspace as SELECT * returns it, then as stored (which
// also shows deletions and write times), and the schema's version.
func (f *fuzzFixture) dumpAll(tb testing.TB) []byte {
	var out bytes.Buffer
	v := f.x.SchemaVersion()
	out.Write(v[:])
	s := &Session{Keyspace: "fz"}
	for _, name := range fuzzTables {
		fmt.Fprintf(&out, "\n== %s\n", name)
		p, err := f.x.Prepare(s, "SELECT * FROM "+name)
		if err != nil {
			fmt.Fprintf(&out, "prepare: %v\n", err)
			continue
		}
		res, err := f.x.Execute(s, p, Options{})
		if err != nil {
			fmt.Fprintf(&out, "execute: %v\n", err)
			continue
		}
		for _, row := range res.Rows {
			for _, val := range row {
				if val == nil {
					out.WriteString("null|")
					continue
				}
				fmt.Fprintf(&out, "%x|", val)
			}
			out.WriteByte('\n')
		}
		cont, err := f.eng.Table("fz", name)
		if err != nil {
			fmt.Fprintf(&out, "table: %v\n", err)
			continue
		}
		if _, err := cont.ScanRows(engine.RowPos{}, engine.RowEnd, false, func(_ epk.EPK, id string, doc []byte) bool {
			out.WriteString(id)
			out.Write(doc)
			out.WriteByte('\n')
			return true
		}); err != nil {
			tb.Fatalf("scanning %s: %v", name, err)
		}
	}
	return out.Bytes()
}

// checkFault fails unless err is a clean error: a *fault.Error (bare or in a
// *cql.InvalidError) of a kind other than Internal.
func checkFault(t *testing.T, what string, err error) {
	t.Helper()
	var fe *fault.Error
	if !errors.As(err, &fe) {
		t.Fatalf("%s: not a *fault.Error: %T %v", what, err, err)
	}
	if fe.Kind == fault.Internal {
		t.Fatalf("%s: internal error: %v", what, err)
	}
}

// fuzzValues turns the fuzzer's byte strings into n bound values: value i is vals[i%len],
// made null or unset by two bits of mode each (for the first four markers).
func fuzzValues(n int, vals [][]byte, mode uint16) []cqlvalue.Value {
	out := make([]cqlvalue.Value, n)
	for i := range out {
		out[i] = cqlvalue.Value{Bytes: vals[i%len(vals)]}
		if i < 4 {
			switch (mode >> (2 * i)) & 3 {
			case 1:
				out[i] = cqlvalue.Value{Null: true}
			case 2:
				out[i] = cqlvalue.Value{Unset: true}
			}
		}
	}
	return out
}

// FuzzExecute prepares and runs one statement with fuzzed values and paging. Mode's low byte
// makes values null or unset; bit 8 sends them by name; bit 9 sends one value too many or too
// few.
func FuzzExecute(f *testing.F) {
	seeds := append(append([]string{}, fuzzSeeds...), fuzzScenarioStatements(f)...)
	i32 := func(n int32) []byte { return cqlvalue.EncodeInt(n) }
	for i, s := range seeds {
		f.Add(s, i32(1), []byte("a"), i32(2), []byte{}, uint16(i*37), []byte(nil), int16(i%4))
	}
	f.Add("SELECT * FROM kv WHERE k IN ?", cqlvalue.EncodeList(i32(1), i32(2)), []byte(nil), []byte(nil), []byte(nil), uint16(0), []byte(`{"s":0,"e":"","i":"zz","n":1,"p":1}`), int16(1))
	f.Add("UPDATE coll SET l[?] = ? WHERE k IN (1, 2)", i32(2), i32(9), []byte(nil), []byte(nil), uint16(0), []byte(nil), int16(0))
	f.Add("SELECT * FROM ev WHERE p = ? AND c1 IN ? AND c2 IN ?", []byte("a"), cqlvalue.EncodeList(i32(1), i32(2)), cqlvalue.EncodeList([]byte("x"), []byte("y")), []byte(nil), uint16(0), []byte(nil), int16(2))

	var fx *fuzzFixture
	f.Cleanup(func() {
		if fx != nil {
			fx.close()
		}
	})
	f.Fuzz(func(t *testing.T, text string, v0, v1, v2, v3 []byte, mode uint16, paging []byte, pageSize int16) {
		if fx == nil {
			fx = newFuzzFixture(t)
		}
		s := &Session{Keyspace: "fz"}
		p, err := fx.x.Prepare(s, text)
		if err != nil {
			checkFault(t, "prepare", err)
			return
		}
		n := len(p.Params)
		switch {
		case mode&(1<<9) != 0 && mode&(1<<10) != 0:
			n++
		case mode&(1<<9) != 0 && n > 0:
			n--
		}
		o := Options{Values: fuzzValues(n, [][]byte{v0, v1, v2, v3}, mode), PageSize: int(pageSize), PagingState: paging}
		if mode&(1<<8) != 0 {
			for i := range o.Values {
				name := fmt.Sprint(i)
				if i < len(p.Params) {
					name = p.Params[i].Name
				}
				o.Names = append(o.Names, name)
			}
		}
		res, err := fx.x.Execute(s, p, o)
		if err != nil {
			checkFault(t, "execute", err)
			if now := fx.dumpAll(t); !bytes.Equal(now, fx.dump) {
				t.Fatalf("%q failed (%v) but changed the data:\nbefore:\n%s\nafter:\n%s", text, err, fx.dump, now)
			}
			return
		}
		if res.Kind == ResultRows {
			for _, row := range res.Rows {
				if len(row) != len(res.Columns) {
					t.Fatalf("a row of %d values for %d columns", len(row), len(res.Columns))
				}
			}
		}
		if res.PagingState != nil { // the next page, as a driver would ask for it
			o.PagingState = res.PagingState
			if _, err := fx.x.Execute(s, p, o); err != nil {
				checkFault(t, "next page", err)
			}
		}
		if p.Kind != KindSelect && p.Kind != KindUse {
			// It may have changed the data: start the next input afresh.
			fx.close()
			fx = nil
		}
	})
}

// fuzzScenarioStatements are the statements of the scenario files' exec blocks.
func fuzzScenarioStatements(tb testing.TB) []string {
	paths, err := filepath.Glob("testdata/*")
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, path := range paths {
		if fi, err := os.Stat(path); err != nil || fi.IsDir() {
			continue
		}
		text, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		for _, block := range strings.Split(string(text), "\n\n") {
			head, _, ok := strings.Cut(block, "----")
			if !ok {
				continue
			}
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(head), "\n") {
				if !strings.HasPrefix(l, "#") {
					lines = append(lines, l)
				}
			}
			if len(lines) < 2 || !strings.HasPrefix(lines[0], "exec") {
				continue
			}
			sts, err := cql.ParseScript(strings.Join(lines[1:], "\n"))
			if err != nil {
				continue
			}
			for _, st := range sts {
				out = append(out, st.String())
			}
		}
	}
	return out
}

// pagingQueries are the SELECTs FuzzPagingState pages through: over the ring, over one
// partition's clustering slice, over partitions and clustering prefixes pinned by IN, in
// reverse, with a filter and with a static column. The state carries the counts LIMIT and
// PER PARTITION LIMIT go by, as Cassandra's does, so a forged one may return more rows than
// a limit allows: of a query with limits, any row of the query without them may come back.
var pagingQueries = []struct{ query, unlimited string }{
	{"SELECT * FROM pg", ""},
	{"SELECT * FROM pg WHERE k = 1 AND c >= 2 AND c < 8", ""},
	{"SELECT * FROM pg WHERE k IN (1, 3) AND c IN (1, 5, 9)", ""},
	{"SELECT * FROM pg WHERE k = 2 ORDER BY c DESC", ""},
	{"SELECT k, c, v FROM pg WHERE v > 10 AND v < 40 ALLOW FILTERING", ""},
	{"SELECT * FROM pg WHERE token(k) > 0", ""},
	{"SELECT k, c, s FROM pg WHERE k IN (0, 4) PER PARTITION LIMIT 3", "SELECT k, c, s FROM pg WHERE k IN (0, 4)"},
	{"SELECT * FROM pg LIMIT 17", "SELECT * FROM pg"},
}

// FuzzPagingState runs a SELECT over 50 rows with a forged paging state and page size: it
// must fail cleanly or return rows the query selects, none of them twice in the page.
func FuzzPagingState(f *testing.F) {
	eng, err := engine.Open(engine.Options{Dir: "/fuzz", FS: storage.NewMemFS()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { eng.Close() })
	x := New(eng, nil)
	s := &Session{}
	run := func(text string, o Options) (*Prepared, *Result, error) {
		p, err := x.Prepare(s, text)
		if err != nil {
			return nil, nil, err
		}
		res, err := x.Execute(s, p, o)
		return p, res, err
	}
	setup := []string{
		"CREATE KEYSPACE fz WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"USE fz",
		"CREATE TABLE pg (k int, c int, s int STATIC, v int, PRIMARY KEY (k, c))",
	}
	for k := range 5 {
		setup = append(setup, fmt.Sprintf("UPDATE pg SET s = %d WHERE k = %d", k, k))
		for c := range 10 {
			setup = append(setup, fmt.Sprintf("INSERT INTO pg (k, c, v) VALUES (%d, %d, %d)", k, c, k*10+c))
		}
	}
	for _, st := range setup {
		if _, _, err := run(st, Options{}); err != nil {
			f.Fatalf("%s: %v", st, err)
		}
	}
	// all is each query's whole result, one string per row.
	all := make([]map[string]bool, len(pagingQueries))
	for i, pq := range pagingQueries {
		q := pq.query
		u := pq.unlimited
		if u == "" {
			u = q
		}
		_, res, err := run(u, Options{})
		if err != nil {
			f.Fatalf("%s: %v", u, err)
		}
		all[i] = map[string]bool{}
		for _, row := range res.Rows {
			all[i][fmt.Sprintf("%x", row)] = true
		}
		// Seeds: the states of a real paging, and forgeries of them.
		var state []byte
		for n := 0; n < 100; n++ {
			_, res, err := run(q, Options{PageSize: 7, PagingState: state})
			if err != nil || res.PagingState == nil {
				break
			}
			state = res.PagingState
			f.Add(uint8(i), state, int16(7))
			f.Add(uint8(i), bytes.Replace(state, []byte(`"s":0`), []byte(`"s":1`), 1), int16(3))
		}
	}
	f.Add(uint8(1), []byte(`{"s":0,"e":"AA==","i":"","n":0,"p":0}`), int16(5))
	f.Add(uint8(1), []byte(`{"s":0,"e":"/////w==","i":"zz","k":["AAAAAQ=="],"n":3,"p":1}`), int16(5))
	f.Add(uint8(0), []byte(`{"s":1,"e":null,"i":"","n":-1}`), int16(0))
	f.Add(uint8(2), []byte(`{"s":5,"e":"","i":"00","k":[],"n":99999999999,"p":1}`), int16(-1))

	prepared := make([]*Prepared, len(pagingQueries))
	for i, pq := range pagingQueries {
		if prepared[i], err = x.Prepare(s, pq.query); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, query uint8, state []byte, pageSize int16) {
		i := int(query) % len(pagingQueries)
		res, err := x.Execute(s, prepared[i], Options{PageSize: int(pageSize), PagingState: state})
		if err != nil {
			checkFault(t, "execute", err)
			return
		}
		seen := map[string]bool{}
		for _, row := range res.Rows {
			key := fmt.Sprintf("%x", row)
			if !all[i][key] {
				t.Fatalf("%s with state %q: row %s is not one the query selects", pagingQueries[i].query, state, key)
			}
			if seen[key] {
				t.Fatalf("%s with state %q: row %s twice", pagingQueries[i].query, state, key)
			}
			seen[key] = true
		}
		if pageSize > 0 && len(res.Rows) > int(pageSize) {
			t.Fatalf("%d rows for a page of %d", len(res.Rows), pageSize)
		}
	})
}
