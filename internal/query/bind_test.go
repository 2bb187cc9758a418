package query

import (
	"errors"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// TestBindAccepts lists queries whose every name is bound, each with its result over one item.
func TestBindAccepts(t *testing.T) {
	doc := Slice{[]byte(`{"id":"a","n":2,"tags":["x","y"],"children":[{"name":"k","pets":[{"n":"p"}]}],"value":7}`)}
	for _, tc := range []struct{ sql, want string }{
		{`SELECT VALUE 1`, `[1]`},
		{`SELECT 1`, `[{"$1":1}]`},
		{`SELECT VALUE [1, {"a": 2}]`, `[[1,{"a":2}]]`},
		{`SELECT VALUE c.id FROM c`, `["a"]`},
		{`SELECT VALUE root.id FROM root`, `["a"]`},
		{`SELECT VALUE anything.id FROM anything`, `["a"]`},
		{`select value R.id from R where R.n = 2`, `["a"]`},
		{`SELECT VALUE r.id FROM root r`, `["a"]`},
		{`SELECT VALUE d.id FROM c AS d`, `["a"]`},
		{`SELECT VALUE c["value"] FROM c`, `[7]`},
		{`SELECT c.id FROM c WHERE c.id IN ("a", "b")`, `[{"id":"a"}]`},
		{`SELECT * FROM c IN c.children`, `[{"name":"k","pets":[{"n":"p"}]}]`},
		{`SELECT VALUE ch.name FROM ch IN root.children`, `["k"]`},
		{`SELECT VALUE ch.name FROM container.children[0] ch`, `["k"]`},
		{`SELECT VALUE children.name FROM c.children[0].name children`, `[]`},
		{`SELECT VALUE t FROM c JOIN t IN c.tags`, `["x","y"]`},
		{`SELECT c.id, t FROM c JOIN t IN c.tags WHERE t = "y"`, `[{"id":"a","t":"y"}]`},
		{`SELECT VALUE p.n FROM c JOIN ch IN c.children JOIN p IN ch.pets`, `["p"]`},
		{`SELECT VALUE x FROM c JOIN (SELECT VALUE t FROM t IN c.tags) x`, `["x","y"]`},
		{`SELECT VALUE s FROM (SELECT VALUE c.n FROM c) s`, `[2]`},
		{`SELECT * FROM (SELECT VALUE c.n FROM c)`, `[2]`},
		{`SELECT VALUE s FROM (SELECT VALUE r.n FROM root r) s`, `[2]`},
		{`SELECT VALUE c.id FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = "x")`, `["a"]`},
		{`SELECT VALUE ARRAY(SELECT VALUE t FROM t IN c.tags WHERE t != c.id) FROM c`, `[["x","y"]]`},
		{`SELECT VALUE (SELECT VALUE COUNT(1) FROM t IN c.tags) FROM c`, `[2]`},
		{`SELECT VALUE (SELECT VALUE c.n * 2) FROM c`, `[4]`},
		{`SELECT VALUE ARRAY(SELECT VALUE p.n FROM ch IN c.children JOIN p IN ch.pets) FROM c`, `[["p"]]`},
		{`SELECT VALUE ARRAY(SELECT VALUE x FROM (SELECT VALUE t FROM t IN c.tags) x) FROM c`, `[["x","y"]]`},
		// A nested query may shadow an outer alias; its own FROM still wants unique aliases.
		{`SELECT VALUE ARRAY(SELECT VALUE c FROM c IN c.tags) FROM c`, `[["x","y"]]`},
		{`SELECT c.n AS value_, COUNT(1) AS n FROM c GROUP BY c.n`, `[{"value_":2,"n":1}]`},
		{`SELECT VALUE c.id FROM c WHERE c.n = @n ORDER BY c.n`, `["a"]`},
		{`SELECT VALUE c.NaN FROM c`, `[]`},
		{`SELECT VALUE {value: 1, select: c.n} FROM c`, `[{"value":1,"select":2}]`},
		{`SELECT VALUE ALL FROM c AS ALL`, ``}, // ALL, FIRST and LAST are identifiers
	} {
		p, err := Prepare(tc.sql)
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if tc.want == "" {
			continue
		}
		page, err := p.Run(doc, Options{Params: map[string]value.Value{"@n": value.Num(2)}})
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if got := value.Arr(page.Results).String(); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.sql, got, tc.want)
		}
	}
}

// TestBindRejects lists queries Cosmos DB refuses for their names, with the message (a prefix)
// and position.
func TestBindRejects(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{`SELECT * FROM c WHERE x.id = 1`, `Identifier 'x' could not be resolved (line 1, column 23). Every name must be an alias`},
		{`SELECT x`, `Identifier 'x' could not be resolved (line 1, column 8).`},
		{`SELECT VALUE c.id`, `Identifier 'c' could not be resolved (line 1, column 14).`},
		{`SELECT id FROM c`, `Identifier 'id' could not be resolved (line 1, column 8).`},
		{`SELECT root.id FROM root r`, `Identifier 'root' could not be resolved (line 1, column 8). The container is aliased 'r' in FROM, and once aliased its own name is no longer bound.`},
		{`SELECT VALUE c.id FROM c AS d`, `Identifier 'c' could not be resolved (line 1, column 14). The container is aliased 'd'`},
		{"SELECT *\nFROM c\nWHERE c.a = 1 AND\n  d.b = 2", `Identifier 'd' could not be resolved (line 4, column 3).`},
		{`SELECT VALUE c.id FROM ch IN c.children`, `Identifier 'c' could not be resolved (line 1, column 14). The container is aliased 'ch'`},
		{`SELECT VALUE c FROM c.children`, `Identifier 'c' could not be resolved (line 1, column 14). The container is aliased 'children'`},
		{`SELECT VALUE t FROM c JOIN t IN x.tags`, `Identifier 'x' could not be resolved (line 1, column 33).`},
		{`SELECT VALUE t FROM c JOIN t IN t.tags`, `Identifier 't' could not be resolved (line 1, column 33).`},
		{`SELECT VALUE t FROM c JOIN x.tags t`, `Identifier 'x' could not be resolved (line 1, column 28).`},
		{`SELECT VALUE t FROM c JOIN t IN c.tags[x]`, `Syntax error`}, // FROM paths index only with literals
		{`SELECT VALUE t FROM c JOIN t IN c.tags WHERE u = 1`, `Identifier 'u' could not be resolved (line 1, column 46).`},
		{`SELECT c.n AS x FROM c ORDER BY x`, `Identifier 'x' could not be resolved (line 1, column 33).`},
		{`SELECT c.n AS x FROM c GROUP BY x`, `Identifier 'x' could not be resolved (line 1, column 33).`},
		{`SELECT VALUE c.id FROM c WHERE EXISTS(SELECT VALUE t FROM t IN d.tags)`, `Identifier 'd' could not be resolved (line 1, column 64).`},
		{`SELECT VALUE ARRAY(SELECT VALUE t FROM t IN c.tags WHERE u = 1) FROM c`, `Identifier 'u' could not be resolved (line 1, column 58).`},
		// Subqueries are correlated: they read the outer item through its alias, not the
		// container by a name of their own.
		{`SELECT VALUE (SELECT VALUE COUNT(1) FROM other) FROM c`, `Identifier 'other' could not be resolved (line 1, column 42).`},
		{`SELECT VALUE t FROM c JOIN (SELECT VALUE x FROM x IN other.tags) t`, `Identifier 'other' could not be resolved (line 1, column 54).`},
		// The inner query's aliases do not leak out.
		{`SELECT VALUE t FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags)`, `Identifier 't' could not be resolved (line 1, column 14).`},
		{`SELECT VALUE x FROM (SELECT VALUE c.n FROM c) s`, `Identifier 'x' could not be resolved (line 1, column 14).`},
		{`SELECT VALUE c FROM (SELECT VALUE c.n FROM c) s`, `Identifier 'c' could not be resolved (line 1, column 14).`},
		{`SELECT VALUE LOWER(y) FROM c`, `Identifier 'y' could not be resolved (line 1, column 20).`},
		{`SELECT VALUE COUNT(y) FROM c`, `Identifier 'y' could not be resolved (line 1, column 20).`},
		{`SELECT TOP 1 VALUE c.id FROM c ORDER BY z.n`, `Identifier 'z' could not be resolved (line 1, column 41).`},
		{`SELECT * FROM c JOIN t IN c.tags`, `'SELECT *' is only valid with a single input set.`},
		{`SELECT * FROM c JOIN (SELECT VALUE 1) one`, `'SELECT *' is only valid with a single input set.`},
		{`SELECT *`, `'SELECT *' is not valid if FROM clause is omitted.`},
		{`SELECT VALUE ARRAY(SELECT *) FROM c`, `'SELECT *' is not valid if FROM clause is omitted.`},
		{`SELECT VALUE 1 FROM c JOIN c IN c.tags`, `The alias 'c' is used twice in the FROM clause`},
		{`SELECT VALUE 1 FROM c JOIN t IN c.tags JOIN t IN c.tags`, `The alias 't' is used twice in the FROM clause`},
		{`SELECT VALUE 1 FROM root r JOIN root IN r.tags JOIN t IN root.tags`, ``}, // the IN alias root is bound
		{`SELECT c.value FROM c`, `Syntax error at line 1, column 10`},
	} {
		_, err := Prepare(tc.sql)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%q: %v, want no error", tc.sql, err)
			}
			continue
		}
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Kind != fault.BadRequest {
			t.Errorf("%q: got %v, want a 400", tc.sql, err)
			continue
		}
		if !strings.HasPrefix(fe.Message, tc.want) {
			t.Errorf("%q:\n got %s\nwant %s...", tc.sql, fe.Message, tc.want)
		}
		if strings.HasPrefix(tc.want, "Identifier") && fe.Pos == (fault.Pos{}) {
			t.Errorf("%q: no position in %+v", tc.sql, fe)
		}
	}
}

// TestBindBuiltTree binds a tree built without text (a front end compiling into this
// language): errors then carry no position.
func TestBindBuiltTree(t *testing.T) {
	q := &Query{
		Select: Select{Value: Property{Obj: Ident{Name: "x"}, Name: "id"}},
		From:   &From{Source: Source{Alias: "c", Expr: Ident{Name: "c"}}},
	}
	_, err := PrepareQuery(q)
	var fe *fault.Error
	if !errors.As(err, &fe) || !strings.HasPrefix(fe.Message, "Identifier 'x' could not be resolved. ") || fe.Pos != (fault.Pos{}) {
		t.Fatalf("got %#v", err)
	}
}
