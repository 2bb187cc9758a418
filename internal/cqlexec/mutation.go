package cqlexec

import (
	"context"
	"encoding/binary"
	"encoding/hex"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
)

// mutation is what writes do to one partition: applied as one command (MutateRows), so a
// batch's statements on one partition, and a lightweight transaction, are atomic.
type mutation struct {
	pl     place
	pkVals [][]byte
	rows   []*rowMut
	// spans are deletions of clustering ranges ([lo, hi) of ids) or of the whole partition.
	spans []spanDel
	// conds, for a conditional write (or batch), are checked first: nothing applies unless
	// they all hold.
	conds []*condition
}

// rowMut is what happens to one row.
type rowMut struct {
	ck     [][]byte // nil for the static row, and for the row of a table without clustering
	static bool     // the partition's static row
	ts     int64
	exp    int64 // expiry of the cells written, Unix s; 0 never
	marker bool  // INSERT's row marker
	del    bool  // the row is deleted (before its cells, if any, are written)
	cells  []cellOp
}

// cellOp is one column written or deleted.
type cellOp struct {
	col *column
	op  cql.AssignOp
	key []byte // c[key] = v, DELETE c[key]
	val cqlvalue.Value
	del bool // DELETE c or c[key]
}

// spanDel deletes the rows whose ids are in [lo, hi).
type spanDel struct {
	lo, hi string
	ts     int64
}

// condition is a lightweight transaction's IF.
type condition struct {
	ck          [][]byte // the row it reads; nil for the static row
	ifNotExists bool
	ifExists    bool
	conds       []boundCond
}

type boundCond struct {
	col  *column
	key  []byte // for c[k]
	op   cql.Operator
	vals []cqlvalue.Value // one, or several for IN
}

// mutations binds a write's values into one mutation per partition it writes.
func (x *Executor) mutations(b *binder, wp *writePlan, ts int64) ([]*mutation, error) {
	t := wp.t
	var pkPer [][][]byte
	for _, c := range t.pk {
		vs, err := b.values(wp.w.cols[c.name])
		if err != nil {
			return nil, err
		}
		pkPer = append(pkPer, vs)
	}
	ttl := int64(t.meta.DefaultTTL)
	if wp.using.TTL != nil {
		n, ok, err := b.int(wp.using.TTL, cqlvalue.Native(cqlvalue.Int), "[ttl]")
		if err != nil {
			return nil, err
		}
		if ok {
			if n < 0 {
				return nil, cql.Invalid(fault.Pos{}, "A TTL must be greater or equal to 0, but was %d", n)
			}
			if n > maxTTL {
				return nil, cql.Invalid(fault.Pos{}, "ttl is too large. requested (%d) maximum (%d)", n, maxTTL)
			}
			ttl = n
		}
	}
	exp := int64(0)
	if ttl > 0 {
		exp = x.now().Unix() + ttl
	}
	// The clustering part: the rows (each clustering column pinned), or a span.
	var ckRows [][][]byte
	var span *[2]string // relative to the partition's prefix, hex
	ckPer := [][][]byte{}
	for _, c := range t.ck {
		r := wp.w.cols[c.name]
		if !r.single() {
			break
		}
		vs, err := b.values(r)
		if err != nil {
			return nil, err
		}
		ckPer = append(ckPer, vs)
	}
	switch {
	case wp.staticOnly:
		ckRows = [][][]byte{nil}
	case len(ckPer) == len(t.ck):
		var err error
		if ckRows, err = product(ckPer, "clustering key"); err != nil {
			return nil, err
		}
	default: // a DELETE of rows by prefix, maybe with a slice on the next column
		var err error
		if span, err = x.deleteSpan(b, wp, ckPer); err != nil {
			return nil, err
		}
	}
	cells, err := x.cellOps(b, wp)
	if err != nil {
		return nil, err
	}
	var cond *condition
	if wp.conditional() {
		cond = &condition{ifNotExists: wp.ifNotExists, ifExists: wp.ifExists}
		if len(ckRows) == 1 {
			cond.ck = ckRows[0]
		}
		for _, c := range wp.conds {
			bc, err := bindCond(b, wp.t, c)
			if err != nil {
				return nil, err
			}
			cond.conds = append(cond.conds, bc)
		}
	}
	pks, err := product(pkPer, "partition key")
	if err != nil {
		return nil, err
	}
	var out []*mutation
	for _, pkVals := range pks {
		pk, err := pkBytes(pkVals)
		if err != nil {
			return nil, err
		}
		m := &mutation{pl: placeOf(pk), pkVals: pkVals}
		if cond != nil {
			m.conds = []*condition{cond}
		}
		if span != nil {
			base := hex.EncodeToString(m.pl.prefix)
			// {"", ""} is the whole partition, its static row too; a clustering range never
			// holds the static row, whose id is the prefix itself.
			lo, hi := base+span[0], idAfterAll(base)
			if span[1] != "" {
				hi = base + span[1]
				if span[0] == "" {
					lo = idAfter(base)
				}
			}
			m.spans = append(m.spans, spanDel{lo: lo, hi: hi, ts: ts})
		}
		if statics := staticCells(cells); len(statics) > 0 && !wp.staticOnly {
			m.rows = append(m.rows, &rowMut{static: true, ts: ts, exp: exp, cells: statics})
		}
		for _, ck := range ckRows {
			rm := &rowMut{ck: ck, static: wp.staticOnly, ts: ts, exp: exp, marker: wp.insert, del: wp.del && len(wp.dels) == 0}
			for _, c := range cells {
				if (c.col.kind == static) == rm.static {
					rm.cells = append(rm.cells, c)
				}
			}
			m.rows = append(m.rows, rm)
		}
		out = append(out, m)
	}
	return out, nil
}

func staticCells(cells []cellOp) []cellOp {
	var out []cellOp
	for _, c := range cells {
		if c.col.kind == static {
			out = append(out, c)
		}
	}
	return out
}

// deleteSpan is the id range, relative to a partition's prefix, that a DELETE of rows by a
// clustering prefix (and maybe a slice) covers. Only one prefix is supported: IN on the
// clustering columns of a range delete is refused.
func (x *Executor) deleteSpan(b *binder, wp *writePlan, ckPer [][][]byte) (*[2]string, error) {
	t := wp.t
	var prefix [][]byte
	for i, vs := range ckPer {
		if len(vs) != 1 {
			return nil, cql.Invalid(fault.Pos{}, "IN on clustering column %s is not supported in a range deletion", t.ck[i].name)
		}
		prefix = append(prefix, vs[0])
	}
	enc := hex.EncodeToString(t.appendClustering(nil, prefix))
	if len(prefix) == 0 && len(ckPer) == 0 {
		if r := firstSlice(t, wp.w); r == nil {
			return &[2]string{"", ""}, nil // the whole partition
		}
	}
	lo, hi := enc, idAfterAll(enc)
	if len(prefix) < len(t.ck) {
		if r := wp.w.cols[t.ck[len(prefix)].name]; r.slice() {
			var err error
			if lo, hi, err = sliceIDs(b, t, prefix, r); err != nil {
				return nil, err
			}
		}
	}
	return &[2]string{lo, hi}, nil
}

func firstSlice(t *table, w *where) *restriction {
	if len(t.ck) == 0 {
		return nil
	}
	if r := w.cols[t.ck[0].name]; r.slice() {
		return r
	}
	return nil
}

// sliceIDs is the id range, relative to a partition's prefix, of the rows under the
// clustering prefix whose next column lies in r's slice.
func sliceIDs(b *binder, t *table, prefix [][]byte, r *restriction) (lo, hi string, err error) {
	base := t.appendClustering(nil, prefix)
	c := r.col
	lo, hi = hex.EncodeToString(base), idAfterAll(hex.EncodeToString(base))
	bound := func(term cql.Term) (string, error) {
		v, err := b.keyValue(term, c)
		if err != nil {
			return "", err
		}
		return hex.EncodeToString(cqlvalue.AppendKey(append([]byte(nil), base...), c.typ, v, c.desc)), nil
	}
	// In key order a DESC column's lower bound is its upper one.
	lower, lowerIncl, upper, upperIncl := r.lo, r.loIncl, r.hi, r.hiIncl
	if c.desc {
		lower, lowerIncl, upper, upperIncl = r.hi, r.hiIncl, r.lo, r.loIncl
	}
	if lower != nil {
		k, err := bound(lower)
		if err != nil {
			return "", "", err
		}
		lo = k
		if !lowerIncl {
			lo = idAfterAll(k)
		}
	}
	if upper != nil {
		k, err := bound(upper)
		if err != nil {
			return "", "", err
		}
		hi = k
		if upperIncl {
			hi = idAfterAll(k)
		}
	}
	return lo, hi, nil
}

// cellOps binds the columns a write sets or deletes.
func (x *Executor) cellOps(b *binder, wp *writePlan) ([]cellOp, error) {
	var out []cellOp
	for _, a := range wp.sets {
		c := a.col
		op := cellOp{col: c, op: a.Op}
		typ := c.typ
		switch {
		case a.Key != nil:
			k, err := elementKey(b, c, a.Key)
			if err != nil {
				return nil, err
			}
			op.key = k
			typ = elemType(c.typ, len(c.typ.Elems)-1)
		case c.typ.Kind == cqlvalue.Counter:
			typ = cqlvalue.Native(cqlvalue.Bigint)
		case a.Op == cql.AssignSub && c.typ.Kind == cqlvalue.Map:
			typ = cqlvalue.SetOf(c.typ.Elems[0])
		}
		v, err := b.value(a.Value, typ, c.name)
		if err != nil {
			return nil, err
		}
		if v.Unset {
			continue // an unset value leaves the column as it is
		}
		if c.typ.Kind == cqlvalue.Counter && v.Null {
			return nil, cql.Invalid(fault.Pos{}, "Invalid null value for counter increment")
		}
		op.val = v
		out = append(out, op)
	}
	for _, d := range wp.dels {
		c := wp.t.byName[d.Column]
		op := cellOp{col: c, del: true}
		if d.Key != nil {
			k, err := elementKey(b, c, d.Key)
			if err != nil {
				return nil, err
			}
			op.key = k
		}
		out = append(out, op)
	}
	return out, nil
}

// elementKey binds the k of c[k].
func elementKey(b *binder, c *column, k cql.Term) ([]byte, error) {
	typ := c.typ.Elems[0]
	if c.typ.Kind == cqlvalue.List {
		typ = cqlvalue.Native(cqlvalue.Int)
	}
	v, err := b.value(k, typ, c.name)
	if err != nil {
		return nil, err
	}
	if v.Null || v.Unset {
		return nil, cql.Invalid(fault.Pos{}, "Invalid null value for %s element", c.name)
	}
	return v.Bytes, nil
}

func bindCond(b *binder, t *table, c cql.Condition) (boundCond, error) {
	col := t.byName[c.Column]
	bc := boundCond{col: col, op: c.Op}
	typ := col.typ
	if c.Key != nil {
		k, err := elementKey(b, col, c.Key)
		if err != nil {
			return bc, err
		}
		bc.key = k
		typ = elemType(typ, len(typ.Elems)-1)
	}
	switch {
	case c.Op == cql.OpIn && c.In == nil:
		v, err := b.value(c.Value, cqlvalue.ListOf(typ), col.name)
		if err != nil {
			return bc, err
		}
		if !v.Null && !v.Unset {
			elems, err := cqlvalue.Elements(v.Bytes)
			if err != nil {
				return bc, err
			}
			for _, e := range elems {
				bc.vals = append(bc.vals, cqlvalue.Value{Bytes: e, Null: e == nil})
			}
		}
	case c.Op == cql.OpIn:
		for _, term := range c.In {
			v, err := b.value(term, typ, col.name)
			if err != nil {
				return bc, err
			}
			bc.vals = append(bc.vals, v)
		}
	default:
		v, err := b.value(c.Value, typ, col.name)
		if err != nil {
			return bc, err
		}
		bc.vals = []cqlvalue.Value{v}
	}
	return bc, nil
}

// apply runs mutations, each as one command on its partition. A conditional write (one
// mutation) answers with [applied] and, when it did not apply, what it found.
func (x *Executor) apply(ctx context.Context, t *table, muts []*mutation, conditional bool) (*Result, error) {
	cont, err := x.engineTable(t)
	if err != nil {
		return nil, err
	}
	res := &Result{Kind: ResultVoid}
	if len(muts) > 1 {
		charge, err := x.dryRun(t, muts)
		res.Charge += charge
		if err != nil {
			return nil, err
		}
	}
	for _, m := range muts {
		var lwt *Result
		charge, err := cont.MutateRows(ctx, m.pl.epk, func(tx *engine.RowTxn) error {
			var err error
			lwt, err = x.mutate(t, tx, m)
			return err
		})
		res.Charge += charge
		if err != nil {
			return nil, err
		}
		if lwt != nil {
			lwt.Charge = res.Charge
			res = lwt
		}
	}
	if conditional && res.Kind == ResultVoid {
		res = appliedResult(t, true, nil, nil, 0)
	}
	return res, nil
}

// mutate applies m in tx. When m's condition fails it stages nothing and returns the
// [applied] = false result.
func (x *Executor) mutate(t *table, tx rowTxn, m *mutation) (*Result, error) {
	now := x.now().Unix()
	staged := map[string]*rowDoc{}
	load := func(ck [][]byte) (*rowDoc, error) {
		id := t.rowID(m.pl, ck)
		if r := staged[id]; r != nil {
			return r, nil
		}
		doc, ok, err := tx.Get(id)
		if err != nil {
			return nil, err
		}
		r := &rowDoc{ID: id, Key: append(append([][]byte(nil), m.pkVals...), ck...)}
		if ok {
			if r, err = decodeRow(doc); err != nil {
				return nil, err
			}
		}
		staged[id] = r
		return r, nil
	}
	for _, cond := range m.conds {
		r, err := load(cond.ck)
		if err != nil {
			return nil, err
		}
		if ok, found := cond.holds(r, now); !ok {
			return appliedResult(t, false, r, found, now), nil
		}
	}
	var order []string
	tombstones := 0 // bytes, about, of the rows the spans delete
	for _, sp := range m.spans {
		var failed error
		err := tx.Scan(sp.lo, sp.hi, false, func(id string, doc []byte) bool {
			r := staged[id] // an earlier span or condition of the batch may hold it
			if r == nil {
				var err error
				if r, err = decodeRow(doc); err != nil {
					failed = err
					return false
				}
			}
			if r.Deleted != nil && *r.Deleted >= sp.ts {
				return true // deleted already: nothing to write
			}
			r.delete(sp.ts) // now, so that only what survives the deletion stays in memory
			staged[id] = r
			order = append(order, id)
			tombstones += r.size()
			if tombstones > maxRangeDeleteBytes {
				failed = fault.New(fault.TooLarge, "The DELETE covers more rows than one statement may delete (their tombstones would pass %d MiB); delete the range in narrower clustering slices", maxRangeDeleteBytes>>20)
				return false
			}
			return true
		})
		if err == nil {
			err = failed
		}
		if err != nil {
			return nil, err
		}
	}
	for _, rm := range m.rows {
		r, err := load(rm.ck)
		if err != nil {
			return nil, err
		}
		if rm.del {
			r.delete(rm.ts)
		}
		if rm.marker {
			r.setMarker(&cellDoc{V: []byte{}, T: rm.ts, X: rm.exp})
		}
		for _, c := range rm.cells {
			if err := applyCell(r, c, rm, now); err != nil {
				return nil, err
			}
		}
		order = append(order, r.ID)
	}
	for _, id := range order {
		r := staged[id]
		if r.dead() {
			tx.Delete(id)
			continue
		}
		tx.Put(id, r.encode(now))
	}
	return nil, nil
}

// maxRangeDeleteBytes bounds what one DELETE of a clustering range or of a whole partition
// may delete. Partita keeps a deletion as a tombstone per row (row.go), not one for the
// range as Cassandra does, and a write's rows are staged in memory and committed as one
// command: the bound keeps that memory, and the command, within reason (some hundreds of
// thousands of rows with small keys). Rows deleted before count too, when the new deletion
// is newer than theirs: their tombstones are written again. A variable for tests.
var maxRangeDeleteBytes = 64 << 20

// applyCell writes one column of r.
func applyCell(r *rowDoc, c cellOp, rm *rowMut, now int64) error {
	name, typ := c.col.name, c.col.typ
	cur := r.Cells[name]
	var curVal []byte
	if cur.live(now) {
		curVal = cur.V
	}
	put := func(v []byte, exp int64) {
		if isMultiCell(typ) && (len(v) == 0 || len(v) >= 4 && binary.BigEndian.Uint32(v) == 0) {
			v = nil // an empty (non-frozen) collection is no collection
		}
		r.setCell(name, &cellDoc{V: v, T: rm.ts, X: exp})
	}
	switch {
	case c.del && c.key == nil:
		put(nil, 0)
	case c.del:
		v, err := removeElement(typ, curVal, c.key)
		if err != nil {
			return err
		}
		put(v, cellExp(cur))
	case typ.Kind == cqlvalue.Counter:
		n, err := cqlvalue.Int64(cqlvalue.Native(cqlvalue.Bigint), c.val.Bytes)
		if err != nil {
			return err
		}
		var old int64
		if curVal != nil {
			old, _ = cqlvalue.Int64(cqlvalue.Native(cqlvalue.Bigint), curVal)
		}
		if c.op == cql.AssignSub {
			n = -n
		}
		ts := rm.ts
		if cur != nil && cur.T >= ts {
			ts = cur.T + 1 // counters add up whatever the timestamps
		}
		r.setCell(name, &cellDoc{V: cqlvalue.EncodeBigint(old + n), T: ts})
	case c.key != nil:
		v, err := setElement(typ, curVal, c.key, c.val)
		if err != nil {
			return err
		}
		put(v, rm.exp)
	case c.op == cql.AssignSet:
		if c.val.Null {
			put(nil, 0)
		} else {
			put(c.val.Bytes, rm.exp)
		}
	default:
		if c.val.Null {
			return nil // adding or removing null changes nothing
		}
		v, err := combine(typ, c.op, curVal, c.val.Bytes)
		if err != nil {
			return err
		}
		put(v, rm.exp)
	}
	return nil
}

func cellExp(c *cellDoc) int64 {
	if c == nil {
		return 0
	}
	return c.X
}

// combine is UPDATE's c = c + v, c = v + c and c = c - v on a collection.
func combine(t *cqlvalue.Type, op cql.AssignOp, cur, v []byte) ([]byte, error) {
	switch {
	case t.Kind == cqlvalue.List && op == cql.AssignAdd:
		return cqlvalue.ListAppend(cur, v)
	case t.Kind == cqlvalue.List && op == cql.AssignPrepend:
		return cqlvalue.ListPrepend(cur, v)
	case t.Kind == cqlvalue.List:
		return cqlvalue.ListRemove(t, cur, v)
	case t.Kind == cqlvalue.Set && op == cql.AssignAdd:
		return cqlvalue.SetAdd(t, cur, v)
	case t.Kind == cqlvalue.Set:
		return cqlvalue.SetRemove(t, cur, v)
	case t.Kind == cqlvalue.Map && op == cql.AssignAdd:
		return cqlvalue.MapPut(t, cur, v)
	case t.Kind == cqlvalue.Map:
		return cqlvalue.MapRemove(t, cur, v)
	}
	return nil, fault.New(fault.Internal, "combine on %s", t.String())
}

// setElement is c[k] = v: a map entry, or a list element by index.
func setElement(t *cqlvalue.Type, cur, k []byte, v cqlvalue.Value) ([]byte, error) {
	if t.Kind == cqlvalue.List {
		idx, err := cqlvalue.Int64(cqlvalue.Native(cqlvalue.Int), k)
		if err != nil {
			return nil, err
		}
		if v.Null {
			return cqlvalue.ListDeleteIndex(cur, idx)
		}
		return cqlvalue.ListSetIndex(cur, idx, v.Bytes)
	}
	if v.Null {
		return cqlvalue.MapRemove(t, cur, cqlvalue.EncodeSet(t.Elems[0], k))
	}
	return cqlvalue.MapPut(t, cur, cqlvalue.EncodeMap(t.Elems[0], [][]byte{k}, [][]byte{v.Bytes}))
}

// removeElement is DELETE c[k].
func removeElement(t *cqlvalue.Type, cur, k []byte) ([]byte, error) {
	switch t.Kind {
	case cqlvalue.List:
		idx, err := cqlvalue.Int64(cqlvalue.Native(cqlvalue.Int), k)
		if err != nil {
			return nil, err
		}
		return cqlvalue.ListDeleteIndex(cur, idx)
	case cqlvalue.Set:
		return cqlvalue.SetRemove(t, cur, cqlvalue.EncodeSet(t.Elems[0], k))
	default:
		return cqlvalue.MapRemove(t, cur, cqlvalue.EncodeSet(t.Elems[0], k))
	}
}

// holds evaluates the condition on the row r read; found is the columns to show when it
// does not hold.
func (c *condition) holds(r *rowDoc, now int64) (bool, []*column) {
	exists := r.live(now)
	switch {
	case c.ifNotExists:
		return !exists, nil
	case c.ifExists:
		return exists, nil
	}
	var shown []*column
	ok := true
	for _, bc := range c.conds {
		shown = append(shown, bc.col)
		var cur []byte
		if cell := r.Cells[bc.col.name]; exists && cell.live(now) {
			cur = cell.V
		}
		typ := bc.col.typ
		if bc.key != nil {
			cur = elementOf(typ, cur, bc.key)
			typ = elemType(typ, len(typ.Elems)-1)
		}
		if !compareCond(typ, cur, bc) {
			ok = false
		}
	}
	return ok, shown
}

// elementOf is c[k] of a map or list value; nil when absent.
func elementOf(t *cqlvalue.Type, v, k []byte) []byte {
	if v == nil {
		return nil
	}
	if t.Kind == cqlvalue.List {
		idx, err := cqlvalue.Int64(cqlvalue.Native(cqlvalue.Int), k)
		if err != nil {
			return nil
		}
		elems, err := cqlvalue.Elements(v)
		if err != nil || idx < 0 || int(idx) >= len(elems) {
			return nil
		}
		return elems[idx]
	}
	e, _, _ := cqlvalue.MapGet(t, v, k)
	return e
}

// compareCond applies a condition's operator to the current value cur (nil: null).
func compareCond(t *cqlvalue.Type, cur []byte, bc boundCond) bool {
	if bc.op == cql.OpIn {
		for _, v := range bc.vals {
			if v.Null && cur == nil || !v.Null && cur != nil && cqlvalue.Compare(t, cur, v.Bytes) == 0 {
				return true
			}
		}
		return false
	}
	v := bc.vals[0]
	if v.Null || cur == nil {
		switch bc.op {
		case cql.OpEq:
			return v.Null && cur == nil
		case cql.OpNe:
			return v.Null != (cur == nil)
		}
		return false
	}
	n := cqlvalue.Compare(t, cur, v.Bytes)
	switch bc.op {
	case cql.OpEq:
		return n == 0
	case cql.OpNe:
		return n != 0
	case cql.OpLt:
		return n < 0
	case cql.OpLe:
		return n <= 0
	case cql.OpGt:
		return n > 0
	case cql.OpGe:
		return n >= 0
	}
	return false
}

// appliedResult is a conditional write's answer: [applied], and when it did not apply, the
// columns it tested (every column of the row it found, for IF NOT EXISTS).
func appliedResult(t *table, applied bool, r *rowDoc, shown []*column, now int64) *Result {
	res := &Result{Kind: ResultRows, Columns: []Column{{Keyspace: t.ks, Table: t.name, Name: "[applied]", Type: cqlvalue.Native(cqlvalue.Boolean)}}}
	row := [][]byte{cqlvalue.EncodeBoolean(applied)}
	cols := shown
	if shown == nil && r != nil && r.live(now) {
		cols = t.cols
	}
	if !applied {
		for _, c := range cols {
			res.Columns = append(res.Columns, Column{Keyspace: t.ks, Table: t.name, Name: c.name, Type: c.typ})
			row = append(row, cellValue(t, r, c, now))
		}
	}
	res.Rows = [][][]byte{row}
	return res
}

// cellValue is column c's value in row r at now; nil for null.
func cellValue(t *table, r *rowDoc, c *column, now int64) []byte {
	switch c.kind {
	case partitionKey:
		if c.pos < len(r.Key) {
			return r.Key[c.pos]
		}
		return nil
	case clustering:
		if i := len(t.pk) + c.pos; i < len(r.Key) {
			return r.Key[i]
		}
		return nil
	}
	if cell := r.Cells[c.name]; cell.live(now) {
		return cell.V
	}
	return nil
}
