package document

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/partita-db/partita/internal/fault"
)

func TestPatch(t *testing.T) {
	doc := []byte(`{"id":"1","b":2,"tags":["x","y"],"n":{"count":1,"f":1.5},"old":true}`)
	ops := []PatchOp{
		{Op: "add", Path: "/a", Value: json.RawMessage(`"new"`)},
		{Op: "set", Path: "/tags/0", Value: json.RawMessage(`"X"`)},
		{Op: "add", Path: "/tags/1", Value: json.RawMessage(`"ins"`)},
		{Op: "add", Path: "/tags/-", Value: json.RawMessage(`"end"`)},
		{Op: "replace", Path: "/b", Value: json.RawMessage(`{"deep":[1]}`)},
		{Op: "incr", Path: "/n/count", Value: json.RawMessage(`5`)},
		{Op: "incr", Path: "/n/f", Value: json.RawMessage(`1`)},
		{Op: "incr", Path: "/n/fresh", Value: json.RawMessage(`-2`)},
		{Op: "remove", Path: "/old"},
		{Op: "move", From: "/n/f", Path: "/moved"},
	}
	got, err := Patch(doc, ops)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"1","b":{"deep":[1]},"tags":["X","ins","y","end"],"n":{"count":6,"fresh":-2},"a":"new","moved":2.5}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	for _, bad := range []PatchOp{
		{Op: "replace", Path: "/missing", Value: json.RawMessage(`1`)},
		{Op: "remove", Path: "/missing"},
		{Op: "incr", Path: "/id", Value: json.RawMessage(`1`)},
		{Op: "incr", Path: "/tags", Value: json.RawMessage(`1`)},
		{Op: "add", Path: "/no/parent", Value: json.RawMessage(`1`)},
		{Op: "set", Path: "/tags/9", Value: json.RawMessage(`1`)},
		{Op: "add", Path: "/x"},
		{Op: "copy", Path: "/x", Value: json.RawMessage(`1`)},
		{Op: "set", Path: "/_ts", Value: json.RawMessage(`1`)},
		{Op: "set", Path: "nope", Value: json.RawMessage(`1`)},
	} {
		if _, err := Patch(doc, []PatchOp{bad}); !errors.Is(err, fault.BadRequest) {
			t.Errorf("%+v: got %v, want 400", bad, err)
		}
	}
	if _, err := Patch(doc, make([]PatchOp, 11)); !errors.Is(err, fault.BadRequest) {
		t.Errorf("11 operations: %v", err)
	}
}
