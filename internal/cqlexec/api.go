package cqlexec

import (
	"context"
	"net"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/engine"
)

// Session is what one client connection carries between statements.
type Session struct {
	// Keyspace is the keyspace USE chose; empty until then.
	Keyspace string
	// ReadOnly sessions (signed in with the read-only key) may only read.
	ReadOnly bool
	// Addr is the address the client connected to: system.local shows it as the node's
	// address, which drivers then connect to. Nil means 127.0.0.1.
	Addr net.IP
}

// Column describes a bind marker or a result column.
type Column struct {
	Keyspace, Table, Name string
	Type                  *cqlvalue.Type
}

// Prepared is a statement parsed and checked against the schema, ready to run with values.
// It stays valid until the schema of a table it names changes: Execute then answers with an
// error of kind Gone, and the front end tells the driver to prepare it again (UNPREPARED).
type Prepared struct {
	// ID identifies the statement among the prepared ones: the MD5 of its keyspace and text,
	// as Cassandra's is, so preparing the same text twice gives the same id.
	ID [16]byte
	// Text and Keyspace are what it was prepared from.
	Text, Keyspace string
	// Params describe the bind markers in order; PKIndices lists, in partition key order, the
	// index in Params of each partition key column's marker when every one is bound by a
	// marker (so token-aware drivers can route), and is nil otherwise.
	Params    []Column
	PKIndices []uint16
	// Columns describe a SELECT's result; nil for other statements.
	Columns []Column
	// Kind says what the statement is, for the front end's RESULT kind and logging.
	Kind Kind

	stmt cql.Statement
	plan any // the checked statement: *selectPlan, *writePlan or *batchPlan
}

// Kind sorts statements for the front end.
type Kind uint8

const (
	KindSelect Kind = iota
	KindWrite       // INSERT, UPDATE, DELETE
	KindBatch
	KindSchema // CREATE, ALTER, DROP, TRUNCATE
	KindUse
	KindDescribe // DESCRIBE: rows, read from the schema
)

// Options are how to run one statement.
type Options struct {
	// Values are the bound values, in marker order; Names, when not nil, name each value
	// (QUERY with named values) instead.
	Values []cqlvalue.Value
	Names  []string
	// PageSize bounds the rows of a SELECT's page; 0 or less returns every row.
	PageSize int
	// PagingState resumes a SELECT after the page that returned it.
	PagingState []byte
	// Timestamp, when HasTimestamp, is the client's default write timestamp (microseconds),
	// used where the statement gives none.
	Timestamp    int64
	HasTimestamp bool
	// Context is the request's: its trace goes with a write forwarded to another node (nil:
	// none).
	Context context.Context
	// Consistency is the level a SELECT reads at (the driver's consistency level, mapped by
	// the front end); 0 reads as Strong does, charged as any read.
	Consistency engine.Level
}

// ctx is o's Context, or the background one.
func (o *Options) ctx() context.Context {
	if o.Context == nil {
		return context.Background()
	}
	return o.Context
}

// ResultKind is what a statement returned.
type ResultKind uint8

const (
	ResultVoid ResultKind = iota
	ResultRows
	ResultSetKeyspace
	ResultSchemaChange
)

// Result is what running a statement returned.
type Result struct {
	Kind ResultKind
	// Columns and Rows for ResultRows; a row holds one value per column, nil for null.
	Columns []Column
	Rows    [][][]byte
	// PagingState, when not nil, resumes after this page: there may be more rows.
	PagingState []byte
	// Keyspace for ResultSetKeyspace.
	Keyspace string
	// Change for ResultSchemaChange; also sent as an event to the connections registered for
	// schema changes.
	Change SchemaChange
	// Charge is the request units the statement cost.
	Charge float64
}

// SchemaChange describes a change of the schema, as RESULT and EVENT carry it.
type SchemaChange struct {
	Change   string // CREATED, UPDATED or DROPPED
	Target   string // KEYSPACE, TABLE or TYPE
	Keyspace string
	Name     string // the table or type; empty for KEYSPACE
}

// BatchEntry is one statement of a batch with its values.
type BatchEntry struct {
	Prepared *Prepared
	Values   []cqlvalue.Value
}

// AlreadyExistsError is a CREATE of a keyspace or table that exists (CQL's ALREADY_EXISTS);
// it wraps a fault.Conflict. Table is empty for a keyspace.
type AlreadyExistsError struct {
	Keyspace, Table string
	Err             error
}

func (e *AlreadyExistsError) Error() string { return e.Err.Error() }
func (e *AlreadyExistsError) Unwrap() error { return e.Err }
