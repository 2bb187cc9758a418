package cqlexec

import (
	"bytes"
	"encoding/hex"
	"math"
	"slices"
	"sort"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
)

// A SELECT reads spans of the table's row order (engine.ScanRows): one per partition and
// clustering range when the partition key is pinned, else one range of the ring. Rows come
// in that order (reversed for an ORDER BY against the clustering order), and a page ends
// after the row its paging state names, so the next page resumes right after it.

// span is one range of rows to read, [lo, hi).
type span struct {
	lo, hi engine.RowPos
}

// spans lists what the plan reads, in the order it returns rows.
func (sp *selectPlan) spans(b *binder) ([]span, error) {
	t, w := sp.t, sp.w
	if !sp.byPartition {
		lo, hi, err := tokenRange(b, w.token)
		if err != nil {
			return nil, err
		}
		if lo.EPK >= hi.EPK {
			return nil, nil
		}
		return []span{{lo: lo, hi: hi}}, nil
	}
	var pkPer [][][]byte
	for _, c := range t.pk {
		vs, err := b.values(w.cols[c.name])
		if err != nil {
			return nil, err
		}
		pkPer = append(pkPer, vs)
	}
	pks, err := product(pkPer, "partition key")
	if err != nil {
		return nil, err
	}
	var places []place
	for _, vals := range pks {
		pk, err := pkBytes(vals)
		if err != nil {
			return nil, err
		}
		places = append(places, placeOf(pk))
	}
	sort.Slice(places, func(i, j int) bool {
		if places[i].epk != places[j].epk {
			return places[i].epk < places[j].epk
		}
		return bytes.Compare(places[i].prefix, places[j].prefix) < 0
	})
	rel, err := sp.clusteringSpans(b)
	if err != nil {
		return nil, err
	}
	var out []span
	for _, pl := range places {
		base := hex.EncodeToString(pl.prefix)
		for _, r := range rel {
			lo, hi := base+r[0], base+r[1]
			if r[0] == "" && r[1] == "" {
				lo, hi = base, idAfterAll(base) // the whole partition, static row first
			}
			if lo < hi {
				out = append(out, span{lo: engine.RowPos{EPK: pl.epk, ID: lo}, hi: engine.RowPos{EPK: pl.epk, ID: hi}})
			}
		}
	}
	if sp.reverse {
		slices.Reverse(out)
	}
	return out, nil
}

// clusteringSpans are the id ranges, relative to a partition's prefix, that the clustering
// restrictions select, in key order; {"", ""} for the whole partition.
func (sp *selectPlan) clusteringSpans(b *binder) ([][2]string, error) {
	t, w := sp.t, sp.w
	if sp.ckFilter {
		return [][2]string{{"", ""}}, nil
	}
	var per [][][]byte
	var slice *restriction
	for _, c := range t.ck {
		r := w.cols[c.name]
		if r == nil {
			break
		}
		if r.slice() {
			slice = r
			break
		}
		vs, err := b.values(r)
		if err != nil {
			return nil, err
		}
		per = append(per, vs)
	}
	if len(per) == 0 && slice == nil {
		return [][2]string{{"", ""}}, nil
	}
	prefixes, err := product(per, "clustering key")
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for _, prefix := range prefixes {
		if slice != nil {
			lo, hi, err := sliceIDs(b, t, prefix, slice)
			if err != nil {
				return nil, err
			}
			if lo == "" {
				lo = "\x00" // after the static row
			}
			out = append(out, [2]string{lo, hi})
			continue
		}
		enc := hex.EncodeToString(t.appendClustering(nil, prefix))
		out = append(out, [2]string{enc, idAfterAll(enc)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out, nil
}

// tokenRange turns token() relations into a range of the row order.
func tokenRange(b *binder, rels []cql.Relation) (lo, hi engine.RowPos, err error) {
	lo, hi = engine.RowPos{}, engine.RowEnd
	after := func(t int64) engine.RowPos { // the first row past token t
		if t == math.MaxInt64 {
			return engine.RowEnd
		}
		return engine.RowPos{EPK: epk.TokenEPK(t + 1)}
	}
	for _, rel := range rels {
		t, ok, err := b.int(rel.Value, cqlvalue.Native(cqlvalue.Bigint), "partition key token")
		if err != nil {
			return lo, hi, err
		}
		if !ok {
			return lo, hi, cql.Invalid(fault.Pos{}, "Invalid null value for partition key token")
		}
		at := engine.RowPos{EPK: epk.TokenEPK(t)}
		switch rel.Op {
		case cql.OpGt:
			lo = maxPos(lo, after(t))
		case cql.OpGe:
			lo = maxPos(lo, at)
		case cql.OpLt:
			hi = minPos(hi, at)
		case cql.OpLe:
			hi = minPos(hi, after(t))
		case cql.OpEq:
			lo, hi = maxPos(lo, at), minPos(hi, after(t))
		}
	}
	return lo, hi, nil
}

// rowBefore reports whether a comes before b in the row order.
func rowBefore(a, b engine.RowPos) bool {
	return a.EPK < b.EPK || a.EPK == b.EPK && a.ID < b.ID
}

func maxRowPos(a, b engine.RowPos) engine.RowPos {
	if rowBefore(a, b) {
		return b
	}
	return a
}

func minRowPos(a, b engine.RowPos) engine.RowPos {
	if rowBefore(b, a) {
		return b
	}
	return a
}

func maxPos(a, b engine.RowPos) engine.RowPos {
	if a.EPK < b.EPK {
		return b
	}
	return a
}

func minPos(a, b engine.RowPos) engine.RowPos {
	if b.EPK < a.EPK {
		return b
	}
	return a
}

// executeSelect runs a prepared SELECT.
func (x *Executor) executeSelect(s *Session, p *Prepared, o Options) (*Result, error) {
	sp := p.plan.(*selectPlan)
	b, err := newBinder(p, o.Values, o.Names)
	if err != nil {
		return nil, err
	}
	rd := &reader{x: x, sp: sp, sess: s, b: b, now: x.now().Unix(), pageSize: o.PageSize, rc: engine.ReadConsistency{Level: o.Consistency}}
	if rd.limit, err = positive(b, sp.limit, "LIMIT"); err != nil {
		return nil, err
	}
	if rd.perPart, err = positive(b, sp.perPartLim, "PER PARTITION LIMIT"); err != nil {
		return nil, err
	}
	if rd.filters, err = bindFilters(b, sp); err != nil {
		return nil, err
	}
	if sp.t.virtual != nil {
		return rd.virtual()
	}
	if err := x.fresh(sp.t); err != nil {
		return nil, err
	}
	if rd.cont, err = x.engineTable(sp.t); err != nil {
		return nil, err
	}
	if rd.spans, err = sp.spans(b); err != nil {
		return nil, err
	}
	if len(o.PagingState) > 0 {
		if rd.state, err = decodePaging(sp.t, o.PagingState, len(rd.spans)); err != nil {
			return nil, err
		}
	}
	return rd.run()
}

// positive is a LIMIT's value: 0 when not given.
func positive(b *binder, term cql.Term, what string) (int, error) {
	if term == nil {
		return 0, nil
	}
	n, ok, err := b.int(term, cqlvalue.Native(cqlvalue.Int), what)
	if err != nil {
		return 0, err
	}
	if !ok || n <= 0 {
		return 0, cql.Invalid(fault.Pos{}, "%s must be strictly positive", what)
	}
	return int(n), nil
}

// reader runs one page of a SELECT.
type reader struct {
	x        *Executor
	sp       *selectPlan
	sess     *Session
	b        *binder
	cont     *engine.Container
	now      int64
	spans    []span
	state    pagingState
	pageSize int
	limit    int
	perPart  int
	filters  []boundFilter
	rc       engine.ReadConsistency // the request's consistency level's

	out    [][][]byte
	charge float64
	agg    *aggregator
	// cur is the partition being read: its key values, its static row, whether a row of it
	// was returned, and a static row not yet known to be alone.
	cur struct {
		pk      [][]byte
		static  *rowDoc
		fetched bool // static was looked up
		rows    bool
		pending *rowDoc
		pendPos engine.RowPos
	}
	full bool // the page is full: stop
}

func (rd *reader) run() (*Result, error) {
	sp := rd.sp
	if sp.aggregate {
		rd.agg = newAggregator(sp.items)
	}
	if sp.inOrdered {
		return rd.runOrdered()
	}
	st := rd.state
	for i := st.Span; i < len(rd.spans) && !rd.full; i++ {
		sn := rd.spans[i]
		if i == st.Span && (st.ID != "" || st.EPK != nil) {
			// Resume after the row the state names, never outside the span: a forged state
			// must not reach rows the query does not select.
			at := engine.RowPos{EPK: epk.EPK(st.EPK), ID: st.ID}
			if sp.reverse {
				sn.hi = minRowPos(sn.hi, at)
			} else {
				sn.lo = maxRowPos(sn.lo, engine.RowPos{EPK: at.EPK, ID: idAfter(at.ID)})
			}
			if !rowBefore(sn.lo, sn.hi) {
				sn.hi = sn.lo // nothing left of the span
			}
		}
		if i != st.Span || st.Key == nil {
			rd.cur.pk, rd.cur.static, rd.cur.fetched, rd.cur.rows = nil, nil, false, false
		}
		if i == st.Span && st.Key != nil {
			rd.cur.pk, rd.cur.rows = st.Key, true
		}
		rd.state.Span = i
		var failed error
		charge, err := rd.cont.ScanRowsAt(rd.rc, sn.lo, sn.hi, sp.reverse, func(e epk.EPK, id string, doc []byte) bool {
			r, err := decodeRow(doc)
			if err != nil {
				failed = err
				return false
			}
			if err := rd.row(engine.RowPos{EPK: e, ID: id}, r); err != nil {
				failed = err
				return false
			}
			return !rd.full
		})
		rd.charge += charge
		if err == nil {
			err = failed
		}
		if err != nil {
			return nil, err
		}
		if !rd.full {
			if err := rd.endPartition(); err != nil {
				return nil, err
			}
		}
	}
	return rd.result()
}

// row takes one stored row in scan order.
func (rd *reader) row(pos engine.RowPos, r *rowDoc) error {
	t := rd.sp.t
	npk := len(t.pk)
	if len(r.Key) < npk {
		return fault.New(fault.Internal, "a stored row has %d key values", len(r.Key))
	}
	if !sameKey(rd.cur.pk, r.Key[:npk]) {
		if err := rd.endPartition(); err != nil || rd.full {
			return err
		}
		rd.cur.pk, rd.cur.static, rd.cur.fetched, rd.cur.rows = r.Key[:npk], nil, false, false
	}
	if len(t.ck) > 0 && len(r.Key) == npk { // the static row
		rd.cur.static, rd.cur.fetched = r, true
		if !rd.sp.reverse {
			rd.cur.pending, rd.cur.pendPos = r, pos
			return nil
		}
		if !rd.cur.rows {
			return rd.staticAlone(pos, r)
		}
		return nil
	}
	rd.cur.pending = nil
	if !r.live(rd.now) {
		return nil
	}
	if rd.sp.needStatic && !rd.cur.fetched {
		if err := rd.fetchStatic(pos.EPK); err != nil {
			return err
		}
	}
	return rd.emit(pos, r)
}

// endPartition finishes the partition being read: a static row with no rows is a row of its
// own (forward order; in reverse the static row comes last and says so itself).
func (rd *reader) endPartition() error {
	p := rd.cur.pending
	rd.cur.pending = nil
	if p != nil && !rd.cur.rows {
		return rd.staticAlone(rd.cur.pendPos, p)
	}
	return nil
}

// staticAlone returns a partition that has static values and no rows, as Cassandra does
// for a query that does not restrict the clustering columns: its static and key values, the
// clustering columns null.
func (rd *reader) staticAlone(pos engine.RowPos, r *rowDoc) error {
	if !r.live(rd.now) || rd.sp.ckFilter || len(rd.sp.w.cols) > len(rd.sp.t.pk) {
		return nil
	}
	rd.cur.static = r
	return rd.emit(pos, r)
}

// fetchStatic reads the static row of the current partition, which the span did not hold.
func (rd *reader) fetchStatic(e epk.EPK) error {
	rd.cur.fetched = true
	pk, err := pkBytes(rd.cur.pk)
	if err != nil {
		return err
	}
	id := rd.sp.t.rowID(placeOf(pk), nil)
	var failed error
	charge, err := rd.cont.ScanRowsAt(rd.rc, engine.RowPos{EPK: e, ID: id}, engine.RowPos{EPK: e, ID: idAfter(id)}, false, func(_ epk.EPK, _ string, doc []byte) bool {
		rd.cur.static, failed = decodeRow(doc)
		return false
	})
	rd.charge += charge
	if err == nil {
		err = failed
	}
	return err
}

// emit returns row r if it passes the filters and limits.
func (rd *reader) emit(pos engine.RowPos, r *rowDoc) error {
	sp := rd.sp
	if !rd.pass(r) {
		return nil
	}
	if sp.distinct && rd.cur.rows {
		return nil
	}
	if rd.perPart > 0 && rd.state.PartCount >= rd.perPart && rd.cur.rows {
		return nil
	}
	if !rd.cur.rows {
		rd.state.PartCount = 0
	}
	rd.cur.rows = true
	rd.state.PartCount++
	row := rd.project(r)
	if rd.agg != nil {
		rd.agg.add(row)
		return nil
	}
	rd.out = append(rd.out, row)
	rd.state.Count++
	rd.state.EPK, rd.state.ID, rd.state.Key = []byte(pos.EPK), pos.ID, rd.cur.pk
	if rd.limit > 0 && rd.state.Count >= rd.limit {
		rd.full, rd.state.done = true, true
	} else if rd.pageSize > 0 && len(rd.out) >= rd.pageSize {
		rd.full = true
	}
	return nil
}

// project computes the select list for row r.
func (rd *reader) project(r *rowDoc) [][]byte {
	t := rd.sp.t
	out := make([][]byte, len(rd.sp.items))
	for i, it := range rd.sp.items {
		src := r
		if it.col != nil && it.col.kind == static {
			src = rd.cur.static
		}
		switch it.kind {
		case selColumn, selCountCol, selMin, selMax, selSum, selAvg:
			if src != nil {
				out[i] = cellValue(t, src, it.col, rd.now)
			}
		case selWritetime:
			if src != nil {
				if c := src.Cells[it.col.name]; c.live(rd.now) {
					out[i] = cqlvalue.EncodeBigint(c.T)
				}
			}
		case selTTL:
			if src != nil {
				if c := src.Cells[it.col.name]; c.live(rd.now) && c.X > 0 {
					out[i] = cqlvalue.EncodeInt(int32(c.X - rd.now))
				}
			}
		case selToken:
			pk, _ := pkBytes(r.Key[:len(t.pk)])
			out[i] = cqlvalue.EncodeBigint(epk.Token(pk))
		case selConst:
			v, err := rd.b.value(it.term, it.typ, it.name)
			if err == nil && !v.Null && !v.Unset {
				out[i] = v.Bytes
			}
		}
	}
	return out
}

func sameKey(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// result shapes the page read.
func (rd *reader) result() (*Result, error) {
	res := &Result{Kind: ResultRows, Charge: rd.charge}
	for _, it := range rd.sp.items {
		res.Columns = append(res.Columns, Column{Keyspace: rd.sp.t.ks, Table: rd.sp.t.name, Name: it.name, Type: it.typ})
	}
	if rd.agg != nil {
		res.Rows = [][][]byte{rd.agg.row()}
		return res, nil
	}
	res.Rows = rd.out
	if rd.full && !rd.state.done {
		res.PagingState = rd.state.encode()
	}
	if res.Rows == nil {
		res.Rows = [][][]byte{}
	}
	return res, nil
}

// runOrdered serves IN on the partition key with ORDER BY: the partitions' rows are merged
// in clustering order, which needs them all at once.
func (rd *reader) runOrdered() (*Result, error) {
	sp := rd.sp
	pageSize, limit := rd.pageSize, rd.limit
	rd.pageSize, rd.limit = 0, 0
	rd.state = pagingState{}
	saved := rd.agg
	rd.agg = nil
	type keyed struct {
		ck  [][]byte
		row [][]byte
	}
	var all []keyed
	for _, sn := range rd.spans {
		rd.cur.pk, rd.cur.static, rd.cur.fetched, rd.cur.rows = nil, nil, false, false
		var failed error
		charge, err := rd.cont.ScanRowsAt(rd.rc, sn.lo, sn.hi, sp.reverse, func(e epk.EPK, id string, doc []byte) bool {
			r, err := decodeRow(doc)
			if err == nil {
				before := len(rd.out)
				err = rd.row(engine.RowPos{EPK: e, ID: id}, r)
				if len(rd.out) > before {
					all = append(all, keyed{ck: r.Key[len(sp.t.pk):], row: rd.out[len(rd.out)-1]})
				}
			}
			failed = err
			return err == nil
		})
		rd.charge += charge
		if err == nil {
			err = failed
		}
		if err != nil {
			return nil, err
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		for k, c := range sp.t.ck {
			if k >= len(all[i].ck) || k >= len(all[j].ck) {
				break
			}
			n := cqlvalue.Compare(c.typ, all[i].ck[k], all[j].ck[k])
			if c.desc != sp.reverse {
				n = -n
			}
			if n != 0 {
				return n < 0
			}
		}
		return false
	})
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	if pageSize > 0 && len(all) > pageSize {
		return nil, cql.Invalid(fault.Pos{}, "Cannot page queries with both ORDER BY and a IN restriction on the partition key; you must either remove the ORDER BY or the IN and sort client side, or disable paging for this query")
	}
	rd.out = rd.out[:0]
	rd.agg = saved
	for _, k := range all {
		if rd.agg != nil {
			rd.agg.add(k.row)
		} else {
			rd.out = append(rd.out, k.row)
		}
	}
	rd.full = false
	return rd.result()
}
