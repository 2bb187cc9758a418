package cqlexec

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
)

// systemKeyspaces are Cassandra's own keyspaces: served read-only (system.go), never created.
var systemKeyspaces = map[string]bool{
	"system": true, "system_schema": true, "system_auth": true, "system_distributed": true,
	"system_traces": true, "system_views": true, "system_virtual_schema": true,
}

// executeSchema runs a schema statement. Another node of a cluster (or the Cosmos DB API) may
// change the same keyspace or table meanwhile: the change, conditional on the etag of what
// it was decided from, is then refused (PreconditionFailed), and the statement is decided
// again against the newer schema, so that concurrent schema changes apply one after the
// other, as in Cassandra, and none is lost.
func (x *Executor) executeSchema(s *Session, st cql.Statement) (*Result, error) {
	x.ddl.Lock()
	defer x.ddl.Unlock()
	for attempt := 1; ; attempt++ {
		r, err := x.decideSchema(s, st)
		if !errors.Is(err, fault.PreconditionFailed) || attempt == maxSchemaAttempts {
			return r, err
		}
	}
}

// maxSchemaAttempts bounds how many times executeSchema decides a statement again.
const maxSchemaAttempts = 10

// decideSchema runs a schema statement against the schema as of now. Callers hold x.ddl.
func (x *Executor) decideSchema(s *Session, st cql.Statement) (*Result, error) {
	if err := x.eng.Fresh(); err != nil { // decided against the schema as of now, in a cluster
		return nil, err
	}
	sch, err := x.schema()
	if err != nil {
		return nil, err
	}
	switch st := st.(type) {
	case *cql.CreateKeyspace:
		return x.createKeyspace(sch, st)
	case *cql.AlterKeyspace:
		return x.alterKeyspace(sch, st)
	case *cql.DropKeyspace:
		return x.dropKeyspace(sch, st)
	case *cql.CreateTable:
		return x.createTable(sch, s, st)
	case *cql.AlterTable:
		return x.alterTable(sch, s, st)
	case *cql.DropTable:
		return x.dropTable(sch, s, st)
	case *cql.Truncate:
		return x.truncate(sch, s, st)
	case *cql.CreateType:
		return x.createType(sch, s, st)
	case *cql.DropType:
		return x.dropType(sch, s, st)
	case *cql.CreateIndex, *cql.DropIndex:
		return nil, cql.Invalid(fault.Pos{}, "Secondary indexes are not supported by Partita; query by the primary key, or with ALLOW FILTERING")
	}
	return nil, cql.Invalid(fault.Pos{}, "%T statements are not supported", st)
}

func checkName(what, name string) error {
	if name == "" || len(name) > 48 {
		return cql.Invalid(fault.Pos{}, "%s name must not be empty or more than 48 characters long (got %q)", what, name)
	}
	for _, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return cql.Invalid(fault.Pos{}, "%s name must contain alphanumeric characters and underscores only (got %q)", what, name)
		}
	}
	return nil
}

// keyspaceOptions reads CREATE/ALTER KEYSPACE's options into m.
func keyspaceOptions(opts cql.Options, m *keyspaceMeta) error {
	for _, o := range opts {
		switch o.Name {
		case "replication":
			mp, ok := o.Value.(*cql.Map)
			if !ok {
				return cql.Invalid(fault.Pos{}, "replication must be a map, e.g. {'class': 'SimpleStrategy', 'replication_factor': 1}")
			}
			repl := map[string]string{}
			for _, e := range mp.Entries {
				k, kok := constText(e.Key)
				v, vok := constText(e.Value)
				if !kok || !vok {
					return cql.Invalid(fault.Pos{}, "replication options must be constants")
				}
				repl[k] = v
			}
			class := repl["class"]
			switch strings.TrimPrefix(class, "org.apache.cassandra.locator.") {
			case "SimpleStrategy", "NetworkTopologyStrategy", "LocalStrategy", "EverywhereStrategy":
				if !strings.HasPrefix(class, "org.") {
					repl["class"] = "org.apache.cassandra.locator." + class
				}
			case "":
				return cql.Invalid(fault.Pos{}, "Missing replication strategy class")
			default:
				return fault.New(fault.BadRequest, "Unable to find replication strategy class '%s'", class)
			}
			m.Replication = repl
		case "durable_writes":
			v, _ := constText(o.Value)
			b, err := strconv.ParseBool(v)
			if err != nil {
				return cql.Invalid(fault.Pos{}, "durable_writes must be true or false")
			}
			m.DurableWrites = b
		case "cosmosdb_provisioned_throughput", "cosmosdb_autoscale_max_throughput":
			return cql.Invalid(fault.Pos{}, "Partita sets throughput per table: give %s on CREATE TABLE or ALTER TABLE", o.Name)
		default:
			return fault.New(fault.BadRequest, "Unknown keyspace property '%s'", o.Name)
		}
	}
	if m.Replication == nil {
		return cql.Invalid(fault.Pos{}, "Missing mandatory replication strategy class")
	}
	return nil
}

// constText is a constant's text (a string's content, a number's digits).
func constText(t cql.Term) (string, bool) {
	c, ok := t.(*cql.Constant)
	if !ok {
		return "", false
	}
	return c.Text, true
}

func (x *Executor) createKeyspace(sch *schema, st *cql.CreateKeyspace) (*Result, error) {
	if err := checkName("Keyspace", st.Name); err != nil {
		return nil, err
	}
	if systemKeyspaces[st.Name] {
		return nil, fault.New(fault.Forbidden, "%s keyspace is not user-modifiable", st.Name)
	}
	m := keyspaceMeta{DurableWrites: true}
	if err := keyspaceOptions(st.Options, &m); err != nil {
		return nil, err
	}
	if sch.keyspaces[st.Name] != nil {
		if st.IfNotExists {
			return &Result{Kind: ResultVoid}, nil
		}
		return nil, &AlreadyExistsError{Keyspace: st.Name, Err: fault.New(fault.Conflict, "Cannot add existing keyspace \"%s\"", st.Name)}
	}
	meta, _ := json.Marshal(m)
	if _, err := x.eng.CreateKeyspace(st.Name, meta); err != nil {
		if errors.Is(err, fault.Conflict) {
			return nil, &AlreadyExistsError{Keyspace: st.Name, Err: fault.New(fault.Conflict, "Cannot add keyspace \"%s\": a database of that name exists", st.Name)}
		}
		return nil, err
	}
	return x.changed(SchemaChange{Change: "CREATED", Target: "KEYSPACE", Keyspace: st.Name}), nil
}

func (x *Executor) alterKeyspace(sch *schema, st *cql.AlterKeyspace) (*Result, error) {
	ks, err := sch.userKeyspace(st.Name)
	if err != nil {
		return nil, err
	}
	m := ks.meta
	m.Replication = nil
	if st.Options.Get("replication") == nil {
		m.Replication = ks.meta.Replication
	}
	if err := keyspaceOptions(st.Options, &m); err != nil {
		return nil, err
	}
	meta, _ := json.Marshal(m)
	if _, err := x.eng.SetKeyspaceMeta(st.Name, meta, ks.etag); err != nil {
		return nil, err
	}
	return x.changed(SchemaChange{Change: "UPDATED", Target: "KEYSPACE", Keyspace: st.Name}), nil
}

func (x *Executor) dropKeyspace(sch *schema, st *cql.DropKeyspace) (*Result, error) {
	if systemKeyspaces[st.Name] {
		return nil, fault.New(fault.Forbidden, "%s keyspace is not user-modifiable", st.Name)
	}
	if sch.keyspaces[st.Name] == nil {
		if st.IfExists {
			return &Result{Kind: ResultVoid}, nil
		}
		return nil, fault.New(fault.BadRequest, "Cannot drop non existing keyspace '%s'.", st.Name)
	}
	if err := x.eng.DeleteDatabase(st.Name, ""); err != nil {
		return nil, err
	}
	return x.changed(SchemaChange{Change: "DROPPED", Target: "KEYSPACE", Keyspace: st.Name}), nil
}

// userKeyspace is keyspace name, which must be one a user may change.
func (sch *schema) userKeyspace(name string) (*keyspace, error) {
	if systemKeyspaces[name] {
		return nil, fault.New(fault.Forbidden, "%s keyspace is not user-modifiable", name)
	}
	return sch.keyspace(name)
}

// tableKeyspace is the keyspace a schema statement on n addresses.
func (sch *schema) tableKeyspace(s *Session, n cql.TableName) (*keyspace, error) {
	name := n.Keyspace
	if name == "" {
		name = s.Keyspace
	}
	if name == "" {
		return sch.keyspace("")
	}
	return sch.userKeyspace(name)
}

// tableOptions are the WITH options of CREATE and ALTER TABLE that Partita reads; the others
// Cassandra knows are accepted and have no effect (storage is Partita's own).
type tableOptions struct {
	throughput *engine.Throughput
	defaultTTL *int
	comment    *string
}

var ignoredTableOptions = map[string]bool{
	"bloom_filter_fp_chance": true, "caching": true, "compaction": true, "compression": true,
	"crc_check_chance": true, "dclocal_read_repair_chance": true, "gc_grace_seconds": true,
	"max_index_interval": true, "memtable_flush_period_in_ms": true, "min_index_interval": true,
	"read_repair_chance": true, "speculative_retry": true, "cdc": true, "extensions": true,
	"additional_write_policy": true, "read_repair": true, "id": true,
}

func readTableOptions(opts cql.Options) (tableOptions, error) {
	var to tableOptions
	for _, o := range opts {
		text, isConst := constText(o.Value)
		switch {
		case o.Name == "cosmosdb_provisioned_throughput" || o.Name == "cosmosdb_autoscale_max_throughput":
			n, err := strconv.Atoi(text)
			if !isConst || err != nil || n <= 0 {
				return to, cql.Invalid(fault.Pos{}, "%s must be a positive integer (RU/s)", o.Name)
			}
			t := engine.Throughput{Manual: n}
			if o.Name == "cosmosdb_autoscale_max_throughput" {
				t = engine.Throughput{AutoscaleMax: n}
			}
			to.throughput = &t
		case o.Name == "default_time_to_live":
			n, err := strconv.Atoi(text)
			if !isConst || err != nil || n < 0 || n > maxTTL {
				return to, cql.Invalid(fault.Pos{}, "default_time_to_live must be an integer from 0 to %d", maxTTL)
			}
			to.defaultTTL = &n
		case o.Name == "comment":
			if !isConst {
				return to, cql.Invalid(fault.Pos{}, "comment must be a string")
			}
			to.comment = &text
		case ignoredTableOptions[o.Name]:
		default:
			return to, cql.Invalid(fault.Pos{}, "Unknown property '%s'", o.Name)
		}
	}
	return to, nil
}

// maxTTL is Cassandra's limit on a time to live: 20 years, in seconds.
const maxTTL = 20 * 365 * 24 * 60 * 60

func (x *Executor) createTable(sch *schema, s *Session, st *cql.CreateTable) (*Result, error) {
	ks, err := sch.tableKeyspace(s, st.Table)
	if err != nil {
		return nil, err
	}
	if err := checkName("Table", st.Table.Name); err != nil {
		return nil, err
	}
	if ks.tables[st.Table.Name] != nil {
		if st.IfNotExists {
			return &Result{Kind: ResultVoid}, nil
		}
		return nil, &AlreadyExistsError{Keyspace: ks.name, Table: st.Table.Name, Err: fault.New(fault.Conflict, "Cannot add already existing table \"%s\" to keyspace \"%s\"", st.Table.Name, ks.name)}
	}
	if st.CompactStorage {
		return nil, cql.Invalid(fault.Pos{}, "COMPACT STORAGE tables are not supported")
	}
	tm := tableMeta{PartitionKey: st.PartitionKey, Clustering: st.Clustering}
	if _, err := rand.Read(tm.ID[:]); err != nil {
		return nil, fault.New(fault.Internal, "%w", err)
	}
	tm.ID[6] = tm.ID[6]&0x0f | 0x40
	tm.ID[8] = tm.ID[8]&0x3f | 0x80
	types := map[string]*cqlvalue.Type{}
	for _, cd := range st.Columns {
		if types[cd.Name] != nil {
			return nil, cql.Invalid(fault.Pos{}, "Multiple definition of identifier %s", cd.Name)
		}
		typ, err := ks.resolve(cd.Type)
		if err != nil {
			return nil, err
		}
		types[cd.Name] = typ
		tm.Columns = append(tm.Columns, columnMeta{Name: cd.Name, Type: typ.String(), Static: cd.Static})
	}
	if err := checkKeyColumns(tm, types, st); err != nil {
		return nil, err
	}
	tm.Desc = make([]bool, len(st.Clustering))
	if len(st.ClusteringOrder) > 0 {
		if len(st.ClusteringOrder) > len(st.Clustering) {
			return nil, cql.Invalid(fault.Pos{}, "Only clustering key columns can be defined in CLUSTERING ORDER directive")
		}
		for i, o := range st.ClusteringOrder {
			if !slices.Contains(st.Clustering, o.Column) {
				return nil, cql.Invalid(fault.Pos{}, "Only clustering key columns can be defined in CLUSTERING ORDER directive: %s is not one", o.Column)
			}
			if st.Clustering[i] != o.Column {
				return nil, cql.Invalid(fault.Pos{}, "The order of columns in the CLUSTERING ORDER directive must be the one of the clustering key (%s must appear before %s)", st.Clustering[i], o.Column)
			}
			tm.Desc[i] = o.Desc
		}
	}
	opts, err := readTableOptions(st.Options)
	if err != nil {
		return nil, err
	}
	if opts.defaultTTL != nil {
		tm.DefaultTTL = *opts.defaultTTL
	}
	if opts.comment != nil {
		tm.Comment = *opts.comment
	}
	meta, _ := json.Marshal(tm)
	if _, err := x.eng.CreateTable(ks.name, st.Table.Name, opts.throughput, meta); err != nil {
		if errors.Is(err, fault.Conflict) {
			return nil, &AlreadyExistsError{Keyspace: ks.name, Table: st.Table.Name, Err: err}
		}
		return nil, err
	}
	return x.changed(SchemaChange{Change: "CREATED", Target: "TABLE", Keyspace: ks.name, Name: st.Table.Name}), nil
}

// checkKeyColumns applies Cassandra's rules to the primary key and static columns.
func checkKeyColumns(tm tableMeta, types map[string]*cqlvalue.Type, st *cql.CreateTable) error {
	seen := map[string]bool{}
	for _, n := range append(slices.Clone(tm.PartitionKey), tm.Clustering...) {
		typ := types[n]
		if typ == nil {
			return cql.Invalid(fault.Pos{}, "Unknown definition %s referenced in PRIMARY KEY", n)
		}
		if seen[n] {
			return cql.Invalid(fault.Pos{}, "Duplicate definition for %s in PRIMARY KEY", n)
		}
		seen[n] = true
		if err := checkKeyType(n, typ); err != nil {
			return err
		}
	}
	counters, others := 0, 0
	for _, cd := range st.Columns {
		if cd.Static {
			if seen[cd.Name] {
				return cql.Invalid(fault.Pos{}, "Static column %s cannot be part of the PRIMARY KEY", cd.Name)
			}
			if len(tm.Clustering) == 0 {
				return cql.Invalid(fault.Pos{}, "Static columns are only useful (and thus allowed) if the table has at least one clustering column")
			}
		}
		if seen[cd.Name] {
			continue
		}
		if types[cd.Name].Kind == cqlvalue.Counter {
			counters++
		} else {
			others++
		}
	}
	if counters > 0 && others > 0 {
		return cql.Invalid(fault.Pos{}, "Cannot mix counter and non counter columns in the same table")
	}
	return nil
}

// checkKeyType refuses types a key column may not have.
func checkKeyType(name string, t *cqlvalue.Type) error {
	switch {
	case t.Kind == cqlvalue.Counter:
		return cql.Invalid(fault.Pos{}, "counter type is not supported for PRIMARY KEY column '%s'", name)
	case t.Kind == cqlvalue.Duration:
		return cql.Invalid(fault.Pos{}, "duration type is not supported for PRIMARY KEY column '%s'", name)
	case (t.Kind == cqlvalue.List || t.Kind == cqlvalue.Set || t.Kind == cqlvalue.Map || t.Kind == cqlvalue.UDT) && !t.Frozen:
		return cql.Invalid(fault.Pos{}, "Invalid non-frozen collection type for PRIMARY KEY component %s", name)
	}
	return nil
}

func (x *Executor) alterTable(sch *schema, s *Session, st *cql.AlterTable) (*Result, error) {
	ks, err := sch.tableKeyspace(s, st.Table)
	if err != nil {
		return nil, err
	}
	t := ks.tables[st.Table.Name]
	if t == nil {
		return nil, fault.New(fault.BadRequest, "Table %s.%s does not exist", ks.name, st.Table.Name)
	}
	tm := t.meta
	tm.Columns = slices.Clone(tm.Columns)
	var throughput *engine.Throughput
	switch st.Kind {
	case cql.AlterAdd:
		for _, cd := range st.Add {
			if t.byName[cd.Name] != nil || slices.ContainsFunc(tm.Columns, func(c columnMeta) bool { return c.Name == cd.Name }) {
				return nil, cql.Invalid(fault.Pos{}, "Column with name '%s' already exists", cd.Name)
			}
			typ, err := ks.resolve(cd.Type)
			if err != nil {
				return nil, err
			}
			if cd.Static && len(tm.Clustering) == 0 {
				return nil, cql.Invalid(fault.Pos{}, "Static columns are not allowed in tables with no clustering columns")
			}
			if (typ.Kind == cqlvalue.Counter) != t.counter && len(t.others) > 0 {
				return nil, cql.Invalid(fault.Pos{}, "Cannot add a counter column (%s) in a non counter table, or the reverse", cd.Name)
			}
			tm.Columns = append(tm.Columns, columnMeta{Name: cd.Name, Type: typ.String(), Static: cd.Static})
		}
	case cql.AlterDrop:
		for _, n := range st.Drop {
			c := t.byName[n]
			if c == nil {
				return nil, cql.Invalid(fault.Pos{}, "Column %s was not found in table %s", n, t.name)
			}
			if c.kind == partitionKey || c.kind == clustering {
				return nil, cql.Invalid(fault.Pos{}, "Cannot drop PRIMARY KEY part %s", n)
			}
			tm.Columns = slices.DeleteFunc(tm.Columns, func(cm columnMeta) bool { return cm.Name == n })
		}
	case cql.AlterWith:
		opts, err := readTableOptions(st.Options)
		if err != nil {
			return nil, err
		}
		throughput = opts.throughput
		if opts.defaultTTL != nil {
			tm.DefaultTTL = *opts.defaultTTL
		}
		if opts.comment != nil {
			tm.Comment = *opts.comment
		}
	}
	tm.Gen++
	meta, _ := json.Marshal(tm)
	if err := x.eng.AlterTable(ks.name, t.name, meta, throughput, t.etag); err != nil {
		return nil, err
	}
	return x.changed(SchemaChange{Change: "UPDATED", Target: "TABLE", Keyspace: ks.name, Name: t.name}), nil
}

func (x *Executor) dropTable(sch *schema, s *Session, st *cql.DropTable) (*Result, error) {
	ks, err := sch.tableKeyspace(s, st.Table)
	if err != nil {
		return nil, err
	}
	if ks.tables[st.Table.Name] == nil {
		if st.IfExists {
			return &Result{Kind: ResultVoid}, nil
		}
		return nil, fault.New(fault.BadRequest, "Table '%s.%s' doesn't exist", ks.name, st.Table.Name)
	}
	if err := x.eng.DeleteContainer(ks.name, st.Table.Name, ""); err != nil {
		return nil, err
	}
	return x.changed(SchemaChange{Change: "DROPPED", Target: "TABLE", Keyspace: ks.name, Name: st.Table.Name}), nil
}

// truncate empties a table: it is dropped and created again with the same schema, id and
// throughput, which is one catalog change per step instead of a delete per row.
func (x *Executor) truncate(sch *schema, s *Session, st *cql.Truncate) (*Result, error) {
	ks, err := sch.tableKeyspace(s, st.Table)
	if err != nil {
		return nil, err
	}
	t := ks.tables[st.Table.Name]
	if t == nil {
		return nil, fault.New(fault.BadRequest, "Table '%s.%s' doesn't exist", ks.name, st.Table.Name)
	}
	info, err := x.eng.ContainerInfo(ks.name, t.name)
	if err != nil {
		return nil, err
	}
	if err := x.eng.DeleteContainer(ks.name, t.name, ""); err != nil {
		return nil, err
	}
	if _, err := x.eng.CreateTable(ks.name, t.name, info.Throughput, info.Meta); err != nil {
		return nil, fault.New(fault.Internal, "table %s.%s was emptied but could not be created again: %w", ks.name, t.name, err)
	}
	return &Result{Kind: ResultVoid}, nil
}

func (x *Executor) createType(sch *schema, s *Session, st *cql.CreateType) (*Result, error) {
	ks, err := sch.tableKeyspace(s, st.Name)
	if err != nil {
		return nil, err
	}
	if ks.types[st.Name.Name] != nil {
		if st.IfNotExists {
			return &Result{Kind: ResultVoid}, nil
		}
		return nil, &AlreadyExistsError{Keyspace: ks.name, Table: st.Name.Name, Err: fault.New(fault.Conflict, "A user type of name %s.%s already exists", ks.name, st.Name.Name)}
	}
	if cql.IsNative(st.Name.Name) {
		return nil, cql.Invalid(fault.Pos{}, "Type name %s is reserved", st.Name.Name)
	}
	tm := typeMeta{Name: st.Name.Name}
	seen := map[string]bool{}
	for _, f := range st.Fields {
		if seen[f.Name] {
			return nil, cql.Invalid(fault.Pos{}, "Duplicate field name %s in type %s", f.Name, st.Name.Name)
		}
		seen[f.Name] = true
		typ, err := ks.resolve(f.Type)
		if err != nil {
			return nil, err
		}
		if typ.Kind == cqlvalue.Counter {
			return nil, cql.Invalid(fault.Pos{}, "A user type cannot contain counters")
		}
		tm.Fields = append(tm.Fields, columnMeta{Name: f.Name, Type: typ.String()})
	}
	m := ks.meta
	m.Types = append(slices.Clone(m.Types), tm)
	meta, _ := json.Marshal(m)
	if _, err := x.eng.SetKeyspaceMeta(ks.name, meta, ks.etag); err != nil {
		return nil, err
	}
	return x.changed(SchemaChange{Change: "CREATED", Target: "TYPE", Keyspace: ks.name, Name: st.Name.Name}), nil
}

func (x *Executor) dropType(sch *schema, s *Session, st *cql.DropType) (*Result, error) {
	ks, err := sch.tableKeyspace(s, st.Name)
	if err != nil {
		return nil, err
	}
	if ks.types[st.Name.Name] == nil {
		if st.IfExists {
			return &Result{Kind: ResultVoid}, nil
		}
		return nil, fault.New(fault.BadRequest, "No user type named %s exists.", st.Name.Name)
	}
	for _, t := range ks.tables {
		for _, c := range t.cols {
			if usesType(c.typ, st.Name.Name) {
				return nil, cql.Invalid(fault.Pos{}, "Cannot drop user type %s.%s as it is still used by table %s", ks.name, st.Name.Name, t.name)
			}
		}
	}
	m := ks.meta
	m.Types = slices.DeleteFunc(slices.Clone(m.Types), func(tm typeMeta) bool { return tm.Name == st.Name.Name })
	meta, _ := json.Marshal(m)
	if _, err := x.eng.SetKeyspaceMeta(ks.name, meta, ks.etag); err != nil {
		return nil, err
	}
	return x.changed(SchemaChange{Change: "DROPPED", Target: "TYPE", Keyspace: ks.name, Name: st.Name.Name}), nil
}

// usesType reports whether t is or holds the user type name.
func usesType(t *cqlvalue.Type, name string) bool {
	if t.Kind == cqlvalue.UDT && t.Name == name {
		return true
	}
	for _, e := range t.Elems {
		if usesType(e, name) {
			return true
		}
	}
	return false
}
