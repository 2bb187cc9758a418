package document

import (
	"errors"
	"testing"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// An item given as a value is stored exactly as the same item given as JSON, with the same key.
func TestValueAndJSONSourcesAgree(t *testing.T) {
	paths := [][]string{{"tenant"}, {"user", "id"}}
	body := []byte(`{"id":"a","tenant":"t1","user":{"id":7},"tags":["x",null,true],"_rid":"dropped"}`)
	v, err := value.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, keyJSON, err := FromJSON(body).Parse(paths)
	if err != nil {
		t.Fatal(err)
	}
	fromValue, keyValue, err := FromValue(v).Parse(paths)
	if err != nil {
		t.Fatal(err)
	}
	sys := System{RID: "R", Self: "S", ETag: "E", TS: 7}
	if a, b := string(fromJSON.Stamp(nil, sys)), string(fromValue.Stamp(nil, sys)); a != b {
		t.Fatalf("stored differently:\n json  %s\n value %s", a, b)
	}
	if fromJSON.ID != fromValue.ID || len(keyJSON) != 2 || keyJSON[0] != keyValue[0] || keyJSON[1] != keyValue[1] {
		t.Fatalf("id or key differ: %q %v, %q %v", fromJSON.ID, keyJSON, fromValue.ID, keyValue)
	}
	// System properties are never indexed, so the value form need not keep them.
	for _, m := range fromJSON.Value.Members() {
		if !IsSystemProperty(m.Key) && !value.Equal(m.Val, fromValue.Value.Get(m.Key)) {
			t.Fatalf("%s: %v as JSON, %v as a value", m.Key, m.Val, fromValue.Value.Get(m.Key))
		}
	}
}

func TestValueSourceRefusals(t *testing.T) {
	for name, v := range map[string]value.Value{
		"not an object": value.Arr(nil),
		"no id":         value.Obj([]value.Member{{Key: "pk", Val: value.Str("p")}}),
		"numeric id":    value.Obj([]value.Member{{Key: "id", Val: value.Num(1)}}),
		"id with /":     value.Obj([]value.Member{{Key: "id", Val: value.Str("a/b")}}),
	} {
		if _, _, err := FromValue(v).Parse([][]string{{"pk"}}); !errors.Is(err, fault.BadRequest) {
			t.Errorf("%s: got %v, want a bad request", name, err)
		}
	}
}
