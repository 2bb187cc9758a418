package query

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// Query parameters come from clients' query bodies: whatever the bytes, parsing never panics,
// every failure is a 400, and what is accepted names each parameter with '@' and holds values
// that write back as JSON parsing to the same value.
func FuzzParseParameters(f *testing.F) {
	for _, s := range []string{
		``, `null`, `[]`, `{}`, `"x"`, `[null]`, `[{}]`, `[1]`,
		`[{"name":"@a","value":1},{"name":"@b","value":"x"},{"name":"@c","value":[1,{"d":null}]}]`,
		`[{"name":"@a"}]`, `[{"name":"a","value":1}]`, `[{"name":"@a","value":1},{"name":"@a","value":2}]`,
		`[{"name":"@n","value":1e400}]`, `[{"name":"@n","value":-1e400}]`,
		`[{"name":"@n","value":` + strings.Repeat("9", 400) + `}]`,
		`[{"name":"@n","value":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}]`,
		`[{"name":"@n","value":{"a":1,"a":2}}]`, `[{"name":"@a","name":"@b","value":1}]`,
		"[{\"name\":\"@\xff\",\"value\":\"\xc0\xaf\xed\xa0\x80\xf0\x9f\x98\"}]",
		`[{"name":"@s","value":"\ud800"}]`, "\xef\xbb\xbf[]", `[{"name":1,"value":1}]`,
		`[{"name":"@a","value":1}`, `[{"name":"@a","value":}]`, `[{"name":null,"value":true}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		params, err := ParseParameters(b)
		if err != nil {
			if !errors.Is(err, fault.BadRequest) {
				t.Fatalf("%q: failure is not a 400: %v", b, err)
			}
			return
		}
		for name, v := range params {
			if !strings.HasPrefix(name, "@") {
				t.Fatalf("%q: parameter %q accepted", b, name)
			}
			if v.IsUndefined() || !finite(v) { // JSON has no Infinity: 1e400 writes back as null
				continue
			}
			again, err := value.Parse(value.AppendJSON(nil, v))
			if err != nil || !value.Equal(again, v) {
				t.Fatalf("%q: %s = %s writes back as %s (%v)", b, name, v, again, err)
			}
		}
	})
}

// finite reports whether every number in v is finite.
func finite(v value.Value) bool {
	switch v.Kind() {
	case value.Number:
		return !math.IsInf(v.Num(), 0) && !math.IsNaN(v.Num())
	case value.Array:
		for _, e := range v.Elems() {
			if !finite(e) {
				return false
			}
		}
	case value.Object:
		for _, m := range v.Members() {
			if !finite(m.Val) {
				return false
			}
		}
	}
	return true
}
