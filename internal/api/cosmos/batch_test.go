package cosmos

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/fault"
)

// patchBodySeeds are patch documents of both shapes, valid and hostile.
var patchBodySeeds = []string{
	`{"operations":[{"op":"set","path":"/n","value":2}]}`,
	`{"condition":"FROM c WHERE c.n = 1","operations":[{"op":"incr","path":"/n","value":1}]}`,
	`[{"op":"add","path":"/tags/-","value":"x"},{"op":"remove","path":"/old"}]`,
	` [{"op":"move","from":"/a","path":"/b"}]`, `[]`, `{}`, `null`, ``, `"x"`, `1`, `[1]`, `[null]`, `{"operations":null}`,
	`{"condition":"","operations":[]}`, `{"condition":"SELECT * FROM c","operations":[{"op":"set","path":"/n","value":1}]}`,
	`{"condition":"FROM c WHERE","operations":[]}`, `{"condition":1,"operations":[]}`, `{"operations":{"op":"set"}}`,
	`{"operations":[{"op":"set","path":"/n","value":1e400}]}`, `[{"op":"set","path":"/n","value":` + strings.Repeat("9", 400) + `}]`,
	`[{"op":"set","path":"/n","value":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}]`,
	`{"operations":[],"operations":[{"op":"set","path":"/n","value":1}]}`, `[{"op":"set","op":"remove","path":"/n"}]`,
	"[{\"op\":\"set\",\"path\":\"/\xff\",\"value\":\"\xc0\xaf\xed\xa0\x80\xf0\x9f\x98\"}]", `[{"op":"set","path":"/n","value":"\ud800"}]`,
	"\xef\xbb\xbf[]", "\xef\xbb\xbf{}", `[{"op":1,"path":true}]`, `[{"op":"set","path":"/n","value":1}`, `{"condition":"FROM c WHERE c.x = 'unterminated`,
	`{"condition":"FROM c JOIN a IN c.a JOIN b IN c.a JOIN d IN c.a WHERE udf.f(1)","operations":[]}`,
}

// FuzzPatchBody reads patch documents as the gateway receives them, as the body of a PATCH
// or of a batch's Patch operation: reading never panics, every refusal is a 400, and a bare
// array of operations reads as the same operations wrapped in {"operations": ...}.
func FuzzPatchBody(f *testing.F) {
	for _, s := range patchBodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parsePatchBody(b)
		if err != nil {
			if !errors.Is(err, fault.BadRequest) {
				t.Fatalf("%q: failure is not a 400: %v", b, err)
			}
			return
		}
		if strings.HasPrefix(strings.TrimSpace(string(b)), "[") {
			wrapped, err := parsePatchBody(append(append([]byte(`{"operations":`), b...), '}'))
			if err != nil || wrapped.Condition != nil || !reflect.DeepEqual(wrapped.Ops, p.Ops) {
				t.Fatalf("%q read as %+v, wrapped as %+v, %v", b, p.Ops, wrapped.Ops, err)
			}
		}
		for _, op := range p.Ops {
			if len(op.Value) > 0 && !json.Valid(op.Value) {
				t.Fatalf("%q: operation value %q is not JSON", b, op.Value)
			}
		}
	})
}
