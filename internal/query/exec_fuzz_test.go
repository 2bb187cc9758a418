package query

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

var fuzzDocs = Slice{
	[]byte(`{"id":"1","pk":"a","n":1,"s":"Hello","arr":[1,"x",null,{"y":2}],"o":{"p":{"q":[3]}}}`),
	[]byte(`{"id":"2","pk":"b","n":-2.5,"s":"","arr":[],"o":null,"b":true}`),
	[]byte(`{"id":"3","n":1e300,"s":"ünï","arr":[[1,2],[3]],"geo":{"type":"Point","coordinates":[1,2]}}`),
}

// evalSeeds are queries of every shape: the fuzz targets' seeds.
var evalSeeds = []string{
	"SELECT * FROM c",
	"SELECT VALUE c.n * 2 FROM c WHERE c.s LIKE 'H%'",
	"SELECT c.pk, COUNT(1) AS n, AVG(c.n) FROM c GROUP BY c.pk",
	"SELECT DISTINCT VALUE t FROM c JOIN t IN c.arr ORDER BY t DESC OFFSET 1 LIMIT 2",
	"SELECT VALUE ARRAY(SELECT VALUE x FROM x IN c.arr WHERE IS_NUMBER(x)) FROM c",
	"SELECT VALUE EXISTS(SELECT VALUE 1 FROM x IN c.arr) FROM c",
	"SELECT VALUE (SELECT VALUE MAX(x) FROM x IN c.arr) FROM c",
	// Derived tables: a subquery source that needs all the items.
	"SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.n FROM c) x",
	"SELECT VALUE y FROM (SELECT TOP 2 VALUE x FROM (SELECT VALUE c.n FROM c ORDER BY c.n) x) y",
	"SELECT TOP @n c.id FROM c ORDER BY c.n",
	"SELECT VALUE c.n ?? c.s ?: 1 FROM c",
	"SELECT VALUE [c.n << 3, ~c.n, c.n | 1, c.s || 'x', c.o.p.q[0]] FROM c",
	"SELECT VALUE ST_DISTANCE(c.geo, {'type':'Point','coordinates':[0,0]}) FROM c",
	"SELECT VALUE REPLICATE(c.s, 3) FROM c",
	"SELECT VALUE REGEXMATCH(c.s, '^h', 'i') FROM c",
	"SELECT VALUE DateTimeAdd('dd', c.n, '2020-01-01T00:00:00.0000000Z') FROM c",
	// Name binding: unbound names, aliased containers, correlated subqueries, SELECT *.
	"SELECT * FROM c WHERE x.id = 1",
	"SELECT r.id, root.id FROM root r",
	"SELECT VALUE ARRAY(SELECT VALUE c FROM c IN c.arr) FROM c",
	"SELECT * FROM c JOIN t IN c.arr",
	"SELECT VALUE x FROM c JOIN (SELECT VALUE y FROM y IN c.arr) x WHERE c[\"value\"] = 1",
}

// FuzzEval runs arbitrary queries over a few items: evaluation must never panic or hang, and
// every failure must be a Cosmos-shaped error.
func FuzzEval(f *testing.F) {
	for _, q := range evalSeeds {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		p, err := Prepare(sql)
		if err != nil {
			if e, ok := err.(*fault.Error); !ok || e.Kind != fault.BadRequest {
				t.Fatalf("%q: failure is not a 400: %v", sql, err)
			}
			return
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			tok := ""
			for range 50 {
				page, err := p.Run(fuzzDocs, Options{Params: map[string]value.Value{"@n": value.Num(2)}, MaxItems: 2, Continuation: tok})
				if err != nil {
					if e, ok := err.(*fault.Error); !ok || e.Kind != fault.BadRequest {
						t.Errorf("%q: failure is not a 400: %v", sql, err)
					}
					return
				}
				if tok = page.Next; tok == "" {
					return
				}
			}
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("query did not finish: %s", sql)
		}
	})
}

// continuationQueries are queries whose continuation tokens take every shape: item positions
// (with rows of an item skipped, and the count TOP has returned) and offsets into a sorted,
// grouped or distinct result.
var continuationQueries = []string{
	"SELECT * FROM c",
	"SELECT VALUE t FROM c JOIN t IN c.arr",
	"SELECT TOP 3 VALUE t FROM c JOIN t IN c.arr",
	"SELECT c.id FROM c ORDER BY c.n DESC",
	"SELECT DISTINCT VALUE t FROM c JOIN t IN c.arr",
	"SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk",
	"SELECT VALUE c.id FROM c ORDER BY c.id OFFSET 1 LIMIT 5",
}

// FuzzContinuation resumes queries from arbitrary tokens: a token comes from the client and
// may be forged, truncated or another query's. Resuming never panics or hangs, every refusal
// is a 400, and an accepted token yields rows the query has (never rows it does not). Under
// TOP, those are the rows of the query without TOP: a token names an item position, and the
// items before it may have been deleted since the previous page, so a page may go on past
// the rows TOP would take of the items as they are now.
func FuzzContinuation(f *testing.F) {
	for i, sql := range continuationQueries {
		p, err := Prepare(sql)
		if err != nil {
			f.Fatal(err)
		}
		tok := ""
		for range 10 { // every token the query hands out, page by page
			page, err := p.Run(fuzzDocs, Options{MaxItems: 1, Continuation: tok})
			if err != nil {
				f.Fatal(err)
			}
			if tok = page.Next; tok == "" {
				break
			}
			f.Add(uint8(i), tok)
		}
	}
	for _, raw := range []string{
		`{"o":9223372036854775807}`, `{"o":-1}`, `{"o":1e400}`, `{"o":"1"}`, `{}`, `null`, `[]`,
		`{"s":true,"r":{"a":"","f":[{"x":"ff","q":18446744073709551615}]},"k":9223372036854775807,"n":9223372036854775807}`,
		`{"s":true,"r":{"a":"","f":[{"x":"ff","q":0}]},"k":-1}`, `{"s":true,"r":{"a":"ff","f":[{"x":"00","q":1}]}}`,
		`{"s":true,"r":{"a":"zz","f":[]}}`, `{"s":true,"r":null}`, `{"s":true,"x":1}`, `{"s":true,"s":false}`,
		"{\"s\":true,\"r\":{\"a\":\"\xff\",\"f\":[{\"x\":\"ff\",\"q\":1}]}}",
		`{"o":2,"b":{"v":"x","m":"","q":1}}`, `{"b":{"v":[1],"m":"AA==","q":0}}`, `{"o":-3,"b":{"v":{},"m":"!","q":-1}}`, `{"b":null}`,
	} {
		for i := range continuationQueries {
			f.Add(uint8(i), base64.RawURLEncoding.EncodeToString([]byte(raw)))
		}
	}
	f.Add(uint8(0), "!!")
	f.Add(uint8(0), "eyJvIjoxfQ==") // padded base64
	f.Fuzz(func(t *testing.T, which uint8, tok string) {
		sql := continuationQueries[int(which)%len(continuationQueries)]
		p, err := Prepare(sql)
		if err != nil {
			t.Fatal(err)
		}
		unlimited, err := Prepare(strings.Replace(sql, "TOP 3 ", "", 1))
		if err != nil {
			t.Fatal(err)
		}
		all, err := unlimited.Run(fuzzDocs, Options{MaxItems: 1000})
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]int{}
		for _, v := range all.Results {
			have[value.Key(v)]++
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			page, err := p.Run(fuzzDocs, Options{MaxItems: 2, Continuation: tok})
			if err != nil {
				if e, ok := err.(*fault.Error); !ok || e.Kind != fault.BadRequest {
					t.Errorf("%s from %q: failure is not a 400: %v", sql, tok, err)
				}
				return
			}
			for _, v := range page.Results {
				if have[value.Key(v)]--; have[value.Key(v)] < 0 {
					t.Errorf("%s from %q: %s is not one of the query's results %v", sql, tok, v, all.Results)
				}
			}
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s from %q did not finish", sql, tok)
		}
	})
}
