package cqlexec

import (
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/fault"
)

// The system tables drivers read when they connect and when they build their metadata,
// served from the real schema: system.local (this node: its address, its tokens, the schema
// version), system.peers and peers_v2 (the other nodes of a cluster, peers.go; none on a node
// alone) and the system_schema tables that
// describe keyspaces, tables, columns and types. They are virtual: computed per query, read
// only.

// Partita presents itself as a Cassandra 4.0 node, the first to serve DESCRIBE (cqlsh 6 sends
// it only to servers of 4.0 and later): drivers then read system.peers_v2 first, and the
// system_virtual_schema tables, which list no virtual keyspace here. Its system_schema tables
// are 3.11's, which 4.0's drivers read alike.
const (
	releaseVersion  = "4.0.13"
	cqlVersion      = "3.4.5"
	clusterName     = "Partita"
	dataCenter      = "datacenter1"
	rack            = "rack1"
	snitchName      = "org.apache.cassandra.locator.SimpleSnitch"
	partitionerName = "org.apache.cassandra.dht.Murmur3Partitioner"
)

// nodeTokens are the tokens system.local announces: Partita's one node owns the whole ring,
// which drivers learn from any set of tokens; eight evenly spaced ones give token-aware
// drivers (and tools that split the ring by them, as Spark does) eight ranges to work with.
var nodeTokens = func() [][]byte {
	var out [][]byte
	for i := range 8 {
		t := int64(uint64(i)<<61) + 1<<61 - 1 // the last token of the i-th eighth, from -2^63
		t ^= -1 << 63
		out = append(out, []byte(strconv.FormatInt(t, 10)))
	}
	sort.Slice(out, func(i, j int) bool {
		a, _ := strconv.ParseInt(string(out[i]), 10, 64)
		b, _ := strconv.ParseInt(string(out[j]), 10, 64)
		return a < b
	})
	return out
}()

// virtualTable computes a system table's rows for a session.
type virtualTable func(x *Executor, sch *schema, s *Session) []*rowDoc

// vcol is a virtual table's column.
type vcol struct {
	name string
	typ  string
	kind colKind
}

var (
	text     = "text"
	textSet  = "set<text>"
	frozenMT = "frozen<map<text, text>>"
)

// tableOptionCols are the options system_schema.tables and views show.
var tableOptionCols = []vcol{
	{"bloom_filter_fp_chance", "double", regular}, {"caching", frozenMT, regular}, {"cdc", "boolean", regular},
	{"comment", text, regular}, {"compaction", frozenMT, regular}, {"compression", frozenMT, regular},
	{"crc_check_chance", "double", regular}, {"dclocal_read_repair_chance", "double", regular},
	{"default_time_to_live", "int", regular}, {"extensions", "frozen<map<text, blob>>", regular},
	{"gc_grace_seconds", "int", regular}, {"id", "uuid", regular},
	{"max_index_interval", "int", regular}, {"memtable_flush_period_in_ms", "int", regular},
	{"min_index_interval", "int", regular}, {"read_repair_chance", "double", regular},
	{"speculative_retry", text, regular},
}

// systemTables are the virtual tables by keyspace and name, with their columns.
var systemTables = map[string]map[string][]vcol{
	"system": {
		"local": {{"key", text, partitionKey}, {"bootstrapped", text, regular}, {"broadcast_address", "inet", regular},
			{"cluster_name", text, regular}, {"cql_version", text, regular}, {"data_center", text, regular},
			{"gossip_generation", "int", regular}, {"host_id", "uuid", regular}, {"listen_address", "inet", regular},
			{"native_protocol_version", text, regular}, {"partitioner", text, regular}, {"rack", text, regular},
			{"release_version", text, regular}, {"rpc_address", "inet", regular}, {"schema_version", "uuid", regular},
			{"thrift_version", text, regular}, {"tokens", textSet, regular}, {"truncated_at", "map<uuid, blob>", regular}},
		"peers": {{"peer", "inet", partitionKey}, {"data_center", text, regular}, {"host_id", "uuid", regular},
			{"preferred_ip", "inet", regular}, {"rack", text, regular}, {"release_version", text, regular},
			{"rpc_address", "inet", regular}, {"schema_version", "uuid", regular}, {"tokens", textSet, regular}},
		"peers_v2": {{"peer", "inet", partitionKey}, {"peer_port", "int", clustering}, {"data_center", text, regular},
			{"host_id", "uuid", regular}, {"native_address", "inet", regular}, {"native_port", "int", regular},
			{"preferred_ip", "inet", regular}, {"preferred_port", "int", regular}, {"rack", text, regular},
			{"release_version", text, regular}, {"schema_version", "uuid", regular}, {"tokens", textSet, regular}},
	},
	"system_virtual_schema": {
		"keyspaces": {{"keyspace_name", text, partitionKey}},
		"tables":    {{"keyspace_name", text, partitionKey}, {"table_name", text, clustering}, {"comment", text, regular}},
		"columns": {{"keyspace_name", text, partitionKey}, {"table_name", text, clustering}, {"column_name", text, clustering},
			{"clustering_order", text, regular}, {"column_name_bytes", "blob", regular}, {"kind", text, regular},
			{"position", "int", regular}, {"type", text, regular}},
	},
	"system_schema": {
		"keyspaces": {{"keyspace_name", text, partitionKey}, {"durable_writes", "boolean", regular}, {"replication", frozenMT, regular}},
		"tables": append([]vcol{{"keyspace_name", text, partitionKey}, {"table_name", text, clustering},
			{"flags", "frozen<set<text>>", regular}}, tableOptionCols...),
		"columns": {{"keyspace_name", text, partitionKey}, {"table_name", text, clustering}, {"column_name", text, clustering},
			{"clustering_order", text, regular}, {"column_name_bytes", "blob", regular}, {"kind", text, regular},
			{"position", "int", regular}, {"type", text, regular}},
		"types": {{"keyspace_name", text, partitionKey}, {"type_name", text, clustering},
			{"field_names", "frozen<list<text>>", regular}, {"field_types", "frozen<list<text>>", regular}},
		"functions": {{"keyspace_name", text, partitionKey}, {"function_name", text, clustering},
			{"argument_types", "frozen<list<text>>", clustering}, {"argument_names", "frozen<list<text>>", regular},
			{"body", text, regular}, {"called_on_null_input", "boolean", regular}, {"language", text, regular},
			{"return_type", text, regular}},
		"aggregates": {{"keyspace_name", text, partitionKey}, {"aggregate_name", text, clustering},
			{"argument_types", "frozen<list<text>>", clustering}, {"final_func", text, regular}, {"initcond", text, regular},
			{"return_type", text, regular}, {"state_func", text, regular}, {"state_type", text, regular}},
		"views": append([]vcol{{"keyspace_name", text, partitionKey}, {"view_name", text, clustering},
			{"base_table_id", "uuid", regular}, {"base_table_name", text, regular},
			{"include_all_columns", "boolean", regular}, {"where_clause", text, regular}}, tableOptionCols...),
		"indexes": {{"keyspace_name", text, partitionKey}, {"table_name", text, clustering}, {"index_name", text, clustering},
			{"kind", text, regular}, {"options", frozenMT, regular}},
		"triggers": {{"keyspace_name", text, partitionKey}, {"table_name", text, clustering}, {"trigger_name", text, clustering},
			{"options", frozenMT, regular}},
		"dropped_columns": {{"keyspace_name", text, partitionKey}, {"table_name", text, clustering}, {"column_name", text, clustering},
			{"dropped_time", "timestamp", regular}, {"type", text, regular}},
	},
}

// virtualRows computes the rows of the system tables that have any.
var virtualRows = map[string]virtualTable{
	"system.local":            localRows,
	"system.peers":            peerRows,
	"system.peers_v2":         peerV2Rows,
	"system_schema.keyspaces": keyspaceRows,
	"system_schema.tables":    tableRows,
	"system_schema.columns":   columnRows,
	"system_schema.types":     typeRows,
}

// selectTable is the table a SELECT reads: a user table, or a system table.
func (x *Executor) selectTable(sch *schema, s *Session, n cql.TableName) (*table, error) {
	ksName := n.Keyspace
	if ksName == "" {
		ksName = s.Keyspace
	}
	if tables, ok := systemTables[ksName]; ok {
		cols, ok := tables[n.Name]
		if !ok {
			return nil, fault.New(fault.BadRequest, "table %s does not exist", n.Name)
		}
		return systemTable(ksName, n.Name, cols), nil
	}
	return sch.table(s, n)
}

// systemTable builds a virtual table's description.
func systemTable(ks, name string, cols []vcol) *table {
	tm := tableMeta{ID: nameUUID([]byte(ks + "." + name))}
	for _, c := range cols {
		tm.Columns = append(tm.Columns, columnMeta{Name: c.name, Type: c.typ})
		switch c.kind {
		case partitionKey:
			tm.PartitionKey = append(tm.PartitionKey, c.name)
		case clustering:
			tm.Clustering = append(tm.Clustering, c.name)
		}
	}
	k := &keyspace{name: ks, types: map[string]*cqlvalue.Type{}}
	t, err := k.newTable(name, tm)
	if err != nil {
		panic(fmt.Sprintf("system table %s.%s: %v", ks, name, err)) // the definitions above are fixed
	}
	fn := virtualRows[ks+"."+name]
	if fn == nil {
		fn = func(*Executor, *schema, *Session) []*rowDoc { return nil }
	}
	t.virtual = fn
	return t
}

// virtual serves a SELECT of a system table: every row computed, then filtered.
func (rd *reader) virtual() (*Result, error) {
	sch, err := rd.x.schema()
	if err != nil {
		return nil, err
	}
	t := rd.sp.t
	var rows []*rowDoc
	for _, r := range t.virtual(rd.x, sch, rd.sess) {
		rows = append(rows, withKey(t, r))
	}
	if rd.sp.aggregate {
		rd.agg = newAggregator(rd.sp.items)
	}
	for _, r := range rows {
		if !rd.pass(r) {
			continue
		}
		row := rd.project(r)
		if rd.agg != nil {
			rd.agg.add(row)
			continue
		}
		rd.out = append(rd.out, row)
		if rd.limit > 0 && len(rd.out) >= rd.limit {
			break
		}
	}
	return rd.result()
}

// withKey gives a virtual row its key values, from its cells, as a stored row has them.
func withKey(t *table, r *rowDoc) *rowDoc {
	for _, c := range append(append([]*column(nil), t.pk...), t.ck...) {
		var v []byte
		if cell := r.Cells[c.name]; cell != nil {
			v = cell.V
		}
		r.Key = append(r.Key, v)
	}
	return r
}

// cells is a virtual row with the values given by column name.
func cells(vals map[string][]byte) *rowDoc {
	r := &rowDoc{Cells: map[string]*cellDoc{}}
	for n, v := range vals {
		if v != nil {
			r.Cells[n] = &cellDoc{V: v}
		}
	}
	return r
}

func localRows(x *Executor, sch *schema, s *Session) []*rowDoc {
	addr := s.Addr
	if addr == nil {
		addr = net.IPv4(127, 0, 0, 1)
	}
	ip := addr.To4()
	if ip == nil {
		ip = addr.To16()
	}
	v := sch.uuid()
	host, tokens := nameUUID([]byte("partita-host")), nodeTokens
	if r, ok := x.ring(true); ok {
		host, tokens = hostID(r.self), r.tokens
	}
	return []*rowDoc{cells(map[string][]byte{
		"key": []byte("local"), "bootstrapped": []byte("COMPLETED"), "broadcast_address": ip,
		"cluster_name": []byte(clusterName), "cql_version": []byte(cqlVersion), "data_center": []byte(dataCenter),
		"gossip_generation": cqlvalue.EncodeInt(1), "host_id": host[:], "listen_address": ip,
		"native_protocol_version": []byte("4"), "partitioner": []byte(partitionerName), "rack": []byte(rack),
		"release_version": []byte(releaseVersion), "rpc_address": ip, "schema_version": v[:],
		"thrift_version": []byte("20.1.0"), "tokens": cqlvalue.EncodeSet(cqlvalue.Native(cqlvalue.Text), tokens...),
	})}
}

func textMap(m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var ks, vs [][]byte
	for _, k := range keys {
		ks, vs = append(ks, []byte(k)), append(vs, []byte(m[k]))
	}
	return cqlvalue.EncodeMap(cqlvalue.Native(cqlvalue.Text), ks, vs)
}

// systemKeyspaceList are the system keyspaces drivers expect to see, with the virtual tables
// Partita serves in them, so that system_schema describes those tables too (cqlsh reads a
// table's description before it selects from it).
var systemKeyspaceList []*keyspace

// (Built in init: the tables' rows functions read the keyspaces list.)
func init() { systemKeyspaceList = systemKeyspacesWithTables() }

func systemKeyspacesWithTables() []*keyspace {
	var out []*keyspace
	for _, name := range []string{"system", "system_schema", "system_auth", "system_distributed", "system_traces"} {
		ks := &keyspace{name: name, tables: map[string]*table{}, meta: keyspaceMeta{DurableWrites: true,
			Replication: map[string]string{"class": "org.apache.cassandra.locator.LocalStrategy"}}}
		for tn, cols := range systemTables[name] {
			ks.tables[tn] = systemTable(name, tn, cols)
		}
		out = append(out, ks)
	}
	return out
}

// allKeyspaces lists the system keyspaces and the user keyspaces.
func allKeyspaces(sch *schema) []*keyspace {
	out := slices.Clone(systemKeyspaceList)
	names := make([]string, 0, len(sch.keyspaces))
	for n := range sch.keyspaces {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out = append(out, sch.keyspaces[n])
	}
	return out
}

func keyspaceRows(x *Executor, sch *schema, s *Session) []*rowDoc {
	var out []*rowDoc
	for _, ks := range allKeyspaces(sch) {
		out = append(out, cells(map[string][]byte{
			"keyspace_name": []byte(ks.name), "durable_writes": cqlvalue.EncodeBoolean(ks.meta.DurableWrites),
			"replication": textMap(ks.meta.Replication),
		}))
	}
	return out
}

// allTables lists every table, the system keyspaces' virtual ones first, in keyspace and name order.
func allTables(sch *schema) []*table {
	var out []*table
	for _, ks := range allKeyspaces(sch) {
		names := make([]string, 0, len(ks.tables))
		for n := range ks.tables {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			out = append(out, ks.tables[n])
		}
	}
	return out
}

// tableOption is one of a table's options, as system_schema.tables holds it and as DESCRIBE
// prints it.
type tableOption struct {
	name string
	cell []byte
	cql  string
}

// optionsOf are t's options: its comment and default time to live, and Cassandra's
// defaults for what Partita has no use for.
func optionsOf(t *table) []tableOption {
	num := func(name string, cell []byte, v string) tableOption { return tableOption{name, cell, v} }
	textMapOpt := func(name string, m map[string]string) tableOption {
		return tableOption{name, textMap(m), textMapLiteral(m)}
	}
	return []tableOption{
		num("bloom_filter_fp_chance", cqlvalue.EncodeDouble(0.01), "0.01"),
		textMapOpt("caching", map[string]string{"keys": "ALL", "rows_per_partition": "NONE"}),
		num("cdc", cqlvalue.EncodeBoolean(false), "false"),
		{"comment", []byte(t.meta.Comment), cql.QuoteString(t.meta.Comment)},
		textMapOpt("compaction", map[string]string{"class": "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy"}),
		textMapOpt("compression", map[string]string{}),
		num("crc_check_chance", cqlvalue.EncodeDouble(1), "1.0"),
		num("dclocal_read_repair_chance", cqlvalue.EncodeDouble(0), "0.0"),
		num("default_time_to_live", cqlvalue.EncodeInt(int32(t.meta.DefaultTTL)), strconv.Itoa(t.meta.DefaultTTL)),
		num("gc_grace_seconds", cqlvalue.EncodeInt(864000), "864000"),
		num("max_index_interval", cqlvalue.EncodeInt(2048), "2048"),
		num("memtable_flush_period_in_ms", cqlvalue.EncodeInt(0), "0"),
		num("min_index_interval", cqlvalue.EncodeInt(128), "128"),
		num("read_repair_chance", cqlvalue.EncodeDouble(0), "0.0"),
		{"speculative_retry", []byte("99PERCENTILE"), "'99PERCENTILE'"},
	}
}

func tableRows(x *Executor, sch *schema, s *Session) []*rowDoc {
	var out []*rowDoc
	for _, t := range allTables(sch) {
		flags := "compound"
		if t.counter {
			flags = "counter"
		}
		id := t.meta.ID
		vals := map[string][]byte{
			"keyspace_name": []byte(t.ks), "table_name": []byte(t.name), "id": id[:],
			"extensions": cqlvalue.EncodeMap(cqlvalue.Native(cqlvalue.Text), nil, nil),
			"flags":      cqlvalue.EncodeSet(cqlvalue.Native(cqlvalue.Text), []byte(flags)),
		}
		for _, o := range optionsOf(t) {
			vals[o.name] = o.cell
		}
		out = append(out, cells(vals))
	}
	return out
}

func columnRows(x *Executor, sch *schema, s *Session) []*rowDoc {
	var out []*rowDoc
	for _, t := range allTables(sch) {
		for _, c := range t.cols {
			order, pos := "none", int32(-1)
			switch c.kind {
			case partitionKey:
				pos = int32(c.pos)
			case clustering:
				pos, order = int32(c.pos), "asc"
				if c.desc {
					order = "desc"
				}
			}
			typ := c.typ.String()
			out = append(out, cells(map[string][]byte{
				"keyspace_name": []byte(t.ks), "table_name": []byte(t.name), "column_name": []byte(c.name),
				"clustering_order": []byte(order), "column_name_bytes": []byte(c.name),
				"kind": []byte(colKindNames[c.kind]), "position": cqlvalue.EncodeInt(pos), "type": []byte(typ),
			}))
		}
	}
	return out
}

func typeRows(x *Executor, sch *schema, s *Session) []*rowDoc {
	var out []*rowDoc
	for _, ks := range allKeyspaces(sch) {
		for _, tm := range ks.meta.Types {
			var names, types [][]byte
			for _, f := range tm.Fields {
				names, types = append(names, []byte(f.Name)), append(types, []byte(f.Type))
			}
			out = append(out, cells(map[string][]byte{
				"keyspace_name": []byte(ks.name), "type_name": []byte(tm.Name),
				"field_names": cqlvalue.EncodeList(names...), "field_types": cqlvalue.EncodeList(types...),
			}))
		}
	}
	return out
}
