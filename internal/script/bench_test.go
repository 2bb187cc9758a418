package script

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/partita-db/partita/internal/value"
)

// BenchmarkProcedure measures a call end to end on the in-memory collection: borrowing a
// prepared runtime, the arguments, the API, the callbacks, the outcome.
func BenchmarkProcedure(b *testing.B) {
	docs := make([]map[string]any, 100)
	for i := range docs {
		docs[i] = map[string]any{"id": fmt.Sprint(i), "pk": "a", "n": i}
	}
	bulk, _ := json.Marshal([]any{docs})
	for _, bc := range []struct {
		name, body string
		args       []byte
	}{
		{"hello", `function () { getContext().getResponse().setBody("Hello, World") }`, nil},
		{"bulk-import-100", bulkImport, bulk},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := NewRunner(Limits{})
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Procedure(bc.body, bc.args, newMem(), ProcedureCall{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFunction is the cost of one UDF call, as a query pays it per row.
func BenchmarkFunction(b *testing.B) {
	r := NewRunner(Limits{})
	f, err := r.Function(`function tax(income) { return income * 0.1 }`)
	if err != nil {
		b.Fatal(err)
	}
	args := []value.Value{value.Num(1000)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f(args); err != nil {
			b.Fatal(err)
		}
	}
}
