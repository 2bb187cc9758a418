package cqlexec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/fault"
)

// selectPlan is a checked SELECT.
type selectPlan struct {
	t        *table
	w        *where
	items    []selItem
	distinct bool
	// aggregate marks a select list of aggregates: one row for all the rows read.
	aggregate bool
	// reverse reads each partition against its clustering order (ORDER BY reversing it).
	reverse bool
	// byPartition: the partition key is pinned (= or IN), so the read is a list of
	// partitions; otherwise it is a range of the ring, the whole of it without token().
	byPartition bool
	// filtered rows are checked one by one against w.filters (and key restrictions the read
	// cannot apply), which needs ALLOW FILTERING.
	filtered bool
	// ckFilter: the clustering restrictions are applied by filtering, not by spans.
	ckFilter bool
	// inOrdered: IN on the partition key with ORDER BY: rows of all partitions are merged
	// in clustering order, so they are read whole and sorted (no paging, as in Cassandra).
	inOrdered         bool
	limit, perPartLim cql.Term
	needStatic        bool
}

// selKind is what a select item computes.
type selKind uint8

const (
	selColumn selKind = iota
	selWritetime
	selTTL
	selToken
	selCount
	selCountCol
	selMin
	selMax
	selSum
	selAvg
	selConst
)

// selItem is one result column.
type selItem struct {
	kind selKind
	col  *column
	name string
	typ  *cqlvalue.Type
	term cql.Term // selConst: the constant, evaluated per row
}

func (x *Executor) analyzeSelect(sch *schema, s *Session, p *Prepared, st *cql.Select) error {
	p.Params = make([]Column, len(st.Markers()))
	t, err := x.selectTable(sch, s, st.Table)
	if err != nil {
		return err
	}
	if st.JSON {
		return cql.Invalid(fault.Pos{}, "SELECT JSON is not supported yet")
	}
	if len(st.GroupBy) > 0 {
		return cql.Invalid(fault.Pos{}, "GROUP BY is not supported yet")
	}
	sp := &selectPlan{t: t, distinct: st.Distinct, limit: st.Limit, perPartLim: st.PerPartitionLimit}
	if sp.w, err = parseWhere(p, t, st.Where); err != nil {
		return err
	}
	if err := sp.selectList(p, st); err != nil {
		return err
	}
	if st.Limit != nil {
		typeMarkers(p, t, st.Limit, cqlvalue.Native(cqlvalue.Int), "[limit]")
	}
	if st.PerPartitionLimit != nil {
		typeMarkers(p, t, st.PerPartitionLimit, cqlvalue.Native(cqlvalue.Int), "[per_partition_limit]")
	}
	if t.virtual == nil {
		if err := sp.plan(st); err != nil {
			return err
		}
	}
	p.plan = sp
	p.PKIndices = pkIndices(t, sp.w)
	for _, it := range sp.items {
		p.Columns = append(p.Columns, Column{Keyspace: t.ks, Table: t.name, Name: it.name, Type: it.typ})
	}
	return nil
}

// selectList checks the select list.
func (sp *selectPlan) selectList(p *Prepared, st *cql.Select) error {
	t := sp.t
	if st.Star {
		for _, c := range t.cols {
			sp.items = append(sp.items, selItem{kind: selColumn, col: c, name: c.name, typ: c.typ})
		}
		if sp.distinct {
			return cql.Invalid(fault.Pos{}, "SELECT DISTINCT queries must only request partition key columns and/or static columns (not *)")
		}
	}
	aggs, plain := 0, 0
	for _, s := range st.Selectors {
		it, err := sp.selector(p, s.Expr)
		if err != nil {
			return err
		}
		if s.Alias != "" {
			it.name = s.Alias
		}
		if it.kind >= selCount && it.kind <= selAvg {
			aggs++
		} else if it.kind != selConst {
			plain++
		}
		sp.items = append(sp.items, it)
	}
	// Beside aggregates, plain columns show the first row's values, as in Cassandra.
	sp.aggregate = aggs > 0
	for _, it := range sp.items {
		if it.col != nil && it.col.kind == static {
			sp.needStatic = true
		}
		if sp.distinct && it.kind == selColumn && it.col.kind != partitionKey && it.col.kind != static {
			return cql.Invalid(fault.Pos{}, "SELECT DISTINCT queries must only request partition key columns and/or static columns (not %s)", it.col.name)
		}
	}
	if sp.distinct {
		for _, c := range t.pk {
			if !slices.ContainsFunc(sp.items, func(it selItem) bool { return it.col == c && it.kind == selColumn }) {
				return cql.Invalid(fault.Pos{}, "SELECT DISTINCT queries must request all the partition key columns (missing %s)", c.name)
			}
		}
	}
	return nil
}

// selector checks one select item.
func (sp *selectPlan) selector(p *Prepared, e cql.Selectable) (selItem, error) {
	t := sp.t
	switch e := e.(type) {
	case *cql.ColumnRef:
		c := t.byName[e.Name]
		if c == nil {
			return selItem{}, undefinedColumn(e.Name)
		}
		return selItem{kind: selColumn, col: c, name: c.name, typ: c.typ}, nil
	case *cql.TermSelector:
		typ := cqlvalue.Native(cqlvalue.Int)
		if c, ok := e.Term.(*cql.Constant); ok && c.Kind == cql.ConstString {
			typ = cqlvalue.Native(cqlvalue.Text)
		}
		typeMarkers(p, t, e.Term, typ, "[term]")
		return selItem{kind: selConst, name: termName(e.Term), typ: typ, term: e.Term}, nil
	case *cql.CastSelector:
		return selItem{}, cql.Invalid(fault.Pos{}, "CAST is not supported yet")
	case *cql.FuncSelector:
		name := strings.ToLower(e.Name)
		if e.Keyspace != "" && e.Keyspace != "system" {
			return selItem{}, cql.Invalid(fault.Pos{}, "Unknown function %s.%s", e.Keyspace, e.Name)
		}
		if name == "count" && (e.Star || len(e.Args) == 1 && isConstOne(e.Args[0])) {
			return selItem{kind: selCount, name: "count", typ: cqlvalue.Native(cqlvalue.Bigint)}, nil
		}
		if name == "token" {
			var cols []string
			for _, a := range e.Args {
				ref, ok := a.(*cql.ColumnRef)
				if !ok {
					return selItem{}, cql.Invalid(fault.Pos{}, "token() takes the partition key columns")
				}
				cols = append(cols, ref.Name)
			}
			if err := checkTokenColumns(t, cols); err != nil {
				return selItem{}, err
			}
			return selItem{kind: selToken, name: "system.token(" + joinNames(cols) + ")", typ: cqlvalue.Native(cqlvalue.Bigint)}, nil
		}
		if len(e.Args) != 1 {
			return selItem{}, cql.Invalid(fault.Pos{}, "Invalid number of arguments in call to function %s: 1 required but %d provided", name, len(e.Args))
		}
		ref, ok := e.Args[0].(*cql.ColumnRef)
		if !ok {
			return selItem{}, cql.Invalid(fault.Pos{}, "Function %s takes a column", name)
		}
		c := t.byName[ref.Name]
		if c == nil {
			return selItem{}, undefinedColumn(ref.Name)
		}
		switch name {
		case "writetime", "ttl":
			if c.kind == partitionKey || c.kind == clustering {
				return selItem{}, cql.Invalid(fault.Pos{}, "Cannot use selection function %s on PRIMARY KEY part %s", name, c.name)
			}
			if isMultiCell(c.typ) {
				return selItem{}, cql.Invalid(fault.Pos{}, "Cannot use selection function %s on non-frozen collection %s", name, c.name)
			}
			if name == "ttl" {
				return selItem{kind: selTTL, col: c, name: "ttl(" + c.name + ")", typ: cqlvalue.Native(cqlvalue.Int)}, nil
			}
			return selItem{kind: selWritetime, col: c, name: "writetime(" + c.name + ")", typ: cqlvalue.Native(cqlvalue.Bigint)}, nil
		case "count":
			return selItem{kind: selCountCol, col: c, name: "system.count(" + c.name + ")", typ: cqlvalue.Native(cqlvalue.Bigint)}, nil
		case "min", "max":
			k := selMin
			if name == "max" {
				k = selMax
			}
			return selItem{kind: k, col: c, name: "system." + name + "(" + c.name + ")", typ: c.typ}, nil
		case "sum", "avg":
			if !isNumeric(c.typ) {
				return selItem{}, cql.Invalid(fault.Pos{}, "Invalid call to function %s, none of its type signatures match (column %s is %s)", name, c.name, c.typ.String())
			}
			k := selSum
			if name == "avg" {
				k = selAvg
			}
			return selItem{kind: k, col: c, name: "system." + name + "(" + c.name + ")", typ: c.typ}, nil
		}
		return selItem{}, cql.Invalid(fault.Pos{}, "Unknown function '%s'", e.Name)
	}
	return selItem{}, cql.Invalid(fault.Pos{}, "Unsupported selector")
}

func isConstOne(s cql.Selectable) bool {
	ts, ok := s.(*cql.TermSelector)
	if !ok {
		return false
	}
	c, ok := ts.Term.(*cql.Constant)
	return ok && c.Kind == cql.ConstInteger && c.Text == "1"
}

func termName(t cql.Term) string {
	if c, ok := t.(*cql.Constant); ok {
		return c.Text
	}
	return "[term]"
}

// isNumeric reports whether sum and avg apply to t (varint and decimal not yet).
func isNumeric(t *cqlvalue.Type) bool {
	switch t.Kind {
	case cqlvalue.Int, cqlvalue.Bigint, cqlvalue.Smallint, cqlvalue.Tinyint,
		cqlvalue.Float, cqlvalue.Double, cqlvalue.Counter:
		return true
	}
	return false
}

// errFiltering is Cassandra's refusal of a query that would filter without ALLOW FILTERING.
var errFiltering = cql.Invalid(fault.Pos{}, "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING")

// plan decides how the rows are read.
func (sp *selectPlan) plan(st *cql.Select) error {
	t, w := sp.t, sp.w
	pinned := 0
	for _, c := range t.pk {
		if w.cols[c.name].single() {
			pinned++
		}
	}
	if pinned > 0 && len(w.token) > 0 {
		return cql.Invalid(fault.Pos{}, "Columns of the partition key cannot be restricted both by token() and by their values")
	}
	sp.byPartition = pinned == len(t.pk)
	if pinned > 0 && !sp.byPartition {
		sp.filtered = true // a part of a composite partition key
	}
	if len(w.filters) > 0 {
		sp.filtered = true
		for _, f := range w.filters {
			if f.col.kind == static {
				sp.needStatic = true
			}
		}
	}
	// Clustering restrictions are spans when the partition key is pinned and they are a
	// prefix of = and IN, then at most one slice. Otherwise they are checked row by row:
	// tuple relations on a pinned partition as Cassandra serves them, without ALLOW
	// FILTERING; the rest only with it, as Cassandra requires.
	restricted, gap, afterSlice := len(w.tuples) > 0, "", ""
	var unrestricted, sliced string
	for _, c := range t.ck {
		r := w.cols[c.name]
		if r == nil {
			if unrestricted == "" {
				unrestricted = c.name
			}
			continue
		}
		restricted = true
		switch {
		case unrestricted != "" && gap == "":
			gap = fmt.Sprintf("PRIMARY KEY column \"%s\" cannot be restricted as preceding column \"%s\" is not restricted", c.name, unrestricted)
		case sliced != "" && afterSlice == "":
			afterSlice = fmt.Sprintf("Clustering column \"%s\" cannot be restricted (preceding column \"%s\" is restricted by a non-EQ relation)", c.name, sliced)
		}
		if r.slice() && sliced == "" {
			sliced = c.name
		}
	}
	mixed := len(w.tuples) > 0 && countCK(t, w) > 0
	if restricted && (!sp.byPartition || len(w.tuples) > 0 || gap != "" || afterSlice != "") {
		sp.ckFilter = true
		switch {
		case !sp.byPartition:
			sp.filtered = true
		case (gap != "" || afterSlice != "" || mixed) && !st.AllowFiltering:
			msg := gap
			if msg == "" {
				msg = afterSlice
			}
			if msg == "" {
				msg = "Mixing single column relations and multi column relations on clustering columns is not allowed"
			}
			return cql.Invalid(fault.Pos{}, "%s", msg)
		case gap != "" || afterSlice != "" || mixed:
			sp.filtered = true
		}
	}
	if sp.filtered && !st.AllowFiltering {
		return errFiltering
	}
	if sp.distinct && (restricted || len(w.filters) > 0 && !allStatic(w.filters)) {
		return cql.Invalid(fault.Pos{}, "SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns.")
	}
	if len(st.OrderBy) > 0 {
		if !sp.byPartition {
			return cql.Invalid(fault.Pos{}, "ORDER BY is only supported when the partition key is restricted by an EQ or an IN.")
		}
		reverse := false
		for i, o := range st.OrderBy {
			c := t.byName[o.Column]
			if c == nil {
				return undefinedColumn(o.Column)
			}
			if c.kind != clustering {
				return cql.Invalid(fault.Pos{}, "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got %s", c.name)
			}
			if c.pos != i {
				return cql.Invalid(fault.Pos{}, "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY")
			}
			rev := o.Desc != c.desc
			if i > 0 && rev != reverse {
				return cql.Invalid(fault.Pos{}, "Unsupported order by relation")
			}
			reverse = rev
		}
		sp.reverse = reverse
		for _, c := range t.pk {
			if r := w.cols[c.name]; r.in != nil || r.inList != nil {
				sp.inOrdered = true
			}
		}
	}
	return nil
}

// countCK is how many clustering columns single-column relations restrict.
func countCK(t *table, w *where) int {
	n := 0
	for _, c := range t.ck {
		if w.cols[c.name] != nil {
			n++
		}
	}
	return n
}

func allStatic(fs []filterRel) bool {
	for _, f := range fs {
		if f.col.kind != static {
			return false
		}
	}
	return true
}
