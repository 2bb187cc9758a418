package query

import (
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

// FuzzEval runs arbitrary queries over a few items: evaluation must never panic or hang, and
// every failure must be a Cosmos-shaped error.
func FuzzEval(f *testing.F) {
	for _, q := range []string{
		"SELECT * FROM c",
		"SELECT VALUE c.n * 2 FROM c WHERE c.s LIKE 'H%'",
		"SELECT c.pk, COUNT(1) AS n, AVG(c.n) FROM c GROUP BY c.pk",
		"SELECT DISTINCT VALUE t FROM c JOIN t IN c.arr ORDER BY t DESC OFFSET 1 LIMIT 2",
		"SELECT VALUE ARRAY(SELECT VALUE x FROM x IN c.arr WHERE IS_NUMBER(x)) FROM c",
		"SELECT VALUE EXISTS(SELECT VALUE 1 FROM x IN c.arr) FROM c",
		"SELECT VALUE (SELECT VALUE MAX(x) FROM x IN c.arr) FROM c",
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
	} {
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
