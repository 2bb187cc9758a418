package cqlexec

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
)

// The schema lives in the engine's catalog: a keyspace is a database whose Meta is a
// keyspaceMeta, a table a container whose Meta is a tableMeta. The executor reads it into an
// immutable schema value, again whenever the catalog's version moved (a CQL statement, or a
// database or container dropped through the REST API).

// keyspaceMeta is a keyspace's record (engine.DatabaseInfo.Meta).
type keyspaceMeta struct {
	Replication   map[string]string `json:"replication"`
	DurableWrites bool              `json:"durableWrites"`
	Types         []typeMeta        `json:"types,omitempty"` // in creation order
}

// typeMeta is a user-defined type.
type typeMeta struct {
	Name   string       `json:"name"`
	Fields []columnMeta `json:"fields"`
}

// tableMeta is a table's record (engine.ContainerInfo.Meta).
type tableMeta struct {
	// ID is the table's id, a version 4 UUID as system_schema.tables shows it; a table
	// created again under the same name gets a new one, so prepared statements cannot
	// outlive their table.
	ID      [16]byte     `json:"id"`
	Columns []columnMeta `json:"columns"` // in the order written
	// PartitionKey and Clustering name key columns in key order; Desc is parallel to
	// Clustering (CLUSTERING ORDER BY ... DESC).
	PartitionKey []string `json:"partitionKey"`
	Clustering   []string `json:"clustering,omitempty"`
	Desc         []bool   `json:"desc,omitempty"`
	// Gen counts the ALTER TABLEs: a statement prepared before one is prepared again.
	Gen int `json:"gen"`
	// DefaultTTL is default_time_to_live, seconds; 0 for none.
	DefaultTTL int    `json:"defaultTtl,omitempty"`
	Comment    string `json:"comment,omitempty"`
}

// columnMeta is one column (or a type's field): its type as cql.Type prints it.
type columnMeta struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Static bool   `json:"static,omitempty"`
}

// colKind is a column's role, as system_schema.columns names it.
type colKind uint8

const (
	partitionKey colKind = iota
	clustering
	static
	regular
)

var colKindNames = [...]string{partitionKey: "partition_key", clustering: "clustering", static: "static", regular: "regular"}

// column is a table's column.
type column struct {
	name string
	typ  *cqlvalue.Type
	kind colKind
	// pos is the column's place in the partition key or among the clustering columns; -1
	// for others.
	pos  int
	desc bool // a clustering column in descending order
}

// table is a table as statements see it.
type table struct {
	ks, name string
	etag     string // as keyspace.etag
	meta     tableMeta
	// cols are in the order SELECT * returns them: partition key, clustering, then the
	// others by name, as Cassandra orders them.
	cols   []*column
	byName map[string]*column
	pk, ck []*column
	// others are the static and regular columns, by name.
	others  []*column
	statics bool // the table has static columns
	counter bool // the table's non-key columns are counters
	// virtual, for a system table, computes its rows; nil for user tables.
	virtual virtualTable
}

// keyspace is a keyspace with its tables and types.
type keyspace struct {
	name string
	// etag is the etag of the keyspace's record as read: a change of meta is made only if
	// the record still has it.
	etag   string
	meta   keyspaceMeta
	tables map[string]*table
	types  map[string]*cqlvalue.Type
}

// schema is the whole CQL schema at one catalog version.
type schema struct {
	version   uint64
	keyspaces map[string]*keyspace
}

// schemaCache holds the schema read at the catalog's latest version. Every statement looks
// it up, so the look-up is one atomic load; the mutex is held only to read the schema again.
type schemaCache struct {
	cur atomic.Pointer[schema]
	mu  sync.Mutex
}

// schema returns the schema as of the catalog's current version, reading it again when the
// version moved.
func (x *Executor) schema() (*schema, error) {
	v := x.eng.CatalogVersion()
	if s := x.cache.cur.Load(); s != nil && s.version == v {
		return s, nil
	}
	x.cache.mu.Lock()
	defer x.cache.mu.Unlock()
	if s := x.cache.cur.Load(); s != nil && s.version == v {
		return s, nil // another statement read it meanwhile
	}
	s, err := loadSchema(x.eng, v)
	if err != nil {
		return nil, err
	}
	x.cache.cur.Store(s)
	return s, nil
}

// loadSchema reads the schema from the catalog. v is the version it was asked at: a change
// made meanwhile only makes the next call read it again.
func loadSchema(eng *engine.Engine, v uint64) (*schema, error) {
	s := &schema{version: v, keyspaces: map[string]*keyspace{}}
	for _, d := range eng.Databases() {
		if d.Meta == nil {
			continue
		}
		ks := &keyspace{name: d.ID, etag: d.ETag, tables: map[string]*table{}, types: map[string]*cqlvalue.Type{}}
		if err := json.Unmarshal(d.Meta, &ks.meta); err != nil {
			return nil, fault.New(fault.Internal, "keyspace %q has a malformed schema record: %w", d.ID, err)
		}
		for _, tm := range ks.meta.Types {
			t, err := ks.resolveUDT(tm)
			if err != nil {
				return nil, fault.New(fault.Internal, "type %s.%s: %w", d.ID, tm.Name, err)
			}
			ks.types[tm.Name] = t
		}
		infos, err := eng.Containers(d.ID)
		if err != nil {
			continue // dropped meanwhile
		}
		for _, c := range infos {
			if c.Meta == nil {
				continue
			}
			var tm tableMeta
			if err := json.Unmarshal(c.Meta, &tm); err != nil {
				return nil, fault.New(fault.Internal, "table %s.%s has a malformed schema record: %w", d.ID, c.ID, err)
			}
			t, err := ks.newTable(c.ID, tm)
			if err != nil {
				return nil, fault.New(fault.Internal, "table %s.%s: %w", d.ID, c.ID, err)
			}
			t.etag = c.ETag
			ks.tables[c.ID] = t
		}
		s.keyspaces[d.ID] = ks
	}
	return s, nil
}

// parseType reads a stored or written type in keyspace ks.
func (ks *keyspace) parseType(text string) (*cqlvalue.Type, error) {
	at, err := cql.ParseType(text)
	if err != nil {
		return nil, err
	}
	return ks.resolve(at)
}

// resolve turns a written type into a type, finding user types in the keyspace.
func (ks *keyspace) resolve(at *cql.Type) (*cqlvalue.Type, error) {
	return cqlvalue.FromAST(at, func(k, name string) (*cqlvalue.Type, error) {
		if k != "" && k != ks.name {
			return nil, cql.Invalid(fault.Pos{}, "Statement on keyspace %s cannot refer to a user type in keyspace %s; user types can only be used in the keyspace they are defined in", ks.name, k)
		}
		t := ks.types[name]
		if t == nil {
			return nil, cql.Invalid(fault.Pos{}, "Unknown type %s.%s", ks.name, name)
		}
		return t, nil
	})
}

// resolveUDT builds a user type from its record.
func (ks *keyspace) resolveUDT(tm typeMeta) (*cqlvalue.Type, error) {
	t := &cqlvalue.Type{Kind: cqlvalue.UDT, Keyspace: ks.name, Name: tm.Name}
	for _, f := range tm.Fields {
		ft, err := ks.parseType(f.Type)
		if err != nil {
			return nil, err
		}
		t.Fields = append(t.Fields, f.Name)
		t.Elems = append(t.Elems, ft)
	}
	return t, nil
}

// newTable builds a table from its record.
func (ks *keyspace) newTable(name string, tm tableMeta) (*table, error) {
	t := &table{ks: ks.name, name: name, meta: tm, byName: map[string]*column{}}
	for _, cm := range tm.Columns {
		typ, err := ks.parseType(cm.Type)
		if err != nil {
			return nil, err
		}
		c := &column{name: cm.Name, typ: typ, kind: regular, pos: -1}
		if cm.Static {
			c.kind = static
			t.statics = true
		}
		if i := slices.Index(tm.PartitionKey, cm.Name); i >= 0 {
			c.kind, c.pos = partitionKey, i
		}
		if i := slices.Index(tm.Clustering, cm.Name); i >= 0 {
			c.kind, c.pos = clustering, i
			c.desc = i < len(tm.Desc) && tm.Desc[i]
		}
		t.byName[c.name] = c
	}
	for _, n := range tm.PartitionKey {
		t.pk = append(t.pk, t.byName[n])
	}
	for _, n := range tm.Clustering {
		t.ck = append(t.ck, t.byName[n])
	}
	for _, cm := range tm.Columns {
		if c := t.byName[cm.Name]; c.kind == static || c.kind == regular {
			t.others = append(t.others, c)
			t.counter = t.counter || c.typ.Kind == cqlvalue.Counter
		}
	}
	sort.Slice(t.others, func(i, j int) bool { return t.others[i].name < t.others[j].name })
	t.cols = append(append(append(t.cols, t.pk...), t.ck...), t.others...)
	return t, nil
}

// keyspace returns the keyspace name, or an Invalid error as Cassandra words it.
func (s *schema) keyspace(name string) (*keyspace, error) {
	if name == "" {
		return nil, cql.Invalid(fault.Pos{}, "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
	}
	ks := s.keyspaces[name]
	if ks == nil {
		return nil, missing("Keyspace %s does not exist", name)
	}
	return ks, nil
}

// table returns the table n, qualified or in the session's keyspace.
func (s *schema) table(sess *Session, n cql.TableName) (*table, error) {
	ksName := n.Keyspace
	if ksName == "" {
		ksName = sess.Keyspace
	}
	ks, err := s.keyspace(ksName)
	if err != nil {
		return nil, err
	}
	t := ks.tables[n.Name]
	if t == nil {
		return nil, missing("table %s does not exist", n.Name)
	}
	return t, nil
}

// missingError is a keyspace or table the schema does not have. On a node of a cluster the
// statement is checked again once the node holds the catalog as of now (freshOnMiss): another
// node may have just created it.
type missingError struct{ err error }

func (m missingError) Error() string { return m.err.Error() }
func (m missingError) Unwrap() error { return m.err }

func missing(format string, args ...any) error {
	return missingError{fault.New(fault.BadRequest, format, args...)}
}

// freshOnMiss runs fn with the schema, and once more with the schema as of the cluster's
// current catalog when fn finds a keyspace or table missing.
func freshOnMiss[T any](x *Executor, fn func(*schema) (T, error)) (T, error) {
	sch, err := x.schema()
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := fn(sch)
	if !errors.As(err, new(missingError)) {
		return v, err
	}
	if ferr := x.eng.Fresh(); ferr != nil {
		return v, err
	}
	if sch, err = x.schema(); err != nil {
		return v, err
	}
	return fn(sch)
}

// version is the schema's version as system.local shows it: a name-based UUID of the
// catalog version.
func (s *schema) uuid() [16]byte {
	return nameUUID(binary.BigEndian.AppendUint64([]byte("partita-schema-"), s.version))
}

// nameUUID is a version 3 (MD5, name-based) UUID of name.
func nameUUID(name []byte) [16]byte {
	u := md5.Sum(name)
	u[6] = u[6]&0x0f | 0x30
	u[8] = u[8]&0x3f | 0x80
	return u
}
