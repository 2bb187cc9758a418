package cqlexec

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
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
//	open partition-max-bytes=N   starts over on a new engine whose partitions split past N
//	                         bytes
//	insert ks=K t=T keys=N rows=M   inserts rows (k, c, v) for k < N, c < M, in one order
//	                         that interleaves partitions, as concurrent clients would
//	settle ks=K t=T          waits until no partition is over the size limit (size splits
//	                         run in the background), and says whether the table split
//	ring ks=K t=T [page=N] [desc]   reads the table arc by arc, one token range per
//	                         physical partition, in pages, and checks that every row comes
//	                         exactly once, in token, then key, then clustering order (c
//	                         descending with desc), inside its arc
//	count-partitions ks=K t=T   how many physical partitions the table has
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
	// maxBytes is the engine's partition size limit (open); 0 for the default.
	maxBytes int64
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
	case "open":
		var n int64
		d.ScanArgs(t, "partition-max-bytes", &n)
		*h = *newHarness(t, engine.Options{MaxPartitionBytes: n})
		h.maxBytes = n
		return "ok\n"
	case "insert":
		var ks, tb string
		var keys, rows int
		d.ScanArgs(t, "ks", &ks)
		d.ScanArgs(t, "t", &tb)
		d.ScanArgs(t, "keys", &keys)
		d.ScanArgs(t, "rows", &rows)
		p, err := h.x.Prepare(h.sess, "INSERT INTO "+ks+"."+tb+" (k, c, v) VALUES (?, ?, ?)")
		if err != nil {
			return describeError(err)
		}
		body := cqlvalue.EncodeText(strings.Repeat("x", 200))
		for c := range rows {
			for k := range keys {
				vals := []cqlvalue.Value{{Bytes: cqlvalue.EncodeInt(int32(k))}, {Bytes: cqlvalue.EncodeInt(int32(c))}, {Bytes: body}}
				if _, err := h.x.Execute(h.sess, p, Options{Values: vals}); err != nil {
					return describeError(err)
				}
			}
		}
		return fmt.Sprintf("inserted %d rows\n", keys*rows)
	case "settle":
		var ks, tb string
		d.ScanArgs(t, "ks", &ks)
		d.ScanArgs(t, "t", &tb)
		return h.settle(ks, tb)
	case "count-partitions":
		var ks, tb string
		d.ScanArgs(t, "ks", &ks)
		d.ScanArgs(t, "t", &tb)
		info, err := h.eng.ContainerInfo(ks, tb)
		if err != nil {
			return describeError(err)
		}
		return fmt.Sprintf("%d partitions\n", len(info.Partitions))
	case "ring":
		var ks, tb string
		d.ScanArgs(t, "ks", &ks)
		d.ScanArgs(t, "t", &tb)
		page := 0
		if d.HasArg("page") {
			d.ScanArgs(t, "page", &page)
		}
		return h.ring(ks, tb, page, d.HasArg("desc"))
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

// settle waits for the background splits of a table to finish.
func (h *harness) settle(ks, tb string) string {
	for deadline := time.Now().Add(20 * time.Second); ; {
		info, err := h.eng.ContainerInfo(ks, tb)
		if err != nil {
			return describeError(err)
		}
		over := false
		for _, p := range info.Partitions {
			over = over || p.Bytes > h.maxBytes
		}
		if !over {
			return fmt.Sprintf("split: %v\n", len(info.Partitions) > 1)
		}
		if time.Now().After(deadline) {
			return "partitions still over the limit: " + h.partitions(ks, tb)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ring reads a table (k int, c int, ...) arc by arc with token() ranges built from its
// physical partitions' boundaries, in pages, and checks what comes back.
func (h *harness) ring(ks, tb string, page int, desc bool) string {
	info, err := h.eng.ContainerInfo(ks, tb)
	if err != nil {
		return describeError(err)
	}
	p, err := h.x.Prepare(h.sess, "SELECT token(k), k, c FROM "+ks+"."+tb+" WHERE token(k) >= ? AND token(k) <= ?")
	if err != nil {
		return describeError(err)
	}
	type row struct {
		tok  int64
		k, c int32
	}
	var all []row
	seen := map[[2]int32]bool{}
	var out strings.Builder
	for _, part := range info.Partitions {
		lo, _ := firstToken(part.Range.Min)
		hi, last := firstToken(part.Range.Max)
		if !last {
			hi--
		}
		var state []byte
		n := 0
		for {
			res, err := h.x.Execute(h.sess, p, Options{PageSize: page, PagingState: state,
				Values: []cqlvalue.Value{{Bytes: cqlvalue.EncodeBigint(lo)}, {Bytes: cqlvalue.EncodeBigint(hi)}}})
			if err != nil {
				return describeError(err)
			}
			for _, r := range res.Rows {
				tok, _ := cqlvalue.Int64(cqlvalue.Native(cqlvalue.Bigint), r[0])
				k, _ := cqlvalue.Int64(cqlvalue.Native(cqlvalue.Int), r[1])
				c, _ := cqlvalue.Int64(cqlvalue.Native(cqlvalue.Int), r[2])
				if tok < lo || tok > hi {
					fmt.Fprintf(&out, "row (%d, %d) with token %d outside its arc [%d, %d]\n", k, c, tok, lo, hi)
				}
				key := [2]int32{int32(k), int32(c)}
				if seen[key] {
					fmt.Fprintf(&out, "row (%d, %d) returned twice\n", k, c)
				}
				seen[key] = true
				all = append(all, row{tok, int32(k), int32(c)})
				n++
			}
			if res.PagingState == nil {
				break
			}
			state = res.PagingState
		}
		if n == 0 {
			fmt.Fprintf(&out, "partition %d returned no rows\n", part.ID)
		}
	}
	ordered := sort.SliceIsSorted(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.tok != b.tok {
			return a.tok < b.tok
		}
		if a.k != b.k {
			return a.k < b.k
		}
		return a.c < b.c != desc
	})
	fmt.Fprintf(&out, "%d rows over the arcs of %s, each once, in order: %v\n", len(all), arcs(len(info.Partitions)), ordered)
	return out.String()
}

// arcs describes how many partitions a table has where the count depends on when background
// splits ran: one, or several.
func arcs(n int) string {
	if n == 1 {
		return "1 partition"
	}
	return "several partitions"
}
