package cqlexec

import (
	"log/slog"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
)

// Executor runs CQL statements over the engine. It is safe for concurrent use.
type Executor struct {
	eng *engine.Engine
	log *slog.Logger
}

// New returns an executor over eng.
func New(eng *engine.Engine, log *slog.Logger) *Executor {
	return &Executor{eng: eng, log: log}
}

// Prepare parses text and checks it against the schema, in the session's keyspace.
func (x *Executor) Prepare(s *Session, text string) (*Prepared, error) {
	return nil, fault.New(fault.Internal, "not built yet")
}

// Execute runs a prepared statement with o's values.
func (x *Executor) Execute(s *Session, p *Prepared, o Options) (*Result, error) {
	return nil, fault.New(fault.Internal, "not built yet")
}

// Batch runs entries as one batch of kind: atomically when they all write one partition.
func (x *Executor) Batch(s *Session, kind cql.BatchKind, entries []BatchEntry, o Options) (*Result, error) {
	return nil, fault.New(fault.Internal, "not built yet")
}

// SchemaVersion is the schema's version as system.local's schema_version shows it: it
// changes with every schema change.
func (x *Executor) SchemaVersion() [16]byte { return [16]byte{} }

// Watch calls fn after each schema change until stop is called.
func (x *Executor) Watch(fn func(SchemaChange)) (stop func()) { return func() {} }
