package cqlexec

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
)

// The scenarios under testdata drive an executor over a real engine:
//
//	exec [page=N]            runs each statement of the input (';'-separated); a SELECT
//	                         with page=N is read page by page, each page printed
//	prepare                  prepares the input and prints its markers and pk indices
//	partitions ks=K t=T      the table's physical partitions: token range and rows
//	split ks=K t=T [id=N]    splits partition N (default: the first) in its middle
//	advance s=N              moves the executor's clock N seconds on (it starts at the
//	                         whole second the scenario began)
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if strings.HasPrefix(path, filepath.Join("testdata", "fuzz")) {
			return // the fuzz corpus (fuzz_test.go)
		}
		h := newHarness(t, engine.Options{})
		datadriven.RunTest(t, path, h.run)
	})
}

type harness struct {
	t    *testing.T
	eng  *engine.Engine
	x    *Executor
	sess *Session
	now  time.Time
}

func newHarness(t *testing.T, o engine.Options) *harness {
	o.Dir = t.TempDir()
	eng, err := engine.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	h := &harness{t: t, eng: eng, x: New(eng, nil), sess: &Session{}, now: time.Now().Truncate(time.Second)}
	h.x.now = func() time.Time { return h.now }
	return h
}

func (h *harness) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "exec":
		page := 0
		if d.HasArg("page") {
			d.ScanArgs(t, "page", &page)
		}
		var out strings.Builder
		sts, err := cql.ParseScript(d.Input)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		for _, st := range sts {
			out.WriteString(h.exec(st.String(), page))
		}
		return out.String()
	case "prepare":
		p, err := h.x.Prepare(h.sess, d.Input)
		if err != nil {
			return describeError(err)
		}
		var out strings.Builder
		for i, c := range p.Params {
			fmt.Fprintf(&out, "marker %d: %s %s\n", i, c.Name, c.Type.String())
		}
		fmt.Fprintf(&out, "pk indices: %v\n", p.PKIndices)
		for _, c := range p.Columns {
			fmt.Fprintf(&out, "column: %s %s\n", c.Name, c.Type.String())
		}
		return out.String()
	case "advance":
		var sec int
		d.ScanArgs(t, "s", &sec)
		h.now = h.now.Add(time.Duration(sec) * time.Second)
		return "ok\n"
	case "partitions", "split":
		var ks, tb string
		d.ScanArgs(t, "ks", &ks)
		d.ScanArgs(t, "t", &tb)
		if d.Cmd == "split" {
			info, err := h.eng.ContainerInfo(ks, tb)
			if err != nil {
				return describeError(err)
			}
			id := info.Partitions[0].ID
			if d.HasArg("id") {
				d.ScanArgs(t, "id", &id)
			}
			if _, err := h.eng.SplitPartition(ks, tb, id, nil); err != nil {
				return describeError(err)
			}
		}
		return h.partitions(ks, tb)
	}
	t.Fatalf("unknown command %s", d.Cmd)
	return ""
}

// exec runs one statement, paging a SELECT when page > 0.
func (h *harness) exec(text string, page int) string {
	p, err := h.x.Prepare(h.sess, text)
	if err != nil {
		return describeError(err)
	}
	var out strings.Builder
	var state []byte
	for n := 1; ; n++ {
		res, err := h.x.Execute(h.sess, p, Options{PageSize: page, PagingState: state})
		if err != nil {
			return out.String() + describeError(err)
		}
		if page > 0 && p.Kind == KindSelect {
			fmt.Fprintf(&out, "page %d:\n", n)
		}
		out.WriteString(describe(res))
		if res.PagingState == nil || n > 1000 {
			return out.String()
		}
		state = res.PagingState
	}
}

func describe(r *Result) string {
	switch r.Kind {
	case ResultVoid:
		return "ok\n"
	case ResultSetKeyspace:
		return "use " + r.Keyspace + "\n"
	case ResultSchemaChange:
		c := r.Change
		return fmt.Sprintf("%s %s %s\n", strings.ToLower(c.Change), strings.ToLower(c.Target), strings.TrimSuffix(c.Keyspace+"."+c.Name, "."))
	}
	var out strings.Builder
	var names []string
	for _, c := range r.Columns {
		names = append(names, c.Name)
	}
	out.WriteString(strings.Join(names, " | ") + "\n")
	for _, row := range r.Rows {
		var vals []string
		for i, v := range row {
			if v == nil {
				vals = append(vals, "null")
				continue
			}
			vals = append(vals, cqlvalue.Format(r.Columns[i].Type, v))
		}
		out.WriteString(strings.Join(vals, " | ") + "\n")
	}
	fmt.Fprintf(&out, "(%d rows)\n", len(r.Rows))
	return out.String()
}

func describeError(err error) string {
	var ae *AlreadyExistsError
	switch {
	case errors.As(err, &ae):
		return "already exists: " + ae.Error() + "\n"
	case cql.IsSyntax(err):
		return "syntax error: " + fault.From(err).Message + "\n"
	case cql.IsInvalid(err):
		return "invalid: " + fault.From(err).Message + "\n"
	}
	f := fault.From(err)
	return f.Kind.String() + ": " + f.Message + "\n"
}

// partitions describes a table's physical partitions: the token range each owns and how
// many rows it holds.
func (h *harness) partitions(ks, tb string) string {
	info, err := h.eng.ContainerInfo(ks, tb)
	if err != nil {
		return describeError(err)
	}
	var out strings.Builder
	for _, p := range info.Partitions {
		lo, _ := firstToken(p.Range.Min)
		hi, last := firstToken(p.Range.Max)
		to := strconv.FormatInt(hi-1, 10)
		if last {
			to = strconv.FormatInt(hi, 10)
		}
		fmt.Fprintf(&out, "partition %d: tokens [%d, %s] items=%d\n", p.ID, lo, to, p.Items)
	}
	return out.String()
}

// firstToken is the first token at or after e; last is set when e is past the ring, so the
// range before it ends with the ring's last token.
func firstToken(e epk.EPK) (t int64, last bool) {
	t, ok := epk.FirstToken(e)
	if !ok {
		return math.MaxInt64, true
	}
	return t, false
}
