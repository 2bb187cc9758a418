package cql

import (
	"reflect"
	"testing"

	"github.com/partita-db/partita/internal/fault"
)

// The printed form does not show every field (constant kinds, positions); these check the tree.

func TestCreateTableFields(t *testing.T) {
	st, err := Parse(`CREATE TABLE IF NOT EXISTS uprofile.user (firstname text, lastname text, id int,
		visits counter STATIC, PRIMARY KEY ((firstname, lastname), id))
		WITH CLUSTERING ORDER BY (id DESC) AND cosmosdb_provisioned_throughput = 400`)
	if err != nil {
		t.Fatal(err)
	}
	ct := st.(*CreateTable)
	if !ct.IfNotExists || ct.Table != (TableName{Keyspace: "uprofile", Name: "user"}) ||
		!reflect.DeepEqual(ct.PartitionKey, []string{"firstname", "lastname"}) ||
		!reflect.DeepEqual(ct.Clustering, []string{"id"}) ||
		!reflect.DeepEqual(ct.ClusteringOrder, []Ordering{{Column: "id", Desc: true}}) ||
		!ct.Columns[3].Static || ct.Columns[3].Type.Kind != TypeNative || ct.Columns[3].Type.Name != "counter" {
		t.Errorf("%+v", ct)
	}
	if v, ok := ct.Options.Get("cosmosdb_provisioned_throughput").(*Constant); !ok || v.Kind != ConstInteger || v.Text != "400" {
		t.Errorf("throughput option: %#v", ct.Options.Get("cosmosdb_provisioned_throughput"))
	}
	if st.Start() != (fault.Pos{Line: 1, Column: 1}) {
		t.Errorf("start %+v", st.Start())
	}
}

func TestConstantKinds(t *testing.T) {
	st, err := Parse(`INSERT INTO t (a, b, c, d, e, f, g, h, i, j) VALUES ('s', -1, 2.5, true, 0xff,
		123e4567-e89b-12d3-a456-426614174000, 1h, NULL, [1], {'k': :v})`)
	if err != nil {
		t.Fatal(err)
	}
	ins := st.(*Insert)
	want := []ConstKind{ConstString, ConstInteger, ConstFloat, ConstBool, ConstHex, ConstUUID, ConstDuration}
	for i, k := range want {
		if c, ok := ins.Values[i].(*Constant); !ok || c.Kind != k {
			t.Errorf("value %d: %#v, want kind %d", i, ins.Values[i], k)
		}
	}
	if _, ok := ins.Values[7].(*Null); !ok {
		t.Errorf("value 7: %#v", ins.Values[7])
	}
	m := ins.Values[9].(*Map)
	bm := m.Entries[0].Value.(*BindMarker)
	if bm.Name != "v" || bm.Index != 0 || bm.Pos != (fault.Pos{Line: 2, Column: 62}) || st.Markers()[0] != bm {
		t.Errorf("marker %+v", bm)
	}
}

func TestBatchMarkersAreNumberedAcrossStatements(t *testing.T) {
	st, err := Parse("BEGIN BATCH INSERT INTO t (a, b) VALUES (?, ?); UPDATE t SET b = ? WHERE a = ? APPLY BATCH")
	if err != nil {
		t.Fatal(err)
	}
	b := st.(*Batch)
	if len(b.Markers()) != 4 || len(b.Statements[0].Markers()) != 2 || b.Statements[1].Markers()[0].Index != 2 {
		t.Errorf("markers: batch %d, first %d, second %+v", len(b.Markers()), len(b.Statements[0].Markers()), b.Statements[1].Markers())
	}
}

func TestUpdateAssignments(t *testing.T) {
	st, err := Parse("UPDATE t SET n = n + 1, l = [0] + l, m['k'] = 'v', s = s - {'x'} WHERE k = 1 IF n = 0")
	if err != nil {
		t.Fatal(err)
	}
	u := st.(*Update)
	ops := []AssignOp{AssignAdd, AssignPrepend, AssignSet, AssignSub}
	for i, op := range ops {
		if u.Set[i].Op != op {
			t.Errorf("assignment %d: op %d, want %d", i, u.Set[i].Op, op)
		}
	}
	if u.Set[2].Key == nil || len(u.Conditions) != 1 || u.Conditions[0].Op != OpEq {
		t.Errorf("%+v", u)
	}
}

func TestErrorSorts(t *testing.T) {
	_, err := Parse("SELECT * FROM t WHERE")
	if !IsSyntax(err) || IsInvalid(err) {
		t.Errorf("syntax error: %v", err)
	}
	_, err = Parse("INSERT INTO t (a, b) VALUES (1)")
	if IsSyntax(err) || !IsInvalid(err) || fault.KindOf(err) != fault.BadRequest {
		t.Errorf("invalid statement: %v", err)
	}
	if fe := fault.From(err); fe.Pos != (fault.Pos{Line: 1, Column: 31}) {
		t.Errorf("position %+v", fe.Pos)
	}
}

func TestInvalidForTheFrontEnd(t *testing.T) {
	err := error(Invalid(fault.Pos{}, "Undefined column name %s", "x"))
	if !IsInvalid(err) || IsSyntax(err) || fault.From(err).Message != "Undefined column name x" {
		t.Errorf("%v", err)
	}
	err = Invalid(fault.Pos{Line: 2, Column: 3}, "bad")
	if fe := fault.From(err); fe.Pos.Line != 2 || fe.Message != "Invalid statement at line 2, column 3: bad" {
		t.Errorf("%+v", fe)
	}
}
