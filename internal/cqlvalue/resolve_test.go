package cqlvalue

import (
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/fault"
)

func TestFromAST(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{in: "int", want: "int"},
		{in: "varchar", want: "text"},
		{in: "counter", want: "counter"},
		{in: "list<int>", want: "list<int>"},
		{in: "frozen<list<int>>", want: "frozen<list<int>>"},
		{in: "map<text, frozen<set<int>>>", want: "map<text, frozen<set<int>>>"},
		{in: "tuple<int, text>", want: "frozen<tuple<int, text>>"},
		{in: "frozen<tuple<int, varchar>>", want: "frozen<tuple<int, text>>"},
		{in: "tuple<int, list<int>>", want: "frozen<tuple<int, frozen<list<int>>>>"},
		{in: "frozen<list<list<int>>>", want: "frozen<list<frozen<list<int>>>>"},
		{in: "list<tuple<int>>", want: "list<frozen<tuple<int>>>"},
		{in: "map<duration, int>", err: "Durations are not allowed as map keys: map<duration, int>"},
		{in: "map<int, duration>", want: "map<int, duration>"},
		{in: "set<duration>", err: "Durations are not allowed inside sets: set<duration>"},
		{in: "list<duration>", want: "list<duration>"},
		{in: "list<counter>", err: "Counters are not allowed inside collections: list<counter>"},
		{in: "map<counter, int>", err: "Counters are not allowed inside collections: map<counter, int>"},
		{in: "frozen<map<int, counter>>", err: "Counters are not allowed inside collections: frozen<map<int, counter>>"},
		{in: "tuple<int, counter>", err: "Counters are not allowed inside tuples"},
		{in: "list<list<int>>", err: "Non-frozen collections are not allowed inside collections: list<list<int>>"},
		{in: "map<set<int>, int>", err: "Non-frozen collections are not allowed inside collections: map<set<int>, int>"},
		{in: "frozen<int>", err: "frozen<> is only allowed on collections, tuples, and user-defined types (got int)"},
		{in: "frozen<frozen<int>>", err: "frozen<> is only allowed on collections, tuples, and user-defined types (got int)"},
		{in: "address", err: "Unknown type address"},
	}
	for _, tc := range tests {
		got, err := FromAST(parseType(t, tc.in), nil)
		if tc.err != "" {
			if msg(err) != tc.err {
				t.Errorf("%s: error %v, want invalid %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got.String() != tc.want {
			t.Errorf("%s: String %q, want %q", tc.in, got, tc.want)
		}
		// Printing and resolving again is the same type.
		again, err := FromAST(parseType(t, got.String()), nil)
		if err != nil || !Equal(got, again) {
			t.Errorf("%s: round trip %v, %v", tc.in, again, err)
		}
	}
}

func TestFromASTUserType(t *testing.T) {
	addr := &Type{Kind: UDT, Keyspace: "ks", Name: "address", Fields: []string{"street", "zip"},
		Elems: []*Type{Native(Text), Native(Int)}}
	udt := func(ks, name string) (*Type, error) {
		if name == "address" {
			return addr, nil
		}
		return nil, cql.Invalid(fault.Pos{}, "Unknown type %s", name)
	}
	got, err := FromAST(parseType(t, "list<frozen<address>>"), udt)
	if err != nil || got.String() != "list<frozen<address>>" || !got.Elems[0].Frozen {
		t.Errorf("list<frozen<address>>: %v %v", got, err)
	}
	got, err = FromAST(parseType(t, "address"), udt)
	if err != nil || got.String() != "address" || got.Frozen {
		t.Errorf("address: %v %v", got, err)
	}
	if _, err := FromAST(parseType(t, "set<address>"), udt); msg(err) != "Non-frozen UDTs are not allowed inside collections: set<address>" {
		t.Errorf("set<address>: %v", err)
	}
	if addr.Frozen {
		t.Error("the resolver's type was modified")
	}
}

func TestEqual(t *testing.T) {
	if !Equal(mustType(t, "map<text, frozen<list<int>>>"), MapOf(Native(Text), FrozenOf(ListOf(Native(Int))))) {
		t.Error("constructed map differs from resolved one")
	}
	for _, pair := range [][2]string{{"list<int>", "frozen<list<int>>"}, {"list<int>", "set<int>"}, {"tuple<int>", "tuple<int, int>"}, {"int", "bigint"}} {
		if Equal(mustType(t, pair[0]), mustType(t, pair[1])) {
			t.Errorf("%s equals %s", pair[0], pair[1])
		}
	}
}

func TestDataType(t *testing.T) {
	tests := map[string]datatype.DataType{
		"text":                         datatype.Varchar,
		"ascii":                        datatype.Ascii,
		"counter":                      datatype.Counter,
		"list<int>":                    datatype.NewList(datatype.Int),
		"frozen<set<timeuuid>>":        datatype.NewSet(datatype.Timeuuid),
		"map<text, frozen<list<int>>>": datatype.NewMap(datatype.Varchar, datatype.NewList(datatype.Int)),
		"tuple<int, blob>":             datatype.NewTuple(datatype.Int, datatype.Blob),
	}
	for in, want := range tests {
		if want == nil {
			continue // not a valid type
		}
		got := mustType(t, in).DataType()
		if got.AsCql() != want.AsCql() || got.Code() != want.Code() {
			t.Errorf("%s: %v, want %v", in, got, want)
		}
	}
	if datatype.Varchar.Code() != 0x000D {
		t.Errorf("varchar code %#x", datatype.Varchar.Code())
	}
}
