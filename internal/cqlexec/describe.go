package cqlexec

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/fault"
)

// DESCRIBE, served as Cassandra 4.0 serves it (cqlsh 6 sends it to servers of 4.0 and later,
// and prints what comes back): a list of objects is rows of (keyspace_name, type, name); an
// object's description is rows of (keyspace_name, type, name, create_statement), the object's
// CREATE statement first and then those of what it holds; CLUSTER is one row of (cluster,
// partitioner, snitch), with range_ownership when the session has a keyspace.

// describeCols are the columns of a description; a list has the first three.
var describeCols = []string{"keyspace_name", "type", "name", "create_statement"}

// describeRow is one described object.
type describeRow struct{ ks, typ, name, create string }

func (x *Executor) describe(s *Session, d *cql.Describe) (*Result, error) {
	if d.What == cql.DescribeCluster {
		return x.describeCluster(s)
	}
	return freshOnMiss(x, func(sch *schema) (*Result, error) {
		rows, list, err := describeRows(sch, s, d)
		if err != nil {
			return nil, err
		}
		cols := describeCols
		if list {
			cols = cols[:3]
		}
		res := &Result{Kind: ResultRows}
		for _, c := range cols {
			res.Columns = append(res.Columns, Column{Name: c, Type: cqlvalue.Native(cqlvalue.Text)})
		}
		for _, r := range rows {
			row := [][]byte{[]byte(r.ks), []byte(r.typ), []byte(r.name), []byte(r.create)}
			res.Rows = append(res.Rows, row[:len(cols)])
		}
		return res, nil
	})
}

// describeRows are the rows of d, and whether they are a list (no create statements).
func describeRows(sch *schema, s *Session, d *cql.Describe) (rows []describeRow, list bool, err error) {
	inScope := func(ks *keyspace) bool { return s.Keyspace == "" || ks.name == s.Keyspace }
	switch d.What {
	case cql.DescribeKeyspaces:
		for _, ks := range allKeyspaces(sch) {
			rows = append(rows, describeRow{ks.name, "keyspace", ks.name, ""})
		}
		return rows, true, nil
	case cql.DescribeTables:
		for _, t := range allTables(sch) {
			if ks := keyspaceOf(sch, t.ks); ks != nil && inScope(ks) {
				rows = append(rows, describeRow{t.ks, "table", t.name, ""})
			}
		}
		return rows, true, nil
	case cql.DescribeTypes:
		for _, ks := range allKeyspaces(sch) {
			if inScope(ks) {
				for _, tm := range ks.meta.Types {
					rows = append(rows, describeRow{ks.name, "type", tm.Name, ""})
				}
			}
		}
		return rows, true, nil
	case cql.DescribeFunctions, cql.DescribeAggregates:
		return nil, true, nil // Partita has no user-defined functions or aggregates
	case cql.DescribeSchema:
		for _, ks := range allKeyspaces(sch) {
			if d.Full || !systemKeyspaces[ks.name] {
				rows = append(rows, describeKeyspace(ks, false)...)
			}
		}
		return rows, false, nil
	case cql.DescribeKeyspace:
		name := d.Name.Name
		if name == "" {
			name = s.Keyspace
		}
		if name == "" {
			return nil, false, cql.Invalid(d.Start(), "No keyspace specified and no current keyspace")
		}
		ks := keyspaceOf(sch, name)
		if ks == nil {
			return nil, false, missing("Keyspace '%s' not found", name)
		}
		return describeKeyspace(ks, d.Only), false, nil
	case cql.DescribeTable:
		t, err := describedTable(sch, s, d.Name)
		if err != nil {
			return nil, false, err
		}
		return []describeRow{{t.ks, "table", t.name, createTable(t)}}, false, nil
	case cql.DescribeType:
		ks := keyspaceOf(sch, orSession(d.Name.Keyspace, s))
		if ks != nil {
			for _, tm := range ks.meta.Types {
				if tm.Name == d.Name.Name {
					return []describeRow{{ks.name, "type", tm.Name, createType(ks.name, tm)}}, false, nil
				}
			}
		}
		return nil, false, missing("User defined type '%s' not found in '%s'", d.Name.Name, orSession(d.Name.Keyspace, s))
	case cql.DescribeFunction:
		return nil, false, missing("User defined function '%s' not found in '%s'", d.Name.Name, orSession(d.Name.Keyspace, s))
	case cql.DescribeAggregate:
		return nil, false, missing("User defined aggregate '%s' not found in '%s'", d.Name.Name, orSession(d.Name.Keyspace, s))
	case cql.DescribeIndex:
		return nil, false, missing("Index '%s' not found in '%s'", d.Name.Name, orSession(d.Name.Keyspace, s))
	case cql.DescribeView:
		return nil, false, missing("Materialized view '%s' not found in '%s'", d.Name.Name, orSession(d.Name.Keyspace, s))
	}
	// DESCRIBE name: a keyspace, else a table.
	if d.Name.Keyspace == "" {
		if ks := keyspaceOf(sch, d.Name.Name); ks != nil {
			return describeKeyspace(ks, false), false, nil
		}
	}
	t, err := describedTable(sch, s, d.Name)
	if err != nil {
		return nil, false, missing("'%s' not found in keyspaces", d.Name.Name)
	}
	return []describeRow{{t.ks, "table", t.name, createTable(t)}}, false, nil
}

func orSession(ks string, s *Session) string {
	if ks == "" {
		return s.Keyspace
	}
	return ks
}

// keyspaceOf is the keyspace name, system or user; nil when there is none.
func keyspaceOf(sch *schema, name string) *keyspace {
	for _, ks := range allKeyspaces(sch) {
		if ks.name == name {
			return ks
		}
	}
	return nil
}

// describedTable is the table n names, a system table included.
func describedTable(sch *schema, s *Session, n cql.TableName) (*table, error) {
	ksName := orSession(n.Keyspace, s)
	if ksName == "" {
		return nil, cql.Invalid(fault.Pos{}, "No keyspace specified and no current keyspace")
	}
	if ks := keyspaceOf(sch, ksName); ks != nil {
		if t := ks.tables[n.Name]; t != nil {
			return t, nil
		}
		return nil, missing("Table '%s.%s' not found", ksName, n.Name)
	}
	return nil, missing("Keyspace '%s' not found", ksName)
}

// describeKeyspace is a keyspace's description: its CREATE KEYSPACE, then (unless only) its
// types and tables.
func describeKeyspace(ks *keyspace, only bool) []describeRow {
	rows := []describeRow{{ks.name, "keyspace", ks.name, createKeyspace(ks)}}
	if only {
		return rows
	}
	for _, tm := range ks.meta.Types {
		rows = append(rows, describeRow{ks.name, "type", tm.Name, createType(ks.name, tm)})
	}
	names := make([]string, 0, len(ks.tables))
	for n := range ks.tables {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		rows = append(rows, describeRow{ks.name, "table", n, createTable(ks.tables[n])})
	}
	return rows
}

func createKeyspace(ks *keyspace) string {
	return fmt.Sprintf("CREATE KEYSPACE %s WITH replication = %s AND durable_writes = %t;",
		cql.QuoteIdent(ks.name), textMapLiteral(ks.meta.Replication), ks.meta.DurableWrites)
}

// textMapLiteral is m as a CQL map literal, its keys in order.
func textMapLiteral(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, cql.QuoteString(k)+": "+cql.QuoteString(m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func createType(ks string, tm typeMeta) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TYPE %s.%s (\n", cql.QuoteIdent(ks), cql.QuoteIdent(tm.Name))
	for i, f := range tm.Fields {
		sep := ",\n"
		if i == len(tm.Fields)-1 {
			sep = "\n"
		}
		fmt.Fprintf(&b, "    %s %s%s", cql.QuoteIdent(f.Name), f.Type, sep)
	}
	b.WriteString(");")
	return b.String()
}

// createTable is a table's CREATE TABLE as Cassandra 4.0 prints it: a column a line, the
// primary key inline when it is one column, the options of system_schema.tables after WITH.
func createTable(t *table) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s.%s (\n", cql.QuoteIdent(t.ks), cql.QuoteIdent(t.name))
	single := len(t.pk) == 1 && len(t.ck) == 0
	for _, c := range t.cols {
		fmt.Fprintf(&b, "    %s %s", cql.QuoteIdent(c.name), c.typ)
		switch {
		case c.kind == static:
			b.WriteString(" static")
		case single && c.kind == partitionKey:
			b.WriteString(" PRIMARY KEY")
		}
		b.WriteString(",\n")
	}
	if single {
		s := b.String()
		b.Reset()
		b.WriteString(strings.TrimSuffix(s, ",\n") + "\n")
	} else {
		pk := names(t.pk)
		key := strings.Join(pk, ", ")
		if len(pk) > 1 {
			key = "(" + key + ")"
		}
		if len(t.ck) > 0 {
			key += ", " + strings.Join(names(t.ck), ", ")
		}
		fmt.Fprintf(&b, "    PRIMARY KEY (%s)\n", key)
	}
	b.WriteString(") WITH ")
	var opts []string
	if len(t.ck) > 0 {
		var order []string
		for _, c := range t.ck {
			dir := "ASC"
			if c.desc {
				dir = "DESC"
			}
			order = append(order, cql.QuoteIdent(c.name)+" "+dir)
		}
		opts = append(opts, "CLUSTERING ORDER BY ("+strings.Join(order, ", ")+")")
	}
	for _, o := range optionsOf(t) {
		opts = append(opts, o.name+" = "+o.cql)
	}
	b.WriteString(strings.Join(opts, "\n    AND "))
	b.WriteString(";")
	return b.String()
}

func names(cols []*column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = cql.QuoteIdent(c.name)
	}
	return out
}

func (x *Executor) describeCluster(s *Session) (*Result, error) {
	text := cqlvalue.Native(cqlvalue.Text)
	res := &Result{Kind: ResultRows, Columns: []Column{{Name: "cluster", Type: text}, {Name: "partitioner", Type: text}, {Name: "snitch", Type: text}}}
	row := [][]byte{[]byte(clusterName), []byte(partitionerName), []byte(snitchName)}
	if s.Keyspace != "" {
		owners := map[string][]string{}
		addr := "127.0.0.1"
		if s.Addr != nil {
			addr = s.Addr.String()
		}
		tokens := nodeTokens
		if r, ok := x.ring(true); ok {
			tokens = r.tokens
			for _, p := range r.peers {
				for _, tok := range p.tokens {
					owners[string(tok)] = []string{p.native.String()}
				}
			}
		}
		for _, tok := range tokens {
			owners[string(tok)] = []string{addr}
		}
		var ks, vs [][]byte
		for _, tok := range slices.Sorted(maps.Keys(owners)) {
			var elems [][]byte
			for _, o := range owners[tok] {
				elems = append(elems, []byte(o))
			}
			ks, vs = append(ks, []byte(tok)), append(vs, cqlvalue.EncodeList(elems...))
		}
		res.Columns = append(res.Columns, Column{Name: "range_ownership", Type: cqlvalue.MapOf(text, cqlvalue.FrozenOf(cqlvalue.ListOf(text)))})
		row = append(row, cqlvalue.EncodeMap(text, ks, vs))
	}
	res.Rows = [][][]byte{row}
	return res, nil
}
