package document

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/value"

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

// FuzzPatch applies arbitrary patch operations, as clients send them, to arbitrary items:
// applying never panics, every failure is a 400 naming the operation, and a patched item is
// a JSON object whose id and system properties are those it had.
func FuzzPatch(f *testing.F) {
	doc := `{"id":"1","pk":"a","n":{"count":1,"f":1.5},"tags":["x","y"],"_ts":5,"_etag":"\"e\""}`
	for _, ops := range []string{
		`[{"op":"add","path":"/a","value":"new"},{"op":"incr","path":"/n/count","value":5}]`,
		`[{"op":"set","path":"/tags/0","value":{"deep":[1]}},{"op":"add","path":"/tags/-","value":null}]`,
		`[{"op":"remove","path":"/tags/1"},{"op":"replace","path":"/n/f","value":2}]`,
		`[{"op":"move","from":"/n","path":"/m"}]`, `[{"op":"move","from":"/n","path":"/n/x"}]`,
		`[{"op":"incr","path":"/n/count","value":9223372036854775807}]`,
		`[{"op":"incr","path":"/n/f","value":1.7976931348623157e308},{"op":"incr","path":"/n/f","value":1.7976931348623157e308}]`,
		`[{"op":"incr","path":"/n/count","value":1e400}]`, `[{"op":"add","path":"/a","value":1e400}]`,
		`[{"op":"set","path":"/id","value":"2"}]`, `[{"op":"remove","path":"/_etag"}]`, `[{"op":"move","from":"/_ts","path":"/t"}]`,
		`[{"op":"add","path":"/tags/99","value":1}]`, `[{"op":"add","path":"/tags/-1","value":1}]`,
		`[{"op":"add","path":"/tags/01","value":1}]`, `[{"op":"add","path":"/tags/99999999999999999999","value":1}]`,
		`[{"op":"add","path":"/a~1b~0c","value":1}]`, `[{"op":"add","path":"/","value":1}]`, `[{"op":"add","path":"","value":1}]`,
		`[{"op":"add","path":"/x","value":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}]`,
		`[{"op":"add","path":"/x","value":{"a":1,"a":2}}]`, `[{"op":"add","path":"/x","value":"\ud800"}]`,
		"[{\"op\":\"add\",\"path\":\"/\xff\",\"value\":\"\xc0\xaf\xed\xa0\x80\"}]",
		`[{"op":"add","path":"/x","value":1} ]`, `[{"op":"add","path":"/x","value":1 2}]`, `[{"op":"add","path":"/x"}]`,
		`[{"op":"Add","path":"/x","value":1}]`, `[{"op":"incr","path":"/tags","value":1}]`, `[{"op":"incr","path":"/x","value":"1"}]`,
	} {
		f.Add([]byte(doc), []byte(ops))
	}
	f.Add([]byte(`{"id":"a","a":{"a":{"a":[[[]]]}}}`), []byte(`[{"op":"move","from":"/a/a/a/0","path":"/a/a/a/0/0/-"}]`))
	f.Add([]byte(`{"id":"a","a":1,"a":2}`), []byte(`[{"op":"remove","path":"/a"}]`))
	f.Fuzz(func(t *testing.T, doc, rawOps []byte) {
		before, err := value.Parse(doc)
		if err != nil || before.Kind() != value.Object || !json.Valid(doc) {
			return // a stored item is always a JSON object
		}
		var ops []PatchOp
		if json.Unmarshal(rawOps, &ops) != nil {
			return
		}
		out, err := Patch(doc, ops)
		if err != nil {
			if !errors.Is(err, fault.BadRequest) {
				t.Fatalf("%s on %s: failure is not a 400: %v", rawOps, doc, err)
			}
			return
		}
		after, err := value.Parse(out)
		if err != nil || after.Kind() != value.Object || !json.Valid(out) {
			t.Fatalf("%s on %s gave %q, not a JSON object: %v", rawOps, doc, out, err)
		}
		for _, p := range []string{"id", "_rid", "_self", "_etag", "_attachments", "_ts", "_lsn"} {
			if !value.Equal(before.Get(p), after.Get(p)) {
				t.Fatalf("%s on %s changed %s: %s", rawOps, doc, p, out)
			}
		}
	})
}
