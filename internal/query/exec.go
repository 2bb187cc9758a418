package query

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/searchpolicy"
	"github.com/partita-db/partita/internal/value"
)

// Reader is what a query reads: the items of one partition, of several, or of a logical
// partition, in item order (see Position). The engine implements it.
type Reader interface {
	// Scan calls fn with every item from where from says (from the start when nil) until
	// fn returns false or an error.
	Scan(from *Resume, fn func(pos Position, doc []byte) (bool, error)) error
}

// Counter is a Reader that knows how many items it holds without reading them. Queries that
// read no property of the items (SELECT VALUE COUNT(1) FROM c) only need that number.
type Counter interface {
	Count() (n int64, ok bool)
}

// Stats count the work of an execution; charges and query metrics derive from them.
type Stats struct {
	ItemsLoaded int
	BytesLoaded int
	Results     int
	Index       IndexUse // which range index reads served the execution (indexuse.go)
}

// Options are the per-execution inputs.
type Options struct {
	Params       map[string]value.Value // by name, with the '@'
	MaxItems     int                    // page size; 0 lets the executor choose
	Continuation string                 // from the previous page, "" for the first
	Now          time.Time              // the query's current time; zero means time.Now()
	// NoIndex reads every item even where an index could narrow the read (for tests that
	// compare both plans).
	NoIndex bool
	// MaxRows, when positive, bounds the rows (FROM and JOIN combinations) the execution may
	// produce; past it the query fails with 400. For filters that run where time matters.
	MaxRows int
	// UDF calls the user-defined functions the query names (see Env.UDF).
	UDF func(name string, args []value.Value) (value.Value, error)
	// Vectors and FullText are the container's search policies (see Env.Vectors).
	Vectors  *searchpolicy.VectorPolicy
	FullText *searchpolicy.FullTextPolicy
}

// Page is one page of results.
type Page struct {
	Results []value.Value
	Next    string // continuation token; "" when this is the last page
	Stats   Stats
}

// DefaultMaxItems is the page size when the client leaves it to the server.
const DefaultMaxItems = 100

// Run executes q over src and returns the page that opts asks for.
func (p *Prepared) Run(src Reader, opts Options) (Page, error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	max := opts.MaxItems
	if max <= 0 {
		max = DefaultMaxItems
	}
	if err := p.CheckParams(opts.Params); err != nil {
		return Page{}, err
	}
	tok, err := decodeToken(opts.Continuation, p.streaming)
	if err != nil {
		return Page{}, err
	}
	ev := &evaluator{params: opts.Params, env: &Env{Now: opts.Now.UTC(), UDF: opts.UDF, Vectors: opts.Vectors, FullText: opts.FullText}, stats: &Stats{}, subs: p.subs, itemRows: new(int)}
	if opts.MaxRows > 0 {
		ev.rowBudget = &opts.MaxRows
	}
	orig := src
	if ir, ok := src.(IndexedReader); ok && !opts.NoIndex {
		if r, ok := p.indexRange(opts.Params, opts.FullText, ir.Indexes); ok {
			src = indexed{ir, r}
			ev.stats.Index.Filter = r.Path
		}
	}
	if p.streaming {
		return p.stream(ev, src, tok, max)
	}
	if p.ranked() {
		if err := p.gatherCorpus(ev, orig, opts.NoIndex); err != nil {
			return Page{}, err
		}
	}
	all, ok, err := p.fromVectorIndex(ev, orig, opts.NoIndex)
	if err == nil && !ok {
		all, ok, err = p.fromTextIndex(ev, orig, opts.NoIndex)
	}
	if err == nil && !ok {
		if page, ok, err := p.fromOrderIndex(ev, orig, tok, max, opts.NoIndex); err != nil || ok {
			return page, err
		}
	}
	if err == nil && !ok {
		all, err = p.materialize(ev, src)
	}
	if err != nil {
		return Page{}, err
	}
	page := Page{Stats: *ev.stats}
	start := min(tok.Offset, len(all))
	end := min(start+max, len(all))
	page.Results = all[start:end]
	if end < len(all) {
		page.Next = encodeToken(token{Offset: end})
	}
	page.Stats.Results = len(page.Results)
	return page, nil
}

// fromOrderIndex answers an ORDER BY query by reading the range index in order and stopping
// as soon as the page is complete. Its continuation carries the position of the page's last
// result, so the next page reads the index from there instead of reading again every result
// before it; and the count of results returned so far, for a page that cannot use the index
// (which then reads everything and skips that many). ok is false when it cannot.
func (p *Prepared) fromOrderIndex(ev *evaluator, src Reader, tok token, max int, noIndex bool) (Page, bool, error) {
	path := p.orderPath()
	s, isSplit := src.(Splitter)
	if path == "" || noIndex || !isSplit {
		return Page{}, false, nil
	}
	// Counts are at most maxCount (a forged continuation may carry any), so sums cannot
	// overflow. done is the results returned so far, limit how many the query returns (both
	// after its OFFSET).
	done := min(tok.Offset, maxCount)
	limit := maxCount
	if p.q.Limit != nil {
		limit = min(limit, p.count(ev, p.q.Limit))
	}
	if p.q.Select.Top != nil {
		limit = min(limit, p.count(ev, p.q.Select.Top))
	}
	skip := done // results to pass over before the page
	if p.q.Offset != nil {
		skip += p.count(ev, p.q.Offset)
	}
	if tok.Order != nil {
		skip = 0
	}
	// One more than the page, to know whether more follow.
	want := min(max+1, limit-done)
	if want < 0 {
		want = 0 // a forged count past the limit
	}
	var from, to []byte
	if r, ok := p.indexRange(ev.params, nil, func(path string) bool { return !indexing.IsFullTextTermPath(path) }); ok && r.Path == path {
		from, to = r.Lo, r.Hi // the filter on the ORDER BY path bounds the read
	}
	results, at, ok, err := p.ordered(ev, s.Parts(), path, from, to, tok.Order, skip+want)
	if err != nil || !ok {
		return Page{}, false, err
	}
	ev.stats.Index.Order = path
	if from == nil {
		ev.stats.Index.Filter = "" // the order's index was read whole, not the filter's
	} else {
		ev.stats.Index.Filter = path
	}
	skip = min(skip, len(results))
	results, at = results[skip:], at[skip:]
	n := min(len(results), max, want)
	page := Page{Results: make([]value.Value, n)}
	for i := range n {
		page.Results[i] = results[i].v
	}
	if n > 0 && n < len(results) {
		next := token{Offset: done + n}
		// A position holds the last key whole; a long one (a text property) would make the
		// token too long for a header, so the next page then counts from the start instead.
		if last, key := at[n-1], value.AppendJSON(nil, results[n-1].keys[0]); len(key) <= maxOrderKey {
			next.Order = &orderAt{Key: key, Min: []byte(last.Min), Max: []byte(last.Max), Seq: last.Seq}
		}
		page.Next = encodeToken(next)
	}
	page.Stats = *ev.stats
	page.Stats.Results = n
	return page, true, nil
}

// maxOrderKey bounds the JSON of the ORDER BY value a continuation carries (orderAt).
const maxOrderKey = 1024

// token is the continuation of a query. Streaming queries resume at an item position (and
// skip the rows of that item already returned); the others at an offset into their result.
type token struct {
	Resume  *resumeJSON `json:"r,omitempty"`
	Skip    int         `json:"k,omitempty"` // rows of the item at the position already returned
	Emitted int         `json:"n,omitempty"` // results returned so far, for TOP
	Offset  int         `json:"o,omitempty"`
	Stream  bool        `json:"s,omitempty"`
	// Order is where an ORDER BY read from the index resumes (fromOrderIndex); Offset then
	// counts the results returned so far.
	Order *orderAt `json:"b,omitempty"`
}

func encodeToken(t token) string {
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeToken(s string, streaming bool) (token, error) {
	var t token
	if s == "" {
		return t, nil
	}
	bad := fault.New(fault.BadRequest, "The continuation token %q is not valid for this query; pass back the token the previous page returned", s)
	raw, err := base64.RawURLEncoding.DecodeString(s)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields() // a token of another version, or forged
	if err != nil || dec.Decode(&t) != nil || t.Stream != streaming || t.Skip < 0 || t.Offset < 0 || t.Emitted < 0 {
		return t, bad
	}
	if t.Resume != nil {
		if _, ok := t.Resume.fromJSON(); !ok {
			return t, bad
		}
	}
	return t, nil
}

// stream runs a query whose results follow item order one for one (no ORDER BY, grouping,
// aggregates or DISTINCT), stopping as soon as the page is full.
func (p *Prepared) stream(ev *evaluator, src Reader, tok token, max int) (Page, error) {
	page := Page{}
	limit := p.limit(ev)
	var from *Resume
	if tok.Resume != nil {
		from, _ = tok.Resume.fromJSON() // checked by decodeToken
		from.Inclusive = tok.Skip > 0
	}
	emitted := tok.Emitted
	var last Position
	lastRows := 0
	full := false
	err := src.Scan(from, func(pos Position, doc []byte) (bool, error) {
		skip := 0
		if from != nil && from.Inclusive && pos.Seq == from.Floors[0].Seq {
			skip = tok.Skip
		}
		rows := 0
		err := p.itemRows(ev, pos, doc, func(v value.Value) (bool, error) {
			rows++
			if rows <= skip {
				return true, nil
			}
			if emitted >= limit || len(page.Results) == max {
				full = true
				return false, nil
			}
			page.Results = append(page.Results, v)
			emitted++
			last, lastRows = pos, rows
			// A full page ends here with a continuation, whether or not more follow: like
			// Cosmos, the executor does not read ahead to find out.
			full = len(page.Results) == max
			return !full, nil
		})
		if err != nil || full {
			return false, err
		}
		last, lastRows = pos, 0 // the whole item was consumed
		return emitted < limit, nil
	})
	if err != nil {
		return Page{}, err
	}
	if full && emitted < limit {
		after := from.After(last)
		page.Next = encodeToken(token{Stream: true, Resume: after.toJSON(), Skip: lastRows, Emitted: emitted})
	}
	page.Stats = *ev.stats
	page.Stats.Results = len(page.Results)
	return page, nil
}

// limit is how many results the query may return at most (TOP, or OFFSET + LIMIT); streaming
// queries have no OFFSET.
func (p *Prepared) limit(ev *evaluator) int {
	n := int(^uint(0) >> 1)
	if p.q.Select.Top != nil {
		n = p.count(ev, p.q.Select.Top)
	}
	return n
}

// count evaluates a TOP/OFFSET/LIMIT operand, validated at prepare time to be a literal or a
// parameter; a parameter must hold a non-negative integer.
func (p *Prepared) count(ev *evaluator, e Expr) int {
	v, _ := ev.eval(e, nil)
	if !v.IsInteger() || v.Num() < 0 {
		return 0
	}
	return int(min(v.Num(), maxCount))
}

// maxCount bounds the counts of TOP, OFFSET and LIMIT (and continuation offsets) where they are
// added up: beyond any result a query can have, and far from overflowing an int.
const maxCount = 1 << 40

// itemRows evaluates the query's FROM, WHERE and projection for one item, calling emit with
// each projected result.
func (p *Prepared) itemRows(ev *evaluator, pos Position, doc []byte, emit func(value.Value) (bool, error)) error {
	ev.stats.ItemsLoaded++
	v, err := p.decode(ev, pos, doc)
	if err != nil {
		return err
	}
	return p.rows(ev, v, func(r row) (bool, error) {
		out, err := p.project(ev, r)
		if err != nil || out.IsUndefined() {
			return true, err
		}
		return emit(out)
	})
}

// rows expands the FROM clause over one item and filters by WHERE.
func (p *Prepared) rows(ev *evaluator, doc value.Value, emit func(row) (bool, error)) error {
	ev.doc = doc
	ev.newItem()
	_, err := ev.expand(p.q, nil, doc, p.where(ev, emit))
	return err
}

// where calls emit with the rows that pass the query's WHERE clause.
func (p *Prepared) where(ev *evaluator, emit func(row) (bool, error)) func(row) (bool, error) {
	if p.q.Where == nil {
		return emit
	}
	return func(r row) (bool, error) {
		w, err := ev.eval(p.q.Where, r)
		if err != nil || !w.IsTrue() {
			return err == nil, err
		}
		return emit(r)
	}
}

// derivedRows feeds the rows of a query over a derived table (p.derived): the first source's
// alias bound to each of the table's values, expanded by the JOINs and filtered by WHERE.
func (p *Prepared) derivedRows(ev *evaluator, table []value.Value, emit func(row) (bool, error)) error {
	ev.doc = value.Value{}
	emit = p.where(ev, emit)
	for _, v := range table {
		ev.newItem()
		more, err := ev.expandFrom(p.q, 1, row{{p.q.From.Source.Alias, v}}, ev.doc, emit)
		if !more || err != nil {
			return err
		}
	}
	return nil
}

// newItem starts counting the rows of another item (itemRows).
func (ev *evaluator) newItem() {
	if ev.itemRows != nil {
		*ev.itemRows = 0
	}
}

// expand binds the FROM sources of q, starting from the outer row, calling emit for every
// combination. An unbound root identifier of the first source stands for doc, the item
// being read. It returns false when emit asked to stop.
func (ev *evaluator) expand(q *Query, outer row, doc value.Value, emit func(row) (bool, error)) (bool, error) {
	if q.From == nil {
		return emit(outer)
	}
	return ev.expandFrom(q, 0, outer, doc, emit)
}

// expandFrom is expand from the source at index start of q's FROM (0 its first source, 1 its
// first JOIN), with the aliases of those before it bound in outer.
func (ev *evaluator) expandFrom(q *Query, start int, outer row, doc value.Value, emit func(row) (bool, error)) (bool, error) {
	sources := append([]Source{q.From.Source}, q.From.Joins...)
	var rec func(i int, r row) (bool, error)
	rec = func(i int, r row) (bool, error) {
		if i == len(sources) {
			if ev.itemRows != nil {
				if *ev.itemRows++; *ev.itemRows > MaxItemRows {
					return false, errItemRows
				}
			}
			if ev.rowBudget != nil {
				if *ev.rowBudget--; *ev.rowBudget < 0 {
					return false, fault.New(fault.BadRequest, "The query produces too many rows for this use; simplify its JOINs")
				}
			}
			return emit(r)
		}
		s := sources[i]
		bind := func(v value.Value) (bool, error) {
			next := append(r[:len(r):len(r)], binding{s.Alias, v})
			return rec(i+1, next)
		}
		if sq, ok := s.Expr.(Subquery); ok {
			res, err := ev.subqueryOver(sq.Q, r, doc, -1)
			if err != nil {
				return false, err
			}
			for _, v := range res {
				if more, err := bind(v); !more || err != nil {
					return more, err
				}
			}
			return true, nil
		}
		scope := r
		if i == 0 {
			if root := rootName(s.Expr); root != "" {
				if _, bound := r.lookup(root); !bound {
					scope = append(r[:len(r):len(r)], binding{root, doc})
				}
			}
		}
		v, err := ev.eval(s.Expr, scope)
		if err != nil {
			return false, err
		}
		if !s.In {
			if v.IsUndefined() {
				return true, nil
			}
			return bind(v)
		}
		for _, el := range v.Elems() {
			if more, err := bind(el); !more || err != nil {
				return more, err
			}
		}
		return true, nil
	}
	return rec(start, outer)
}

// rootName is the identifier a source expression starts from: c in c, c.a, c.a[0].
func rootName(e Expr) string {
	for {
		switch x := e.(type) {
		case Ident:
			return x.Name
		case Property:
			e = x.Obj
		case Index:
			e = x.Obj
		default:
			return ""
		}
	}
}

// subquery runs q correlated with the outer row; limit < 0 means all results.
func (ev *evaluator) subquery(q *Query, outer row, limit int) ([]value.Value, error) {
	return ev.subqueryOver(q, outer, ev.doc, limit)
}

// subqueryOver runs the nested query q against the outer row and the current item doc.
func (ev *evaluator) subqueryOver(q *Query, outer row, doc value.Value, limit int) ([]value.Value, error) {
	p := ev.subs[q]
	if p == nil {
		return nil, fault.New(fault.Internal, "query: subquery was not prepared")
	}
	sub := &evaluator{params: ev.params, env: ev.env, stats: ev.stats, subs: ev.subs, doc: doc, rowBudget: ev.rowBudget, itemRows: ev.itemRows}
	if !p.grouped && len(p.q.OrderBy) == 0 && !p.q.Select.Distinct && p.q.Offset == nil {
		var out []value.Value
		top := p.limit(sub)
		if limit >= 0 && limit < top {
			top = limit
		}
		_, err := sub.expand(p.q, outer, doc, func(r row) (bool, error) {
			if p.q.Where != nil {
				w, err := sub.eval(p.q.Where, r)
				if err != nil || !w.IsTrue() {
					return err == nil, err
				}
			}
			v, err := p.project(sub, r)
			if err != nil {
				return false, err
			}
			if !v.IsUndefined() {
				out = append(out, v)
			}
			return len(out) < top, nil
		})
		return out, err
	}
	return p.collect(sub, func(emit func(row) (bool, error)) error {
		_, err := sub.expand(p.q, outer, doc, func(r row) (bool, error) {
			if p.q.Where != nil {
				w, err := sub.eval(p.q.Where, r)
				if err != nil || !w.IsTrue() {
					return err == nil, err
				}
			}
			return emit(r)
		})
		return err
	})
}

// indexed reads only the items of an index range.
type indexed struct {
	src IndexedReader
	r   IndexRange
}

func (x indexed) Scan(from *Resume, fn func(Position, []byte) (bool, error)) error {
	return x.src.ScanIndex(x.r, from, fn)
}

func (x indexed) Parts() []Reader {
	s, ok := x.src.(Splitter)
	if !ok {
		return []Reader{x}
	}
	var parts []Reader
	for _, part := range s.Parts() {
		if ir, ok := part.(IndexedReader); ok {
			parts = append(parts, indexed{ir, x.r})
		} else {
			parts = append(parts, part)
		}
	}
	return parts
}

// Splitter is a Reader made of independent parts (the physical partitions of a container)
// that can be read in parallel. Parts are in key order.
type Splitter interface {
	Parts() []Reader
}

// maxParallelParts bounds how many parts of a query are read at once.
var maxParallelParts = runtime.GOMAXPROCS(0)

// materialize runs a query that needs all its input before it can answer. The parts of a
// splittable source are read in parallel, each into a partial result (its rows, or its groups
// with partial aggregates), and the partials are merged in key order.
func (p *Prepared) materialize(ev *evaluator, src Reader) ([]value.Value, error) {
	if p.q.From == nil {
		pa, err := p.gather(ev, func(emit func(row) (bool, error)) error {
			_, err := emit(nil)
			return err
		})
		if err != nil {
			return nil, err
		}
		return p.finish(ev, pa)
	}
	parts := []Reader{src}
	if s, ok := src.(Splitter); ok && p.derived == nil {
		// A derived table is one table over all the parts: its own query reads them in
		// parallel (scanInput).
		parts = s.Parts()
	}
	partials := make([]*partial, len(parts))
	errs := make([]error, len(parts))
	stats := make([]Stats, len(parts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, maxParallelParts))
	for i, part := range parts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			pev := &evaluator{params: ev.params, env: ev.env, stats: &stats[i], subs: ev.subs, itemRows: new(int)}
			defer func() {
				if r := recover(); r != nil { // a bug must fail the query, not the server
					errs[i] = fault.New(fault.Internal, "query execution failed: %v", r)
				}
			}()
			partials[i], errs[i] = p.gather(pev, p.scanInput(pev, part))
		}()
	}
	wg.Wait()
	var merged *partial
	for i := range parts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		ev.stats.ItemsLoaded += stats[i].ItemsLoaded
		ev.stats.BytesLoaded += stats[i].BytesLoaded
		if merged == nil {
			merged = partials[i]
		} else {
			merged.merge(partials[i])
		}
	}
	return p.finish(ev, merged)
}

// scanInput feeds the rows of every item of src, in item order (creation order within each
// physical partition, as Cosmos stores them), so that results and floating-point aggregates
// come out as Cosmos computes them.
func (p *Prepared) scanInput(ev *evaluator, src Reader) func(emit func(row) (bool, error)) error {
	return func(emit func(row) (bool, error)) error {
		if p.derived != nil {
			table, err := p.derived.materialize(ev, src)
			if err != nil {
				return err
			}
			return p.derivedRows(ev, table, emit)
		}
		if c, ok := src.(Counter); ok && !p.needsItems {
			if n, ok := c.Count(); ok {
				// The items would be fed as empty objects anyway (see decode); the charge still
				// counts them as loaded, so it does not depend on how they were counted.
				ev.stats.ItemsLoaded += int(n)
				empty := value.Obj(nil)
				for range n {
					if err := p.rows(ev, empty, emit); err != nil {
						return err
					}
				}
				return nil
			}
		}
		return src.Scan(nil, func(pos Position, doc []byte) (bool, error) {
			ev.stats.ItemsLoaded++
			v, err := p.decode(ev, pos, doc)
			if err != nil {
				return false, err
			}
			return true, p.rows(ev, v, emit)
		})
	}
}

// decode turns a stored item into a value, unless the query never reads items (it only counts
// them), in which case decoding would be wasted work. Only decoded bytes count as loaded, for
// the charge.
func (p *Prepared) decode(ev *evaluator, pos Position, doc []byte) (value.Value, error) {
	if !p.needsItems {
		return value.Obj(nil), nil
	}
	ev.stats.BytesLoaded += len(doc)
	v, err := value.Parse(doc)
	if err != nil {
		return v, fault.New(fault.Internal, "stored item %d is not valid JSON: %w", pos.Seq, err)
	}
	return v, nil
}

// result is one projected result with its ORDER BY keys.
type result struct {
	v    value.Value
	keys []value.Value
}

// partial is what one part of a materialized query produced: its groups (with partial
// aggregates) for a grouped query, its projected results otherwise.
type partial struct {
	groups  *grouper
	results []result
}

func (pa *partial) merge(other *partial) {
	if pa.groups != nil {
		pa.groups.merge(other.groups)
		return
	}
	pa.results = append(pa.results, other.results...)
}

// gather feeds input through grouping, or projection when the query is not grouped.
func (p *Prepared) gather(ev *evaluator, input func(emit func(row) (bool, error)) error) (*partial, error) {
	if p.grouped {
		g := newGrouper(p, ev)
		err := input(func(r row) (bool, error) { return true, g.add(r) })
		return &partial{groups: g}, err
	}
	pa := &partial{}
	keep, err := p.bestOnly(ev)
	if err != nil {
		return nil, err
	}
	err = input(func(r row) (bool, error) {
		res, ok, err := p.result(ev, r)
		if ok {
			if keep != nil {
				keep.add(res)
			} else {
				pa.results = append(pa.results, res)
			}
		}
		return true, err
	})
	if keep != nil {
		pa.results = keep.inOrder()
	}
	return pa, err
}

// result projects a row and evaluates its ORDER BY keys; ok is false when the projection is
// undefined (the row yields no result).
func (p *Prepared) result(ev *evaluator, r row) (result, bool, error) {
	v, err := p.project(ev, r)
	if err != nil || v.IsUndefined() {
		return result{}, false, err
	}
	res := result{v: v}
	for _, o := range p.q.OrderBy {
		if o.Rank {
			if res.keys, err = ev.rankKeys(o.Expr, r, res.keys); err != nil {
				return result{}, false, err
			}
			continue
		}
		k, err := ev.eval(o.Expr, r)
		if err != nil {
			return result{}, false, err
		}
		res.keys = append(res.keys, k)
	}
	return res, true, nil
}

// collect runs input through the whole pipeline in one goroutine; nested queries use it.
func (p *Prepared) collect(ev *evaluator, input func(emit func(row) (bool, error)) error) ([]value.Value, error) {
	pa, err := p.gather(ev, input)
	if err != nil {
		return nil, err
	}
	return p.finish(ev, pa)
}

// finish projects the groups of a grouped query, then orders, removes duplicates and applies
// OFFSET/LIMIT and TOP.
func (p *Prepared) finish(ev *evaluator, pa *partial) ([]value.Value, error) {
	results := pa.results
	if pa.groups != nil {
		pa.groups.ev = ev
		err := pa.groups.each(func(r row) error {
			res, ok, err := p.result(ev, r)
			if ok {
				results = append(results, res)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	if len(p.q.OrderBy) > 0 {
		if p.fused() {
			if err := p.fuse(ev, results); err != nil {
				return nil, err
			}
		}
		cmp, err := p.orderCompare(ev)
		if err != nil {
			return nil, err
		}
		sort.SliceStable(results, func(i, j int) bool { return cmp(results[i], results[j]) < 0 })
	}
	out := make([]value.Value, 0, len(results))
	seen := map[string]bool{}
	for _, r := range results {
		if p.q.Select.Distinct {
			k := value.Key(r.v)
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		out = append(out, r.v)
	}
	if p.q.Offset != nil {
		off := min(p.count(ev, p.q.Offset), len(out))
		out = out[off:]
	}
	if p.q.Limit != nil {
		out = out[:min(p.count(ev, p.q.Limit), len(out))]
	}
	if p.q.Select.Top != nil {
		out = out[:min(p.count(ev, p.q.Select.Top), len(out))]
	}
	return out, nil
}

// project evaluates the SELECT clause for a row.
func (p *Prepared) project(ev *evaluator, r row) (value.Value, error) {
	s := p.q.Select
	switch {
	case s.Value != nil:
		return ev.eval(s.Value, r)
	case s.Star: // binding allows it with exactly one source (bind.go)
		v, _ := r.lookup(p.q.From.Source.Alias)
		return v, nil
	}
	ms := make([]value.Member, 0, len(s.Items))
	for i, it := range s.Items {
		v, err := ev.eval(it.Expr, r)
		if err != nil {
			return v, err
		}
		if !v.IsUndefined() {
			ms = append(ms, value.Member{Key: p.names[i], Val: v})
		}
	}
	return value.Obj(ms), nil
}
