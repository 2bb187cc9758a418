package engine

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/fault"
)

// A partition key definition comes from the client's container body: whatever it holds,
// normalizing never panics, every refusal is a 400, and what is accepted is complete (a kind,
// a version, one to three property paths) and normalizes to itself.
func FuzzPartitionKeyDef(f *testing.F) {
	for _, s := range []string{
		`{"paths":["/pk"],"kind":"Hash","version":2}`, `{"paths":["/pk"]}`, `{"paths":["/a","/b","/c"],"kind":"MultiHash"}`,
		`{"paths":["/a","/b","/c","/d"],"kind":"MultiHash","version":2}`, `{"paths":["/a","/a"],"kind":"MultiHash","version":2}`,
		`{"paths":["/a","/b"],"kind":"Hash"}`, `{"paths":["/a"],"kind":"MultiHash","version":1}`, `{"paths":["/a"],"kind":"Range"}`,
		`{"paths":["/a"],"kind":"hash","version":3}`, `{"paths":["/a"],"version":-1}`, `{"paths":[]}`, `{"paths":null}`, `{}`,
		`{"paths":["a"]}`, `{"paths":["/"]}`, `{"paths":["//"]}`, `{"paths":["/a/"]}`, `{"paths":["/a/*"]}`, `{"paths":["/a/[]"]}`,
		`{"paths":["/\"a b\"/c"]}`, `{"paths":["/\""]}`, `{"paths":["/\"\""]}`, "{\"paths\":[\"/\xff\"]}", `{"paths":["/\ud800"]}`,
		`{"paths":"/pk"}`, `{"paths":[1]}`, `{"paths":["/pk"],"version":"2"}`, `{"paths":["/pk"],"version":2.5}`,
		`{"paths":["/pk"],"version":1e400}`, `{"paths":["/pk"],"kind":null}`, `{"paths":["/pk"],"paths":["/x"]}`,
		`{"paths":["/` + strings.Repeat("a", 3000) + `"]}`, `null`, `[]`, `"x"`,
		`{"paths":["/_partitionKey"],"kind":"Hash","systemKey":true}`, `{"paths":["/pk"],"systemKey":true}`,
		`{"paths":["/_partitionKey"],"version":2,"systemKey":true}`, `{"paths":["/_partitionKey","/b"],"kind":"MultiHash","systemKey":true}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var d PartitionKeyDef
		if json.Unmarshal(raw, &d) != nil {
			return // the gateway refuses a body that does not decode
		}
		n, err := d.normalize()
		if err != nil {
			if !errors.Is(err, fault.BadRequest) {
				t.Fatalf("%s: failure is not a 400: %v", raw, err)
			}
			return
		}
		if len(n.Paths) < 1 || len(n.Paths) > MaxHierarchyDepth || n.Kind != "Hash" && n.Kind != "MultiHash" ||
			n.Version != 1 && n.Version != 2 || n.Kind == "Hash" && len(n.Paths) != 1 || n.Kind == "MultiHash" && n.Version != 2 ||
			n.SystemKey && !reflect.DeepEqual(n, SystemKey()) {
			t.Fatalf("%s normalized to %+v", raw, n)
		}
		for _, p := range n.Paths {
			if segs, err := document.SplitKeyPath(p); err != nil || len(segs) == 0 {
				t.Fatalf("%s: path %q accepted but splits to %q, %v", raw, p, segs, err)
			}
		}
		if again, err := n.normalize(); err != nil || !reflect.DeepEqual(again, n) {
			t.Fatalf("%s normalized to %+v, which normalizes to %+v, %v", raw, n, again, err)
		}
	})
}
