package cqlexec

import (
	"crypto/md5"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
)

// Executor runs CQL statements over the engine. It is safe for concurrent use.
type Executor struct {
	eng   *engine.Engine
	log   *slog.Logger
	cache schemaCache
	// clock hands out write timestamps (microseconds) that only grow, so that two writes of
	// one client in a row are ordered even within one microsecond.
	clock atomic.Int64
	// ddl serializes schema changes: each reads the schema, checks, then writes it.
	ddl sync.Mutex

	watchMu  sync.Mutex
	watchers map[int]func(SchemaChange)
	nextW    int
	// now is the clock of TTLs and write times; time.Now outside tests.
	now func() time.Time
}

// New returns an executor over eng.
func New(eng *engine.Engine, log *slog.Logger) *Executor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Executor{eng: eng, log: log, watchers: map[int]func(SchemaChange){}, now: time.Now}
}

// timestamp is a fresh write timestamp in microseconds.
func (x *Executor) timestamp() int64 {
	now := x.now().UnixMicro()
	for {
		last := x.clock.Load()
		next := max(now, last+1)
		if x.clock.CompareAndSwap(last, next) {
			return next
		}
	}
}

// Prepare parses text and checks it against the schema, in the session's keyspace.
func (x *Executor) Prepare(s *Session, text string) (*Prepared, error) {
	st, err := cql.Parse(text)
	if err != nil {
		return nil, err
	}
	return freshOnMiss(x, func(sch *schema) (*Prepared, error) {
		p := &Prepared{ID: md5.Sum([]byte(s.Keyspace + "\x00" + text)), Text: text, Keyspace: s.Keyspace, stmt: st}
		if err := x.analyze(sch, s, p); err != nil {
			return nil, err
		}
		return p, nil
	})
}

// analyze checks p.stmt and fills in what the front end needs: its kind, bind markers,
// result columns and plan.
func (x *Executor) analyze(sch *schema, s *Session, p *Prepared) error {
	switch st := p.stmt.(type) {
	case *cql.Select:
		p.Kind = KindSelect
		return x.analyzeSelect(sch, s, p, st)
	case *cql.Insert, *cql.Update, *cql.Delete:
		p.Kind = KindWrite
		return analyzeWrite(sch, s, p)
	case *cql.Batch:
		p.Kind = KindBatch
		return analyzeBatch(sch, s, p, st)
	case *cql.Describe:
		p.Kind = KindDescribe
		return nil
	case *cql.Use:
		p.Kind = KindUse
		if systemKeyspaces[st.Keyspace] {
			return nil
		}
		if _, err := sch.keyspace(st.Keyspace); err != nil {
			return err
		}
		return nil
	default:
		p.Kind = KindSchema
		if len(st.Markers()) > 0 {
			return cql.Invalid(st.Markers()[0].Pos, "Bind variables are not allowed in schema statements")
		}
		return nil
	}
}

// Execute runs a prepared statement with o's values.
func (x *Executor) Execute(s *Session, p *Prepared, o Options) (*Result, error) {
	switch p.Kind {
	case KindDescribe:
		return x.describe(s, p.stmt.(*cql.Describe))
	case KindUse:
		name := p.stmt.(*cql.Use).Keyspace
		if systemKeyspaces[name] {
			s.Keyspace = name // its tables are the virtual ones (system.go)
			return &Result{Kind: ResultSetKeyspace, Keyspace: name}, nil
		}
		if _, err := freshOnMiss(x, func(sch *schema) (*keyspace, error) { return sch.keyspace(name) }); err != nil {
			return nil, err
		}
		s.Keyspace = name
		return &Result{Kind: ResultSetKeyspace, Keyspace: name}, nil
	case KindSchema:
		if s.ReadOnly {
			return nil, errReadOnly
		}
		return x.executeSchema(s, p.stmt)
	case KindSelect:
		return x.executeSelect(s, p, o)
	case KindWrite:
		if s.ReadOnly {
			return nil, errReadOnly
		}
		return x.executeWrite(s, p, o)
	case KindBatch:
		if s.ReadOnly {
			return nil, errReadOnly
		}
		return x.executeBatchStatement(s, p, o)
	}
	return nil, fault.New(fault.Internal, "statement kind %d", p.Kind)
}

// Batch runs entries as one batch of kind: atomically when they all write one partition.
func (x *Executor) Batch(s *Session, kind cql.BatchKind, entries []BatchEntry, o Options) (*Result, error) {
	if s.ReadOnly {
		return nil, errReadOnly
	}
	return x.executeBatch(s, kind, entries, o)
}

var errReadOnly = fault.New(fault.Forbidden, "This session signed in with the read-only key; it may not write or change the schema")

// SchemaVersion is the schema's version as system.local's schema_version shows it: it
// changes with every schema change.
func (x *Executor) SchemaVersion() [16]byte {
	sch, err := x.schema()
	if err != nil {
		return [16]byte{}
	}
	return sch.uuid()
}

// Watch calls fn after each schema change until stop is called.
func (x *Executor) Watch(fn func(SchemaChange)) (stop func()) {
	x.watchMu.Lock()
	defer x.watchMu.Unlock()
	id := x.nextW
	x.nextW++
	x.watchers[id] = fn
	return func() {
		x.watchMu.Lock()
		delete(x.watchers, id)
		x.watchMu.Unlock()
	}
}

// changed tells the watchers about a schema change and returns its result.
func (x *Executor) changed(c SchemaChange) *Result {
	x.watchMu.Lock()
	fns := make([]func(SchemaChange), 0, len(x.watchers))
	for _, fn := range x.watchers {
		fns = append(fns, fn)
	}
	x.watchMu.Unlock()
	for _, fn := range fns {
		fn(c)
	}
	return &Result{Kind: ResultSchemaChange, Change: c}
}
