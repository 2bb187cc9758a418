package cqlvalue

import "testing"

func TestCollectionOps(t *testing.T) {
	list := mustType(t, "list<int>")
	set := mustType(t, "set<int>")
	m := mustType(t, "map<text, int>")
	ints := func(vs ...int32) []byte {
		if len(vs) == 0 {
			return nil
		}
		var items [][]byte
		for _, v := range vs {
			items = append(items, EncodeInt(v))
		}
		return EncodeList(items...)
	}
	entries := func(kv ...any) []byte {
		var ks, vs [][]byte
		for i := 0; i < len(kv); i += 2 {
			ks = append(ks, EncodeText(kv[i].(string)))
			vs = append(vs, EncodeInt(int32(kv[i+1].(int))))
		}
		return EncodeMap(Native(Text), ks, vs)
	}
	check := func(what string, typ *Type, got []byte, err error, want string) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		} else if f := Format(typ, got); f != want {
			t.Errorf("%s: %s, want %s", what, f, want)
		}
	}
	got, err := ListAppend(ints(1, 2), ints(3, 1))
	check("append", list, got, err, "[1, 2, 3, 1]")
	got, err = ListAppend(nil, ints(3))
	check("append to null", list, got, err, "[3]")
	got, err = ListPrepend(ints(1, 2), ints(3, 4))
	check("prepend", list, got, err, "[3, 4, 1, 2]")
	got, err = ListRemove(list, ints(1, 2, 1, 3), ints(1, 3))
	check("remove", list, got, err, "[2]")
	got, err = ListRemove(list, ints(1, 1), ints(1))
	check("remove all", list, got, err, "null")
	got, err = ListSetIndex(ints(1, 2, 3), 1, EncodeInt(9))
	check("set index", list, got, err, "[1, 9, 3]")
	if _, err := ListSetIndex(ints(1, 2, 3), 5, EncodeInt(9)); msg(err) != "List index 5 out of bound, list has size 3" {
		t.Errorf("set index out of range: %v", err)
	}
	if _, err := ListSetIndex(nil, 0, EncodeInt(9)); msg(err) != "Attempted to set an element on a list which is null" {
		t.Errorf("set index of null: %v", err)
	}
	got, err = ListDeleteIndex(ints(1, 2, 3), 0)
	check("delete index", list, got, err, "[2, 3]")
	if _, err := ListDeleteIndex(ints(1, 2, 3), -1); msg(err) != "List index -1 out of bound, list has size 3" {
		t.Errorf("delete index out of range: %v", err)
	}
	if v, ok, err := ListGet(ints(1, 2), 1); !ok || err != nil || Format(Native(Int), v) != "2" {
		t.Errorf("get: %x %v %v", v, ok, err)
	}
	got, err = SetAdd(set, ints(1, 5), ints(3, 1, 7, 3))
	check("set add", set, got, err, "{1, 3, 5, 7}")
	got, err = SetRemove(set, ints(1, 3, 5), ints(3, 9))
	check("set remove", set, got, err, "{1, 5}")
	got, err = SetRemove(set, ints(1), ints(1))
	check("set remove all", set, got, err, "null")
	got, err = MapPut(m, entries("b", 2, "d", 4), entries("a", 1, "b", 20))
	check("map put", m, got, err, "{'a': 1, 'b': 20, 'd': 4}")
	got, err = MapRemove(m, entries("a", 1, "b", 2), EncodeSet(Native(Text), EncodeText("a"), EncodeText("z")))
	check("map remove", m, got, err, "{'b': 2}")
	if v, ok, err := MapGet(m, entries("a", 1, "b", 2), EncodeText("b")); !ok || err != nil || Format(Native(Int), v) != "2" {
		t.Errorf("map get: %x %v %v", v, ok, err)
	}
	if _, ok, _ := MapGet(m, entries("a", 1), EncodeText("b")); ok {
		t.Error("map get of a missing key")
	}
	for _, c := range []struct {
		typ  *Type
		coll []byte
		v    []byte
		want bool
	}{
		{list, ints(1, 2), EncodeInt(2), true}, {list, ints(1, 2), EncodeInt(3), false},
		{set, nil, EncodeInt(3), false}, {m, entries("a", 1), EncodeInt(1), true},
		{m, entries("a", 1), EncodeText("a"), false},
	} {
		if got, err := Contains(c.typ, c.coll, c.v); got != c.want || err != nil {
			t.Errorf("Contains(%s, %x) = %v %v", Format(c.typ, c.coll), c.v, got, err)
		}
	}
	if ok, err := ContainsKey(m, entries("a", 1), EncodeText("a")); !ok || err != nil {
		t.Errorf("ContainsKey: %v %v", ok, err)
	}
	if _, err := ListAppend([]byte{0, 0, 0, 9}, nil); err == nil {
		t.Error("a malformed list was appended to")
	}
}
