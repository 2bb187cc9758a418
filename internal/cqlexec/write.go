package cqlexec

import (
	"slices"
	"sort"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
)

// writePlan is a checked INSERT, UPDATE or DELETE.
type writePlan struct {
	t  *table
	st cql.Statement
	w  *where // the rows it writes (INSERT's values become equalities)
	// sets are INSERT's values and UPDATE's assignments, dels DELETE's columns (none: rows).
	sets []assignment
	dels []cql.Deletion
	del  bool // a DELETE
	// insert marks INSERT, which writes the row marker: the row exists with its key alone.
	insert      bool
	using       cql.Using
	ifNotExists bool
	ifExists    bool
	conds       []cql.Condition
	// staticOnly is a write of static columns alone, which needs no clustering key.
	staticOnly bool
}

// assignment is one column written.
type assignment struct {
	col *column
	cql.Assignment
}

func (w *writePlan) conditional() bool { return w.ifNotExists || w.ifExists || len(w.conds) > 0 }

// analyzeWrite checks an INSERT, UPDATE or DELETE.
func analyzeWrite(sch *schema, s *Session, p *Prepared) error {
	wp, err := planWrite(sch, s, p, p.stmt)
	if err != nil {
		return err
	}
	p.plan = wp
	p.PKIndices = pkIndices(wp.t, wp.w)
	if wp.conditional() {
		p.Columns = lwtColumns(wp)
	}
	return nil
}

// planWrite checks one write statement, typing its markers in p (which may be a batch's).
func planWrite(sch *schema, s *Session, p *Prepared, st cql.Statement) (*writePlan, error) {
	if p.Params == nil {
		p.Params = make([]Column, len(p.stmt.Markers()))
	}
	switch st := st.(type) {
	case *cql.Insert:
		return planInsert(sch, s, p, st)
	case *cql.Update:
		t, err := sch.table(s, st.Table)
		if err != nil {
			return nil, err
		}
		if err := checkWritable(t); err != nil {
			return nil, err
		}
		wp := &writePlan{t: t, st: st, using: st.Using, ifExists: st.IfExists, conds: st.Conditions}
		if wp.w, err = parseWhere(p, t, st.Where); err != nil {
			return nil, err
		}
		for _, a := range st.Set {
			c := t.byName[a.Column]
			if c == nil {
				return nil, undefinedColumn(a.Column)
			}
			if c.kind == partitionKey || c.kind == clustering {
				return nil, cql.Invalid(fault.Pos{}, "PRIMARY KEY part %s found in SET part", c.name)
			}
			if err := typeAssignment(p, t, c, a); err != nil {
				return nil, err
			}
			wp.sets = append(wp.sets, assignment{col: c, Assignment: a})
		}
		return wp, wp.finish(p)
	case *cql.Delete:
		t, err := sch.table(s, st.Table)
		if err != nil {
			return nil, err
		}
		if err := checkWritable(t); err != nil {
			return nil, err
		}
		if st.Using.TTL != nil {
			return nil, cql.Invalid(fault.Pos{}, "TTL is not allowed on DELETE statements")
		}
		wp := &writePlan{t: t, st: st, del: true, dels: st.Columns, using: st.Using, ifExists: st.IfExists, conds: st.Conditions}
		if wp.w, err = parseWhere(p, t, st.Where); err != nil {
			return nil, err
		}
		for _, d := range st.Columns {
			c := t.byName[d.Column]
			if c == nil {
				return nil, undefinedColumn(d.Column)
			}
			if c.kind == partitionKey || c.kind == clustering {
				return nil, cql.Invalid(fault.Pos{}, "Invalid identifier %s for deletion (should not be a PRIMARY KEY part)", c.name)
			}
			if d.Key != nil {
				if err := typeElementKey(p, t, c, d.Key); err != nil {
					return nil, err
				}
			}
		}
		return wp, wp.finish(p)
	}
	return nil, cql.Invalid(fault.Pos{}, "Only INSERT, UPDATE and DELETE statements are allowed in a batch")
}

func checkWritable(t *table) error {
	if systemKeyspaces[t.ks] {
		return fault.New(fault.Forbidden, "%s keyspace is not user-modifiable", t.ks)
	}
	return nil
}

func planInsert(sch *schema, s *Session, p *Prepared, st *cql.Insert) (*writePlan, error) {
	t, err := sch.table(s, st.Table)
	if err != nil {
		return nil, err
	}
	if err := checkWritable(t); err != nil {
		return nil, err
	}
	if st.JSON != nil {
		return nil, cql.Invalid(fault.Pos{}, "INSERT JSON is not supported yet; list the columns and their values")
	}
	if t.counter {
		return nil, cql.Invalid(fault.Pos{}, "INSERT statements are not allowed on counter tables, use UPDATE instead")
	}
	wp := &writePlan{t: t, st: st, insert: true, using: st.Using, ifNotExists: st.IfNotExists, w: &where{cols: map[string]*restriction{}}}
	for i, n := range st.Columns {
		c := t.byName[n]
		if c == nil {
			return nil, undefinedColumn(n)
		}
		if slices.Contains(st.Columns[:i], n) {
			return nil, cql.Invalid(fault.Pos{}, "The column names contains duplicates")
		}
		v := st.Values[i]
		if c.kind == partitionKey || c.kind == clustering {
			typeMarkers(p, t, v, c.typ, c.name)
			wp.w.cols[n] = &restriction{col: c, eq: v}
			continue
		}
		a := cql.Assignment{Column: n, Op: cql.AssignSet, Value: v}
		typeMarkers(p, t, v, c.typ, c.name)
		wp.sets = append(wp.sets, assignment{col: c, Assignment: a})
	}
	for _, c := range t.pk {
		if wp.w.cols[c.name] == nil {
			return nil, cql.Invalid(fault.Pos{}, "Some partition key parts are missing: %s", c.name)
		}
	}
	return wp, wp.finish(p)
}

// typeAssignment types an UPDATE assignment's markers and checks it fits the column.
func typeAssignment(p *Prepared, t *table, c *column, a cql.Assignment) error {
	typ := c.typ
	multi := isMultiCell(typ)
	switch {
	case a.Key != nil:
		if !multi || typ.Kind == cqlvalue.Set {
			return cql.Invalid(fault.Pos{}, "Invalid operation (%s[?] = ?) for non list/map column %s", c.name, c.name)
		}
		if err := typeElementKey(p, t, c, a.Key); err != nil {
			return err
		}
		typeMarkers(p, t, a.Value, elemType(typ, len(typ.Elems)-1), "value("+c.name+")")
		return nil
	case typ.Kind == cqlvalue.Counter:
		if a.Op == cql.AssignSet {
			return cql.Invalid(fault.Pos{}, "Cannot set the value of counter column %s (counters can only be incremented/decremented, not set)", c.name)
		}
		typeMarkers(p, t, a.Value, cqlvalue.Native(cqlvalue.Bigint), c.name)
		return nil
	case a.Op == cql.AssignSet:
		typeMarkers(p, t, a.Value, typ, c.name)
		return nil
	case !multi:
		return cql.Invalid(fault.Pos{}, "Invalid operation (%s = %s + ?) for non counter column %s", c.name, c.name, c.name)
	case a.Op == cql.AssignPrepend && typ.Kind != cqlvalue.List:
		return cql.Invalid(fault.Pos{}, "Invalid operation (%s = ? + %s) for non list column %s", c.name, c.name, c.name)
	case a.Op == cql.AssignSub && typ.Kind == cqlvalue.Map:
		typeMarkers(p, t, a.Value, cqlvalue.SetOf(typ.Elems[0]), c.name)
		return nil
	}
	typeMarkers(p, t, a.Value, typ, c.name)
	return nil
}

// typeElementKey types the k of c[k]: a map's key or a list's index.
func typeElementKey(p *Prepared, t *table, c *column, k cql.Term) error {
	switch {
	case c.typ.Kind == cqlvalue.Map && isMultiCell(c.typ):
		typeMarkers(p, t, k, c.typ.Elems[0], "key("+c.name+")")
	case c.typ.Kind == cqlvalue.List && isMultiCell(c.typ):
		typeMarkers(p, t, k, cqlvalue.Native(cqlvalue.Int), "idx("+c.name+")")
	case c.typ.Kind == cqlvalue.Set && isMultiCell(c.typ):
		typeMarkers(p, t, k, c.typ.Elems[0], "key("+c.name+")")
	default:
		return cql.Invalid(fault.Pos{}, "Invalid element access on column %s of type %s", c.name, c.typ.String())
	}
	return nil
}

// isMultiCell reports whether a column of type t is a non-frozen collection, which UPDATE
// changes element by element.
func isMultiCell(t *cqlvalue.Type) bool {
	return (t.Kind == cqlvalue.List || t.Kind == cqlvalue.Set || t.Kind == cqlvalue.Map) && !t.Frozen
}

// finish checks the key restrictions and the clauses every write has.
func (wp *writePlan) finish(p *Prepared) error {
	t := wp.t
	if wp.using.TTL != nil {
		typeMarkers(p, t, wp.using.TTL, cqlvalue.Native(cqlvalue.Int), "[ttl]")
	}
	if wp.using.Timestamp != nil {
		typeMarkers(p, t, wp.using.Timestamp, cqlvalue.Native(cqlvalue.Bigint), "[timestamp]")
	}
	for _, c := range wp.conds {
		col := t.byName[c.Column]
		if col == nil {
			return undefinedColumn(c.Column)
		}
		if col.kind == partitionKey || col.kind == clustering {
			return cql.Invalid(fault.Pos{}, "PRIMARY KEY column '%s' cannot have IF conditions", col.name)
		}
		typ := col.typ
		if c.Key != nil {
			if err := typeElementKey(p, t, col, c.Key); err != nil {
				return err
			}
			typ = elemType(typ, len(typ.Elems)-1)
		}
		for _, v := range c.In {
			typeMarkers(p, t, v, typ, col.name)
		}
		if c.Op == cql.OpIn && c.In == nil {
			typeMarkers(p, t, c.Value, cqlvalue.ListOf(typ), col.name)
		} else {
			typeMarkers(p, t, c.Value, typ, col.name)
		}
	}
	if len(wp.w.token) > 0 || len(wp.w.tuples) > 0 {
		return cql.Invalid(fault.Pos{}, "Only equality and IN relations on the primary key are allowed in a modification statement")
	}
	if len(wp.w.filters) > 0 {
		f := wp.w.filters[0]
		if f.col.kind == partitionKey || f.col.kind == clustering {
			return cql.Invalid(fault.Pos{}, "Invalid operator %s for PRIMARY KEY part %s", f.rel.Op, f.col.name)
		}
		return cql.Invalid(fault.Pos{}, "Non PRIMARY KEY columns found in where clause: %s ", f.col.name)
	}
	for _, c := range t.pk {
		if !wp.w.cols[c.name].single() {
			return cql.Invalid(fault.Pos{}, "Some partition key parts are missing: %s", c.name)
		}
	}
	wp.staticOnly = len(wp.sets)+len(wp.dels) > 0
	for _, a := range wp.sets {
		wp.staticOnly = wp.staticOnly && a.col.kind == static
	}
	for _, d := range wp.dels {
		wp.staticOnly = wp.staticOnly && wp.t.byName[d.Column].kind == static
	}
	for _, c := range wp.conds {
		wp.staticOnly = wp.staticOnly && wp.t.byName[c.Column].kind == static
	}
	// The clustering columns: all of them, by equality or IN, except for a DELETE of rows
	// (a prefix, then maybe a slice) and a write of static columns alone (none).
	seen := 0
	for _, c := range t.ck {
		r := wp.w.cols[c.name]
		if r == nil {
			break
		}
		seen++
		if r.slice() && !(wp.del && len(wp.dels) == 0) {
			return cql.Invalid(fault.Pos{}, "Invalid operator for PRIMARY KEY part %s: only equality and IN are allowed when writing a row", c.name)
		}
		if r.slice() {
			break
		}
	}
	for _, c := range t.ck[min(seen, len(t.ck)):] {
		if wp.w.cols[c.name] != nil {
			return cql.Invalid(fault.Pos{}, "PRIMARY KEY column \"%s\" cannot be restricted as preceding column \"%s\" is not restricted", c.name, t.ck[seen-1+boolInt(seen == 0)].name)
		}
	}
	full := seen == len(t.ck) && (len(t.ck) == 0 || !wp.w.cols[t.ck[len(t.ck)-1].name].slice())
	switch {
	case wp.staticOnly && seen > 0 && !wp.insert:
		return cql.Invalid(fault.Pos{}, "Invalid restrictions on clustering columns since the %s statement modifies only static columns", stmtName(wp))
	case wp.staticOnly:
	case wp.del && len(wp.dels) == 0:
		if wp.conditional() && !full {
			return cql.Invalid(fault.Pos{}, "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF conditions")
		}
	case !full:
		missing := t.ck[min(seen, len(t.ck)-1)].name
		return cql.Invalid(fault.Pos{}, "Some clustering keys are missing: %s", missing)
	}
	if wp.conditional() {
		for _, c := range append(slices.Clone(t.pk), t.ck...) {
			if r := wp.w.cols[c.name]; r != nil && (r.in != nil || r.inList != nil) {
				return cql.Invalid(fault.Pos{}, "IN on the primary key is not supported in conditional statements")
			}
		}
		if t.counter {
			return cql.Invalid(fault.Pos{}, "Conditional updates are not supported on counter tables")
		}
	}
	if wp.using.TTL != nil && t.counter {
		return cql.Invalid(fault.Pos{}, "A TTL may not be set on counter tables")
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func stmtName(wp *writePlan) string {
	switch {
	case wp.insert:
		return "INSERT"
	case wp.del:
		return "DELETE"
	}
	return "UPDATE"
}

// pkIndices is where each partition key column's marker is among the markers, when each is
// bound by a marker of its own (so that drivers can compute the token), and nil otherwise.
func pkIndices(t *table, w *where) []uint16 {
	var out []uint16
	for _, c := range t.pk {
		r := w.cols[c.name]
		if r == nil {
			return nil
		}
		m, ok := r.eq.(*cql.BindMarker)
		if !ok {
			return nil
		}
		out = append(out, uint16(m.Index))
	}
	return out
}

// lwtColumns is the result a conditional write announces: [applied], then the columns it
// may show when it did not apply.
func lwtColumns(wp *writePlan) []Column {
	cols := []Column{{Keyspace: wp.t.ks, Table: wp.t.name, Name: "[applied]", Type: cqlvalue.Native(cqlvalue.Boolean)}}
	return cols
}

// sortValues sorts values of type t in Cassandra's order.
func sortValues(t *cqlvalue.Type, vs [][]byte) {
	sort.SliceStable(vs, func(i, j int) bool { return cqlvalue.Compare(t, vs[i], vs[j]) < 0 })
}

// executeWrite runs a prepared INSERT, UPDATE or DELETE.
func (x *Executor) executeWrite(s *Session, p *Prepared, o Options) (*Result, error) {
	b, err := newBinder(p, o.Values, o.Names)
	if err != nil {
		return nil, err
	}
	wp := p.plan.(*writePlan)
	if err := x.fresh(wp.t); err != nil {
		return nil, err
	}
	ts, err := x.writeTime(b, wp.using, o)
	if err != nil {
		return nil, err
	}
	muts, err := x.mutations(b, wp, ts)
	if err != nil {
		return nil, err
	}
	return x.apply(o.ctx(), wp.t, muts, wp.conditional())
}

// fresh refuses a statement prepared against a table that has since changed or gone: the
// front end tells the driver to prepare it again.
func (x *Executor) fresh(t *table) error {
	sch, err := x.schema()
	if err != nil {
		return err
	}
	ks := sch.keyspaces[t.ks]
	if ks == nil {
		return fault.New(fault.BadRequest, "Keyspace %s does not exist", t.ks)
	}
	cur := ks.tables[t.name]
	if cur == nil {
		return fault.New(fault.BadRequest, "table %s does not exist", t.name)
	}
	if cur.meta.ID != t.meta.ID || cur.meta.Gen != t.meta.Gen {
		return fault.New(fault.Gone, "The table %s.%s changed since the statement was prepared", t.ks, t.name)
	}
	return nil
}

// writeTime is a write's timestamp: USING TIMESTAMP, else the client's, else the server's.
func (x *Executor) writeTime(b *binder, u cql.Using, o Options) (int64, error) {
	if u.Timestamp != nil {
		ts, ok, err := b.int(u.Timestamp, cqlvalue.Native(cqlvalue.Bigint), "[timestamp]")
		if err != nil {
			return 0, err
		}
		if ok {
			return ts, nil
		}
	}
	if o.HasTimestamp {
		return o.Timestamp, nil
	}
	return x.timestamp(), nil
}

// engineTable is the engine's container of t.
func (x *Executor) engineTable(t *table) (*engine.Container, error) {
	return x.eng.Table(t.ks, t.name)
}
