package script

import (
	"errors"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// The fuzz targets run scripts of any text with any arguments: whatever a script does, its call
// must end, fail only with a *fault.Error of a kind a client is told (never Internal, which is
// Partita's own fault), and leave the runner serving the next call. The seed corpus under
// testdata/fuzz holds hostile scripts (runaways, large values through each guarded built-in,
// tampering with what the guards and the API use, hostile documents and thrown values); go
// test runs it as part of the unit tests.

// fuzzLimits are small, so that runaways end quickly.
var fuzzLimits = Limits{Timeout: 50 * time.Millisecond, MaxMemory: 64 << 20, MaxOperations: 20}

// fuzzHang is far past fuzzLimits.Timeout: a call that has not ended by then was not stopped by
// its budget. It bounds the work a script may do in one native step, which the interrupt
// cannot stop (a value near the caps of guard.go: a string of 32 MiB, an array of 4M
// elements), and which takes seconds under the race detector, with which go test runs the
// seed corpus. It is not a measure of speed.
const fuzzHang = 10 * time.Second

// within runs call, failing t if it has not returned after fuzzHang.
func within(t *testing.T, what string, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(fuzzHang):
		t.Fatalf("%s: still running after %v, past its budget of %v", what, fuzzHang, fuzzLimits.Timeout)
		return nil
	}
}

// checkFailure fails t unless err is nil or a *fault.Error of a kind other than Internal.
func checkFailure(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	f, ok := err.(*fault.Error)
	if !ok {
		t.Fatalf("%s: failed with %T, not a *fault.Error: %v", what, err, err)
	}
	if f.Kind == fault.Internal {
		t.Fatalf("%s: failed with an internal error: %v", what, err)
	}
}

func FuzzProcedure(f *testing.F) {
	f.Add(bulkImport, []byte(`[[{"id":"1","pk":"a"},{"id":"2","pk":"a"}]]`))
	f.Add(`function (a, b) { getContext().getResponse().setBody({sum: a + b}) }`, []byte(`[1, 2]`))
	r := NewRunner(fuzzLimits)
	f.Fuzz(func(t *testing.T, body string, args []byte) {
		err := within(t, "the procedure", func() error {
			_, err := r.Procedure(body, args, newMem(), ProcedureCall{Log: true})
			return err
		})
		checkFailure(t, "the procedure", err)
		// The runner still serves calls. A procedure of its own: the input's runtime (if kept)
		// may have had its globals changed, which is allowed to reach only the same script.
		probeRunner(t, r)
	})
}

// probeRunner fails t unless r still serves a procedure of its own correctly. The probe runs
// under the same small budget, which includes making a fresh runtime when the input's was
// dropped; on a loaded machine under the race detector that alone can pass 50 ms, so a
// timeout is retried a few times: a runner that is broken fails every attempt, or otherwise.
func probeRunner(t *testing.T, r *Runner) {
	t.Helper()
	var err error
	for range 5 {
		err = within(t, "a procedure after it", func() error {
			out, err := r.Procedure(`function (x) { getContext().getResponse().setBody(JSON.stringify([x, "ab".repeat(2)])) }`, []byte(`[1]`), newMem(), ProcedureCall{})
			if err == nil && string(out.Body) != `"[1,\"abab\"]"` {
				t.Fatalf("a procedure after it answered %s", out.Body)
			}
			return err
		})
		if !errors.Is(err, fault.Timeout) {
			break
		}
	}
	if err != nil {
		t.Fatalf("a procedure after it failed: %v", err)
	}
}

func FuzzFunction(f *testing.F) {
	f.Add(`function (x) { return x * 2 }`, []byte(`[21]`))
	r := NewRunner(fuzzLimits)
	f.Fuzz(func(t *testing.T, body string, args []byte) {
		// A function's arguments are query values: only what the query language can hold.
		list, err := value.Parse(args)
		if err != nil || list.Kind() != value.Array {
			return
		}
		var vals []value.Value
		for i := range list.Len() {
			vals = append(vals, list.Index(i))
		}
		fn, err := r.Function(body)
		if err != nil {
			checkFailure(t, "compiling the function", err)
			return
		}
		err = within(t, "the function", func() error {
			res, err := fn(vals)
			if err == nil {
				value.AppendJSON(nil, res) // the result is a value the query can use
			}
			return err
		})
		checkFailure(t, "the function", err)
		double, err := r.Function(`function (x) { return x * 2 }`)
		if err != nil {
			t.Fatal(err)
		}
		for range 5 { // a timeout is retried, as in probeRunner
			err = within(t, "a function after it", func() error {
				res, err := double([]value.Value{value.Num(21)})
				if err == nil && res.String() != "42" {
					t.Fatalf("a function after it answered %v", res)
				}
				return err
			})
			if !errors.Is(err, fault.Timeout) {
				break
			}
		}
		if err != nil {
			t.Fatalf("a function after it failed: %v", err)
		}
	})
}
