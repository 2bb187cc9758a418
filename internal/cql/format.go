package cql

import (
	"strings"
)

// The canonical form of a statement: keywords in upper case, names quoted only when they must
// be, strings in single quotes, one space between tokens, every optional default spelled out
// the same way. Parsing the canonical form gives the same tree (positions aside), which the
// tests and the fuzzer check.

// quoteIdent prints a name bare when it reads back unchanged (lower case, a letter first, not a
// reserved keyword, not a literal word), quoted otherwise.
func quoteIdent(s string) string {
	bare := s != "" && isLetter(s[0]) && !reserved(s)
	for i := 0; bare && i < len(s); i++ {
		c := s[i]
		bare = c >= 'a' && c <= 'z' || isDigit(c) || c == '_'
	}
	if bare {
		switch s {
		case "true", "false", "nan", "infinity":
			bare = false
		}
		// A bare word that lexes as a UUID or a duration would not read back as a name.
		if uuidLen(s) > 0 {
			bare = false
		}
	}
	if bare {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// QuoteIdent is a name as CQL text: bare when it reads back unchanged, quoted otherwise.
func QuoteIdent(s string) string { return quoteIdent(s) }

// QuoteString is a string literal of CQL.
func QuoteString(s string) string { return quoteString(s) }

type printer struct{ strings.Builder }

func (w *printer) ws(parts ...string) {
	for _, s := range parts {
		w.WriteString(s)
	}
}

func (w *printer) table(n TableName) {
	if n.Keyspace != "" {
		w.ws(quoteIdent(n.Keyspace), ".")
	}
	w.WriteString(quoteIdent(n.Name))
}

func (w *printer) names(names []string) {
	for i, n := range names {
		if i > 0 {
			w.WriteString(", ")
		}
		w.WriteString(quoteIdent(n))
	}
}

func (w *printer) terms(ts []Term) {
	for i, t := range ts {
		if i > 0 {
			w.WriteString(", ")
		}
		w.term(t)
	}
}

func (w *printer) term(t Term) {
	switch t := t.(type) {
	case *Constant:
		if t.Kind == ConstString {
			w.WriteString(quoteString(t.Text))
		} else {
			w.WriteString(t.Text)
		}
	case *Null:
		w.WriteString("NULL")
	case *BindMarker:
		if t.Name != "" {
			w.ws(":", quoteIdent(t.Name))
		} else {
			w.WriteString("?")
		}
	case *List:
		w.WriteString("[")
		w.terms(t.Elems)
		w.WriteString("]")
	case *Set:
		w.WriteString("{")
		w.terms(t.Elems)
		w.WriteString("}")
	case *Map:
		w.WriteString("{")
		for i, e := range t.Entries {
			if i > 0 {
				w.WriteString(", ")
			}
			w.term(e.Key)
			w.WriteString(": ")
			w.term(e.Value)
		}
		w.WriteString("}")
	case *Tuple:
		w.WriteString("(")
		w.terms(t.Elems)
		w.WriteString(")")
	case *FuncCall:
		w.funcName(t.Keyspace, t.Name)
		w.WriteString("(")
		w.terms(t.Args)
		w.WriteString(")")
	case *TypeHint:
		w.ws("(", t.Type.String(), ") ")
		w.term(t.Term)
	}
}

func (w *printer) funcName(ks, name string) {
	if ks != "" {
		w.ws(quoteIdent(ks), ".")
	}
	switch {
	case name == "token" && ks == "":
		w.WriteString("token")
		return
	case name == "cast" && ks == "":
		w.WriteString(`"cast"`) // bare, cast( would read as CAST(x AS type)
		return
	}
	w.WriteString(quoteIdent(name))
}

// String prints a type as CQL writes it: int, list<text>, map<text, frozen<list<int>>>.
func (t *Type) String() string {
	args := func(name string) string {
		parts := make([]string, len(t.Args))
		for i, a := range t.Args {
			parts[i] = a.String()
		}
		return name + "<" + strings.Join(parts, ", ") + ">"
	}
	switch t.Kind {
	case TypeNative:
		return t.Name
	case TypeList:
		return args("list")
	case TypeSet:
		return args("set")
	case TypeMap:
		return args("map")
	case TypeTuple:
		return args("tuple")
	case TypeFrozen:
		return args("frozen")
	}
	if t.Keyspace != "" {
		return quoteIdent(t.Keyspace) + "." + quoteIdent(t.Name)
	}
	return quoteTypeName(t.Name)
}

// quoteTypeName quotes a user type's name also when it would read as a native or collection type.
func quoteTypeName(s string) string {
	switch {
	case nativeTypes[s], s == "list", s == "set", s == "map", s == "tuple", s == "frozen":
		return `"` + s + `"`
	}
	return quoteIdent(s)
}

func (w *printer) options(opts Options) {
	for i, o := range opts {
		if i > 0 {
			w.WriteString(" AND ")
		}
		w.ws(quoteIdent(o.Name), " = ")
		w.term(o.Value)
	}
}

func (w *printer) using(u Using) {
	if u.TTL == nil && u.Timestamp == nil {
		return
	}
	w.WriteString(" USING ")
	if u.TTL != nil {
		w.WriteString("TTL ")
		w.term(u.TTL)
		if u.Timestamp != nil {
			w.WriteString(" AND ")
		}
	}
	if u.Timestamp != nil {
		w.WriteString("TIMESTAMP ")
		w.term(u.Timestamp)
	}
}

func (w *printer) where(rs []Relation) {
	if len(rs) == 0 {
		return
	}
	w.WriteString(" WHERE ")
	for i, r := range rs {
		if i > 0 {
			w.WriteString(" AND ")
		}
		switch r.Kind {
		case RelColumn:
			w.WriteString(quoteIdent(r.Columns[0]))
		case RelTuple:
			w.WriteString("(")
			w.names(r.Columns)
			w.WriteString(")")
		case RelToken:
			w.WriteString("token(")
			w.names(r.Columns)
			w.WriteString(")")
		}
		w.ws(" ", r.Op.String())
		w.rhs(r.Op, r.Value, r.In)
	}
}

// rhs prints the right side of a relation or condition.
func (w *printer) rhs(op Operator, v Term, in []Term) {
	switch {
	case op == OpIsNotNull:
	case op == OpIn && v == nil:
		w.WriteString(" (")
		w.terms(in)
		w.WriteString(")")
	default:
		w.WriteString(" ")
		w.term(v)
	}
}

func (w *printer) conditions(ifExists bool, cs []Condition) {
	if ifExists {
		w.WriteString(" IF EXISTS")
		return
	}
	for i, c := range cs {
		if i == 0 {
			w.WriteString(" IF ")
		} else {
			w.WriteString(" AND ")
		}
		w.WriteString(quoteIdent(c.Column))
		if c.Key != nil {
			w.WriteString("[")
			w.term(c.Key)
			w.WriteString("]")
		}
		w.ws(" ", c.Op.String())
		w.rhs(c.Op, c.Value, c.In)
	}
}

func (w *printer) orderings(os []Ordering) {
	for i, o := range os {
		if i > 0 {
			w.WriteString(", ")
		}
		w.WriteString(quoteIdent(o.Column))
		if o.Desc {
			w.WriteString(" DESC")
		} else {
			w.WriteString(" ASC")
		}
	}
}

func (w *printer) columnDefs(cs []ColumnDef) {
	for i, c := range cs {
		if i > 0 {
			w.WriteString(", ")
		}
		w.ws(quoteIdent(c.Name), " ", c.Type.String())
		if c.Static {
			w.WriteString(" STATIC")
		}
	}
}

func (w *printer) selectable(s Selectable) {
	switch s := s.(type) {
	case *ColumnRef:
		w.WriteString(quoteIdent(s.Name))
	case *FuncSelector:
		w.funcName(s.Keyspace, s.Name)
		w.WriteString("(")
		if s.Star {
			w.WriteString("*")
		}
		for i, a := range s.Args {
			if i > 0 {
				w.WriteString(", ")
			}
			w.selectable(a)
		}
		w.WriteString(")")
	case *CastSelector:
		w.WriteString("CAST(")
		w.selectable(s.Expr)
		w.ws(" AS ", s.Type.String(), ")")
	case *TermSelector:
		w.term(s.Term)
	}
}

func ifNotExists(b bool) string {
	if b {
		return "IF NOT EXISTS "
	}
	return ""
}

func ifExists(b bool) string {
	if b {
		return "IF EXISTS "
	}
	return ""
}

func (s *Use) String() string { return "USE " + quoteIdent(s.Keyspace) }

func (s *CreateKeyspace) String() string {
	var w printer
	w.ws("CREATE KEYSPACE ", ifNotExists(s.IfNotExists), quoteIdent(s.Name), " WITH ")
	w.options(s.Options)
	return w.String()
}

func (s *AlterKeyspace) String() string {
	var w printer
	w.ws("ALTER KEYSPACE ", quoteIdent(s.Name), " WITH ")
	w.options(s.Options)
	return w.String()
}

func (s *DropKeyspace) String() string {
	return "DROP KEYSPACE " + ifExists(s.IfExists) + quoteIdent(s.Name)
}

func (s *CreateTable) String() string {
	var w printer
	w.ws("CREATE TABLE ", ifNotExists(s.IfNotExists))
	w.table(s.Table)
	w.WriteString(" (")
	w.columnDefs(s.Columns)
	if len(s.Columns) > 0 {
		w.WriteString(", ")
	}
	w.WriteString("PRIMARY KEY (")
	if len(s.PartitionKey) == 1 {
		w.WriteString(quoteIdent(s.PartitionKey[0]))
	} else {
		w.WriteString("(")
		w.names(s.PartitionKey)
		w.WriteString(")")
	}
	for _, c := range s.Clustering {
		w.ws(", ", quoteIdent(c))
	}
	w.WriteString("))")
	sep := " WITH "
	if s.ClusteringOrder != nil {
		w.ws(sep, "CLUSTERING ORDER BY (")
		w.orderings(s.ClusteringOrder)
		w.WriteString(")")
		sep = " AND "
	}
	if s.CompactStorage {
		w.ws(sep, "COMPACT STORAGE")
		sep = " AND "
	}
	if len(s.Options) > 0 {
		w.WriteString(sep)
		w.options(s.Options)
	}
	return w.String()
}

func (s *AlterTable) String() string {
	var w printer
	w.WriteString("ALTER TABLE ")
	w.table(s.Table)
	switch s.Kind {
	case AlterAdd:
		w.WriteString(" ADD (")
		w.columnDefs(s.Add)
		w.WriteString(")")
	case AlterDrop:
		w.WriteString(" DROP (")
		w.names(s.Drop)
		w.WriteString(")")
	case AlterWith:
		w.WriteString(" WITH ")
		w.options(s.Options)
	}
	return w.String()
}

func (s *DropTable) String() string {
	var w printer
	w.ws("DROP TABLE ", ifExists(s.IfExists))
	w.table(s.Table)
	return w.String()
}

func (s *Truncate) String() string {
	var w printer
	w.WriteString("TRUNCATE TABLE ")
	w.table(s.Table)
	return w.String()
}

func (s *CreateIndex) String() string {
	var w printer
	w.WriteString("CREATE ")
	if s.Custom != "" {
		w.WriteString("CUSTOM ")
	}
	w.ws("INDEX ", ifNotExists(s.IfNotExists))
	if s.Name != "" {
		w.ws(quoteIdent(s.Name), " ")
	}
	w.WriteString("ON ")
	w.table(s.Table)
	w.WriteString(" (")
	target := [...]string{IndexValues: "", IndexKeys: "KEYS", IndexEntries: "ENTRIES", IndexFull: "FULL"}[s.Target]
	if target != "" {
		w.ws(target, "(", quoteIdent(s.Column), ")")
	} else {
		w.WriteString(quoteIdent(s.Column))
	}
	w.WriteString(")")
	if s.Custom != "" {
		w.ws(" USING ", quoteString(s.Custom))
	}
	return w.String()
}

func (s *DropIndex) String() string {
	var w printer
	w.ws("DROP INDEX ", ifExists(s.IfExists))
	w.table(s.Name)
	return w.String()
}

func (s *CreateType) String() string {
	var w printer
	w.ws("CREATE TYPE ", ifNotExists(s.IfNotExists))
	w.table(s.Name)
	w.WriteString(" (")
	w.columnDefs(s.Fields)
	w.WriteString(")")
	return w.String()
}

func (s *DropType) String() string {
	var w printer
	w.ws("DROP TYPE ", ifExists(s.IfExists))
	w.table(s.Name)
	return w.String()
}

func (s *Insert) String() string {
	var w printer
	w.WriteString("INSERT INTO ")
	w.table(s.Table)
	if s.JSON != nil {
		w.WriteString(" JSON ")
		w.term(s.JSON)
		if s.JSONDefaultUnset {
			w.WriteString(" DEFAULT UNSET")
		}
	} else {
		w.WriteString(" (")
		w.names(s.Columns)
		w.WriteString(") VALUES (")
		w.terms(s.Values)
		w.WriteString(")")
	}
	if s.IfNotExists {
		w.WriteString(" IF NOT EXISTS")
	}
	w.using(s.Using)
	return w.String()
}

func (s *Update) String() string {
	var w printer
	w.WriteString("UPDATE ")
	w.table(s.Table)
	w.using(s.Using)
	w.WriteString(" SET ")
	for i, a := range s.Set {
		if i > 0 {
			w.WriteString(", ")
		}
		c := quoteIdent(a.Column)
		w.WriteString(c)
		if a.Key != nil {
			w.WriteString("[")
			w.term(a.Key)
			w.WriteString("]")
		}
		w.WriteString(" = ")
		switch a.Op {
		case AssignAdd:
			w.ws(c, " + ")
		case AssignSub:
			w.ws(c, " - ")
		}
		w.term(a.Value)
		if a.Op == AssignPrepend {
			w.ws(" + ", c)
		}
	}
	w.where(s.Where)
	w.conditions(s.IfExists, s.Conditions)
	return w.String()
}

func (s *Delete) String() string {
	var w printer
	w.WriteString("DELETE ")
	for i, d := range s.Columns {
		if i > 0 {
			w.WriteString(", ")
		}
		w.WriteString(quoteIdent(d.Column))
		if d.Key != nil {
			w.WriteString("[")
			w.term(d.Key)
			w.WriteString("]")
		}
	}
	if len(s.Columns) > 0 {
		w.WriteString(" ")
	}
	w.WriteString("FROM ")
	w.table(s.Table)
	w.using(s.Using)
	w.where(s.Where)
	w.conditions(s.IfExists, s.Conditions)
	return w.String()
}

func (s *Select) String() string {
	var w printer
	w.WriteString("SELECT ")
	if s.JSON {
		w.WriteString("JSON ")
	}
	if s.Distinct {
		w.WriteString("DISTINCT ")
	}
	if s.Star {
		w.WriteString("*")
	}
	for i, sel := range s.Selectors {
		if i > 0 {
			w.WriteString(", ")
		}
		w.selectable(sel.Expr)
		if sel.Alias != "" {
			w.ws(" AS ", quoteIdent(sel.Alias))
		}
	}
	w.WriteString(" FROM ")
	w.table(s.Table)
	w.where(s.Where)
	if len(s.GroupBy) > 0 {
		w.WriteString(" GROUP BY ")
		w.names(s.GroupBy)
	}
	if len(s.OrderBy) > 0 {
		w.WriteString(" ORDER BY ")
		w.orderings(s.OrderBy)
	}
	if s.PerPartitionLimit != nil {
		w.WriteString(" PER PARTITION LIMIT ")
		w.term(s.PerPartitionLimit)
	}
	if s.Limit != nil {
		w.WriteString(" LIMIT ")
		w.term(s.Limit)
	}
	if s.AllowFiltering {
		w.WriteString(" ALLOW FILTERING")
	}
	return w.String()
}

func (s *Batch) String() string {
	var w printer
	w.WriteString("BEGIN ")
	switch s.Kind {
	case BatchUnlogged:
		w.WriteString("UNLOGGED ")
	case BatchCounter:
		w.WriteString("COUNTER ")
	}
	w.WriteString("BATCH")
	w.using(s.Using)
	for _, st := range s.Statements {
		w.ws(" ", st.String(), ";")
	}
	w.WriteString(" APPLY BATCH")
	return w.String()
}

func (s *Describe) String() string {
	var w printer
	w.WriteString("DESCRIBE ")
	switch s.What {
	case DescribeCluster:
		w.WriteString("CLUSTER")
	case DescribeSchema:
		if s.Full {
			w.WriteString("FULL ")
		}
		w.WriteString("SCHEMA")
	case DescribeKeyspaces:
		w.WriteString("KEYSPACES")
	case DescribeKeyspace:
		if s.Only {
			w.WriteString("ONLY ")
		}
		w.WriteString("KEYSPACE")
		if s.Name.Name != "" {
			w.ws(" ", quoteIdent(s.Name.Name))
		}
	case DescribeTables:
		w.WriteString("TABLES")
	case DescribeTypes:
		w.WriteString("TYPES")
	case DescribeFunctions:
		w.WriteString("FUNCTIONS")
	case DescribeAggregates:
		w.WriteString("AGGREGATES")
	default:
		w.WriteString(map[DescribeWhat]string{DescribeTable: "TABLE ", DescribeType: "TYPE ", DescribeFunction: "FUNCTION ",
			DescribeAggregate: "AGGREGATE ", DescribeIndex: "INDEX ", DescribeView: "MATERIALIZED VIEW ", DescribeObject: ""}[s.What])
		w.table(s.Name)
	}
	if s.Internals {
		w.WriteString(" WITH INTERNALS")
	}
	return w.String()
}
