package cql

import "github.com/partita-db/partita/internal/fault"

// Statement is one parsed CQL statement. String prints its canonical form (format.go), which
// parses back to the same tree.
type Statement interface {
	// Start is where the statement begins in the text it was parsed from.
	Start() fault.Pos
	// Markers are the statement's bind markers in the order they appear, numbered from 0; for
	// a batch, those of all its statements.
	Markers() []*BindMarker
	String() string
	setMarkers([]*BindMarker)
}

// base holds what every statement has.
type base struct {
	Pos  fault.Pos
	Bind []*BindMarker
}

func (b *base) Start() fault.Pos           { return b.Pos }
func (b *base) Markers() []*BindMarker     { return b.Bind }
func (b *base) setMarkers(m []*BindMarker) { b.Bind = m }

// TableName names a table, optionally qualified by its keyspace.
type TableName struct {
	Keyspace string // empty when the statement relies on the session's keyspace (USE)
	Name     string
}

// Option is one `name = value` of a WITH clause; Value is a constant or a map literal.
type Option struct {
	Name  string // lower case unless quoted
	Value Term
}

// Options are a WITH clause's options in the order written; names are unique.
type Options []Option

// Get returns the value of the option name, or nil.
func (o Options) Get(name string) Term {
	for _, opt := range o {
		if opt.Name == name {
			return opt.Value
		}
	}
	return nil
}

// Using holds USING TTL and USING TIMESTAMP; nil fields were not given.
type Using struct {
	TTL       Term // an integer constant or a bind marker
	Timestamp Term // an integer constant (microseconds) or a bind marker
}

// Ordering is a column with a direction, in CLUSTERING ORDER BY and ORDER BY.
type Ordering struct {
	Column string
	Desc   bool
}

// Schema statements.

// Use is USE keyspace.
type Use struct {
	base
	Keyspace string
}

// CreateKeyspace is CREATE KEYSPACE [IF NOT EXISTS] name WITH options.
type CreateKeyspace struct {
	base
	IfNotExists bool
	Name        string
	Options     Options // replication (a map) and durable_writes, unchecked here
}

// AlterKeyspace is ALTER KEYSPACE name WITH options.
type AlterKeyspace struct {
	base
	Name    string
	Options Options
}

// DropKeyspace is DROP KEYSPACE [IF EXISTS] name.
type DropKeyspace struct {
	base
	IfExists bool
	Name     string
}

// ColumnDef is one column of CREATE TABLE or ALTER TABLE ADD (or a field of CREATE TYPE).
type ColumnDef struct {
	Name   string
	Type   *Type
	Static bool
}

// CreateTable is CREATE TABLE. A column declared `PRIMARY KEY` inline is recorded as the whole
// partition key, exactly as PRIMARY KEY (col) would be; the statement has exactly one primary
// key declaration (two is a syntax error here).
type CreateTable struct {
	base
	IfNotExists     bool
	Table           TableName
	Columns         []ColumnDef
	PartitionKey    []string   // at least one column
	Clustering      []string   // the clustering columns, in order; may be empty
	ClusteringOrder []Ordering // WITH CLUSTERING ORDER BY, as written; may be empty
	CompactStorage  bool       // WITH COMPACT STORAGE
	Options         Options    // the other WITH options (cosmosdb_provisioned_throughput, ...)
}

// AlterKind says what an ALTER TABLE does.
type AlterKind uint8

const (
	AlterAdd  AlterKind = iota // ADD columns
	AlterDrop                  // DROP columns
	AlterWith                  // WITH options
)

// AlterTable is ALTER TABLE t ADD ... | DROP ... | WITH ...
type AlterTable struct {
	base
	Table   TableName
	Kind    AlterKind
	Add     []ColumnDef // for AlterAdd, at least one
	Drop    []string    // for AlterDrop, at least one
	Options Options     // for AlterWith, at least one
}

// DropTable is DROP TABLE [IF EXISTS] t.
type DropTable struct {
	base
	IfExists bool
	Table    TableName
}

// Truncate is TRUNCATE [TABLE] t.
type Truncate struct {
	base
	Table TableName
}

// Describe is DESCRIBE (or DESC), which Cassandra 4.0 serves: a list of the schema's objects
// of a kind, or the statements that create one object and what it holds.
type Describe struct {
	base
	What DescribeWhat
	// Name is the object described: a keyspace in Name.Name for DescribeKeyspace (empty for
	// the session's), [keyspace.]name for the other single objects; empty for the lists,
	// CLUSTER and SCHEMA.
	Name TableName
	// Full is DESCRIBE FULL SCHEMA (the system keyspaces too), Only DESCRIBE ONLY KEYSPACE
	// (not what it holds), Internals WITH INTERNALS.
	Full, Only, Internals bool
}

// DescribeWhat is what a DESCRIBE describes.
type DescribeWhat uint8

const (
	DescribeCluster DescribeWhat = iota
	DescribeSchema
	DescribeKeyspaces
	DescribeKeyspace
	DescribeTables
	DescribeTable
	DescribeTypes
	DescribeType
	DescribeFunctions
	DescribeFunction
	DescribeAggregates
	DescribeAggregate
	DescribeIndex
	DescribeView
	DescribeObject // DESCRIBE [keyspace.]name: a keyspace, table, index or view, in that order
)

// IndexTarget says what of a column CREATE INDEX indexes.
type IndexTarget uint8

const (
	IndexValues  IndexTarget = iota // the column, or values(c) of a collection
	IndexKeys                       // keys(m)
	IndexEntries                    // entries(m)
	IndexFull                       // full(frozen collection)
)

// CreateIndex is CREATE [CUSTOM] INDEX [IF NOT EXISTS] [name] ON t (target) [USING 'class'].
// It is parsed so that it can be refused by name; Partita does not build secondary indexes on
// CQL tables.
type CreateIndex struct {
	base
	IfNotExists bool
	Name        string // empty when not given
	Table       TableName
	Column      string
	Target      IndexTarget
	Custom      string // the class of USING, for CREATE CUSTOM INDEX
}

// DropIndex is DROP INDEX [IF EXISTS] [ks.]name.
type DropIndex struct {
	base
	IfExists bool
	Name     TableName // an index name, qualified like a table's
}

// CreateType is CREATE TYPE [IF NOT EXISTS] [ks.]name (field type, ...); parsed, refused later.
type CreateType struct {
	base
	IfNotExists bool
	Name        TableName
	Fields      []ColumnDef // Static is always false
}

// DropType is DROP TYPE [IF EXISTS] [ks.]name.
type DropType struct {
	base
	IfExists bool
	Name     TableName
}

// Data statements.

// Insert is INSERT INTO t (columns) VALUES (values) or INSERT INTO t JSON 'json'.
type Insert struct {
	base
	Table   TableName
	Columns []string // with Values, as many as Values; empty with JSON
	Values  []Term
	// JSON, when not nil, is the JSON document (a string constant or a bind marker);
	// JSONDefaultUnset is DEFAULT UNSET (DEFAULT NULL, the default, is not recorded).
	JSON             Term
	JSONDefaultUnset bool
	IfNotExists      bool
	Using            Using
}

// AssignOp says how an UPDATE assignment changes its column.
type AssignOp uint8

const (
	AssignSet     AssignOp = iota // c = v, or c[k] = v with Key
	AssignAdd                     // c = c + v (counter increment, list append, set/map add); also c += v
	AssignSub                     // c = c - v (counter decrement, list/set removal); also c -= v
	AssignPrepend                 // c = v + c (list prepend)
)

// Assignment is one SET clause item of UPDATE.
type Assignment struct {
	Column string
	Key    Term // for c[k] = v: the map key or list index; nil otherwise (only with AssignSet)
	Op     AssignOp
	Value  Term
}

// Condition is one IF condition of a lightweight transaction: Column[Key] Op Value.
type Condition struct {
	Column string
	Key    Term // for c[k] conditions; nil otherwise
	Op     Operator
	Value  Term   // for every operator but IN with a list
	In     []Term // for IN (v, ...); nil for IN ?
}

// Update is UPDATE t [USING ...] SET ... WHERE ... [IF EXISTS | IF conditions].
type Update struct {
	base
	Table      TableName
	Using      Using
	Set        []Assignment // at least one
	Where      []Relation   // at least one
	IfExists   bool
	Conditions []Condition
}

// Deletion is one column (or element c[k]) of DELETE.
type Deletion struct {
	Column string
	Key    Term // nil for the whole column
}

// Delete is DELETE [columns] FROM t [USING TIMESTAMP t] WHERE ... [IF EXISTS | IF conditions].
type Delete struct {
	base
	Columns    []Deletion // empty deletes rows
	Table      TableName
	Using      Using // only Timestamp is allowed
	Where      []Relation
	IfExists   bool
	Conditions []Condition
}

// Select is SELECT.
type Select struct {
	base
	JSON              bool
	Distinct          bool
	Star              bool       // SELECT *; Selectors is then empty
	Selectors         []Selector // otherwise at least one
	Table             TableName
	Where             []Relation
	GroupBy           []string
	OrderBy           []Ordering
	PerPartitionLimit Term // an integer constant or a bind marker; nil when not given
	Limit             Term // likewise
	AllowFiltering    bool
}

// BatchKind is the kind of a batch.
type BatchKind uint8

const (
	BatchLogged BatchKind = iota
	BatchUnlogged
	BatchCounter
)

// Batch is BEGIN [UNLOGGED | COUNTER] BATCH [USING TIMESTAMP t] statements APPLY BATCH.
type Batch struct {
	base
	Kind       BatchKind
	Using      Using       // only Timestamp is allowed
	Statements []Statement // each an *Insert, *Update or *Delete
}

// Selectors.

// Selector is one item of a SELECT list.
type Selector struct {
	Expr  Selectable
	Alias string // empty when there is no AS
}

// Selectable is what a selector computes: *ColumnRef, *FuncSelector, *CastSelector or
// *TermSelector.
type Selectable interface{ selectable() }

// ColumnRef is a column selected by name.
type ColumnRef struct{ Name string }

// FuncSelector is a function applied in a SELECT list: token(a, b), writetime(c), ttl(c),
// count(*), now(), toTimestamp(now()), min(c), ... Name is lower case unless quoted.
type FuncSelector struct {
	Keyspace string
	Name     string
	Star     bool // count(*); Args is then empty
	Args     []Selectable
}

// CastSelector is CAST(expr AS type).
type CastSelector struct {
	Expr Selectable
	Type *Type
}

// TermSelector is a constant or bind marker in a SELECT list (the 1 of COUNT(1)).
type TermSelector struct{ Term Term }

func (*ColumnRef) selectable()    {}
func (*FuncSelector) selectable() {}
func (*CastSelector) selectable() {}
func (*TermSelector) selectable() {}

// Relations.

// Operator is a comparison in a WHERE relation or an IF condition.
type Operator uint8

const (
	OpEq Operator = iota
	OpLt
	OpLe
	OpGt
	OpGe
	OpNe
	OpIn
	OpContains
	OpContainsKey
	OpLike
	OpIsNotNull // col IS NOT NULL (materialized views); Value is nil
)

var operatorText = [...]string{
	OpEq: "=", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=", OpNe: "!=", OpIn: "IN",
	OpContains: "CONTAINS", OpContainsKey: "CONTAINS KEY", OpLike: "LIKE", OpIsNotNull: "IS NOT NULL",
}

func (o Operator) String() string { return operatorText[o] }

// RelationKind says what the left side of a relation is.
type RelationKind uint8

const (
	RelColumn RelationKind = iota // c op v
	RelTuple                      // (c1, c2) op (v1, v2) or IN ((..), ..)
	RelToken                      // token(c1, ...) op v
)

// Relation is one restriction of a WHERE clause; a clause is the AND of its relations.
type Relation struct {
	Kind    RelationKind
	Columns []string // one for RelColumn, one or more for RelTuple and RelToken
	Op      Operator
	Value   Term   // the right side; nil for IN with a list, and for IS NOT NULL
	In      []Term // for IN (v, ...); for a tuple relation each is a *Tuple or a bind marker
}

// Terms.

// Term is a value in a statement: *Constant, *Null, *BindMarker, *List, *Set, *Map, *Tuple,
// *FuncCall or *TypeHint.
type Term interface{ term() }

// ConstKind says what kind of literal a Constant is.
type ConstKind uint8

const (
	ConstString   ConstKind = iota // Text is the decoded string
	ConstInteger                   // Text is the digits, with a leading '-' when negative
	ConstFloat                     // Text as written (1.5e3, -2.0, NaN, Infinity, -Infinity)
	ConstBool                      // Text is "true" or "false"
	ConstHex                       // Text is 0x followed by lower-case hex digits
	ConstUUID                      // Text is the lower-case UUID
	ConstDuration                  // Text is the lower-case duration (1h30m), '-' when negative
)

// Constant is a literal.
type Constant struct {
	Kind ConstKind
	Text string
}

// Null is NULL.
type Null struct{}

// BindMarker is ? or :name. Index counts the markers of a statement from 0 in text order.
type BindMarker struct {
	Index int
	Name  string // empty for ?
	Pos   fault.Pos
}

// List is [a, b].
type List struct{ Elems []Term }

// Set is {a, b}. The empty literal {} is parsed as an empty Map, since it cannot be told apart;
// the analyzer reads it as whichever the column is.
type Set struct{ Elems []Term }

// Map is {k: v, ...}.
type Map struct{ Entries []MapEntry }

// MapEntry is one k: v of a map literal.
type MapEntry struct{ Key, Value Term }

// Tuple is (a, b), also the right side of tuple relations.
type Tuple struct{ Elems []Term }

// FuncCall is a function call used as a value: now(), uuid(), toTimestamp(now()), ...
type FuncCall struct {
	Keyspace string
	Name     string
	Args     []Term
}

// TypeHint is (type) term, as in (int) ?.
type TypeHint struct {
	Type *Type
	Term Term
}

func (*Constant) term()   {}
func (*Null) term()       {}
func (*BindMarker) term() {}
func (*List) term()       {}
func (*Set) term()        {}
func (*Map) term()        {}
func (*Tuple) term()      {}
func (*FuncCall) term()   {}
func (*TypeHint) term()   {}
