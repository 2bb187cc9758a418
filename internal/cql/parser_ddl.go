package cql

// Schema statements: keyspaces, tables, indexes and types.

func (p *parser) createStmt(b base) Statement {
	p.expectKw("CREATE")
	switch {
	case p.acceptKw("KEYSPACE"):
		s := &CreateKeyspace{base: b, IfNotExists: p.ifNotExists()}
		s.Name = p.ident("a keyspace name")
		p.expectKw("WITH")
		s.Options = p.options()
		return s
	case p.acceptKw("TABLE") || p.acceptKw("COLUMNFAMILY"):
		return p.createTable(b)
	case p.isKw("CUSTOM") || p.isKw("INDEX"):
		return p.createIndex(b)
	case p.isKw("TYPE"):
		p.advance()
		s := &CreateType{base: b, IfNotExists: p.ifNotExists()}
		s.Name = p.tableName("a type name")
		p.expectPunct("(")
		for {
			s.Fields = append(s.Fields, ColumnDef{Name: p.ident("a field name"), Type: p.dataType()})
			if !p.acceptPunct(",") {
				break
			}
		}
		p.expectPunct(")")
		return s
	}
	p.failExpected("KEYSPACE, TABLE, INDEX or TYPE after CREATE")
	return nil
}

func (p *parser) alterStmt(b base) Statement {
	p.expectKw("ALTER")
	if p.acceptKw("KEYSPACE") {
		s := &AlterKeyspace{base: b, Name: p.ident("a keyspace name")}
		p.expectKw("WITH")
		s.Options = p.options()
		return s
	}
	if !p.acceptKw("TABLE") && !p.acceptKw("COLUMNFAMILY") {
		p.failExpected("KEYSPACE or TABLE after ALTER")
	}
	s := &AlterTable{base: b, Table: p.tableName("a table name")}
	switch {
	case p.acceptKw("ADD"):
		s.Kind = AlterAdd
		if p.acceptPunct("(") {
			for {
				s.Add = append(s.Add, p.columnDef())
				if !p.acceptPunct(",") {
					break
				}
			}
			p.expectPunct(")")
		} else {
			s.Add = []ColumnDef{p.columnDef()}
		}
	case p.acceptKw("DROP"):
		s.Kind = AlterDrop
		if p.isPunct("(") {
			s.Drop = p.identList("a column name")
		} else {
			s.Drop = []string{p.ident("a column name")}
		}
	case p.acceptKw("WITH"):
		s.Kind = AlterWith
		s.Options = p.options()
	default:
		p.failExpected("ADD, DROP or WITH")
	}
	return s
}

func (p *parser) dropStmt(b base) Statement {
	p.expectKw("DROP")
	switch {
	case p.acceptKw("KEYSPACE"):
		s := &DropKeyspace{base: b, IfExists: p.ifExists()}
		s.Name = p.ident("a keyspace name")
		return s
	case p.acceptKw("TABLE") || p.acceptKw("COLUMNFAMILY"):
		s := &DropTable{base: b, IfExists: p.ifExists()}
		s.Table = p.tableName("a table name")
		return s
	case p.acceptKw("INDEX"):
		s := &DropIndex{base: b, IfExists: p.ifExists()}
		s.Name = p.tableName("an index name")
		return s
	case p.isKw("TYPE"):
		p.advance()
		s := &DropType{base: b, IfExists: p.ifExists()}
		s.Name = p.tableName("a type name")
		return s
	}
	p.failExpected("KEYSPACE, TABLE, INDEX or TYPE after DROP")
	return nil
}

func (p *parser) ifNotExists() bool {
	if !p.acceptKw("IF") {
		return false
	}
	p.expectKw("NOT")
	if !p.isKw("EXISTS") {
		p.failExpected("EXISTS")
	}
	p.advance()
	return true
}

func (p *parser) ifExists() bool {
	if !p.acceptKw("IF") {
		return false
	}
	if !p.isKw("EXISTS") {
		p.failExpected("EXISTS")
	}
	p.advance()
	return true
}

// options parses name = value AND ...; a value is a constant or a map literal.
func (p *parser) options() Options {
	var opts Options
	for {
		t := p.tok()
		name := p.ident("an option name")
		if opts.Get(name) != nil {
			p.invalid(t.off, "option %s is given twice", name)
		}
		p.expectPunct("=")
		opts = append(opts, Option{Name: name, Value: p.optionValue()})
		if !p.acceptKw("AND") {
			return opts
		}
	}
}

// optionValue is a constant (possibly negative) or a map literal.
func (p *parser) optionValue() Term {
	t := p.tok()
	switch {
	case t.kind == tkPunct && t.val == "{":
		v := p.term()
		if _, ok := v.(*Map); !ok {
			p.fail(t.off, "an option's value must be a constant or a map literal {'key': value, ...}")
		}
		return v
	case t.kind == tkPunct && t.val == "-",
		t.kind == tkString, t.kind == tkInteger, t.kind == tkFloat, t.kind == tkBool,
		t.kind == tkHex, t.kind == tkUUID, t.kind == tkDuration:
		return p.term()
	}
	p.failExpected("a constant or a map literal as the option's value")
	return nil
}

func (p *parser) columnDef() ColumnDef {
	c := ColumnDef{Name: p.ident("a column name"), Type: p.dataType()}
	if p.isKw("STATIC") {
		p.advance()
		c.Static = true
	}
	return c
}

func (p *parser) createTable(b base) *CreateTable {
	s := &CreateTable{base: b, IfNotExists: p.ifNotExists()}
	s.Table = p.tableName("a table name")
	p.expectPunct("(")
	keyAt := -1 // offset of the primary key declaration, to refuse a second one
	declareKey := func(off int) {
		if keyAt >= 0 {
			p.invalid(off, "the primary key is declared twice (exactly one PRIMARY KEY is required)")
		}
		keyAt = off
	}
	for {
		if t := p.tok(); p.isKw("PRIMARY") {
			declareKey(t.off)
			p.advance()
			p.expectKw("KEY")
			p.primaryKey(s)
		} else {
			s.Columns = append(s.Columns, p.columnDef())
			if t := p.tok(); p.isKw("PRIMARY") {
				declareKey(t.off)
				p.advance()
				p.expectKw("KEY")
				s.PartitionKey = []string{s.Columns[len(s.Columns)-1].Name}
			}
		}
		if !p.acceptPunct(",") {
			break
		}
		if p.isPunct(")") { // a trailing comma, as Cassandra accepts
			break
		}
	}
	p.expectPunct(")")
	if keyAt < 0 {
		p.invalid(p.toks[p.i-1].off, "a table needs a PRIMARY KEY")
	}
	if p.acceptKw("WITH") {
		for {
			switch {
			case p.isKw("CLUSTERING") && p.peek(1).kw == "ORDER":
				t := p.tok()
				if s.ClusteringOrder != nil {
					p.invalid(t.off, "CLUSTERING ORDER is given twice")
				}
				p.advance()
				p.expectKw("ORDER")
				p.expectKw("BY")
				p.expectPunct("(")
				s.ClusteringOrder = []Ordering{}
				for {
					s.ClusteringOrder = append(s.ClusteringOrder, p.ordering())
					if !p.acceptPunct(",") {
						break
					}
				}
				p.expectPunct(")")
			case p.isKw("COMPACT") && p.peek(1).kw == "STORAGE":
				p.advance()
				p.advance()
				s.CompactStorage = true
			default:
				t := p.tok()
				name := p.ident("a table option")
				if s.Options.Get(name) != nil {
					p.invalid(t.off, "option %s is given twice", name)
				}
				p.expectPunct("=")
				s.Options = append(s.Options, Option{Name: name, Value: p.optionValue()})
			}
			if !p.acceptKw("AND") {
				break
			}
		}
	}
	return s
}

// primaryKey parses the (pk, ck, ...) or ((pk1, pk2), ck, ...) after PRIMARY KEY.
func (p *parser) primaryKey(s *CreateTable) {
	p.expectPunct("(")
	if p.isPunct("(") {
		s.PartitionKey = p.identList("a column name")
	} else {
		s.PartitionKey = []string{p.ident("a column name")}
	}
	for p.acceptPunct(",") {
		s.Clustering = append(s.Clustering, p.ident("a column name"))
	}
	p.expectPunct(")")
}

// createIndex parses CREATE [CUSTOM] INDEX [IF NOT EXISTS] [name] ON t (target) [USING 'class'].
func (p *parser) createIndex(b base) *CreateIndex {
	s := &CreateIndex{base: b}
	custom := false
	if p.isKw("CUSTOM") {
		p.advance()
		custom = true
	}
	p.expectKw("INDEX")
	s.IfNotExists = p.ifNotExists()
	if !p.isKw("ON") {
		s.Name = p.ident("an index name or ON")
	}
	p.expectKw("ON")
	s.Table = p.tableName("a table name")
	p.expectPunct("(")
	targets := map[string]IndexTarget{"keys": IndexKeys, "values": IndexValues, "entries": IndexEntries, "full": IndexFull}
	t := p.tok()
	if tg, ok := targets[t.val]; ok && t.kind == tkWord && p.peek(1).kind == tkPunct && p.peek(1).val == "(" {
		p.advance()
		p.advance()
		s.Target = tg
		s.Column = p.ident("a column name")
		p.expectPunct(")")
	} else {
		s.Column = p.ident("a column name")
	}
	p.expectPunct(")")
	if custom {
		p.expectKw("USING")
		t := p.tok()
		if t.kind != tkString {
			p.failExpected("the index class as a string")
		}
		p.advance()
		s.Custom = t.val
		if s.Custom == "" {
			p.fail(t.off, "the index class cannot be empty")
		}
	}
	return s
}

// describeStmt parses what follows DESCRIBE, Cassandra 4.0's grammar:
//
//	CLUSTER | [FULL] SCHEMA | KEYSPACES | [ONLY] KEYSPACE [name] [WITH INTERNALS]
//	| TABLES | COLUMNFAMILIES | TABLE|COLUMNFAMILY name [WITH INTERNALS] | TYPES | TYPE name
//	| FUNCTIONS | FUNCTION name | AGGREGATES | AGGREGATE name | INDEX name
//	| MATERIALIZED VIEW name | name [WITH INTERNALS]
func (p *parser) describeStmt(b base) *Describe {
	d := &Describe{base: b}
	named := func(w DescribeWhat, what string) {
		d.What, d.Name = w, p.tableName(what)
	}
	switch {
	case p.acceptKw("CLUSTER"):
		d.What = DescribeCluster
	case p.acceptKw("FULL"):
		p.expectKw("SCHEMA")
		d.What, d.Full = DescribeSchema, true
	case p.acceptKw("SCHEMA"):
		d.What = DescribeSchema
	case p.acceptKw("KEYSPACES"):
		d.What = DescribeKeyspaces
	case p.isKw("ONLY"), p.isKw("KEYSPACE"):
		d.Only = p.acceptKw("ONLY")
		p.expectKw("KEYSPACE")
		d.What = DescribeKeyspace
		if p.isIdent() {
			d.Name.Name = p.ident("a keyspace name")
		}
	case p.acceptKw("TABLES"), p.acceptKw("COLUMNFAMILIES"):
		d.What = DescribeTables
	case p.acceptKw("TABLE"), p.acceptKw("COLUMNFAMILY"):
		named(DescribeTable, "a table name")
	case p.acceptKw("TYPES"):
		d.What = DescribeTypes
	case p.acceptKw("TYPE"):
		named(DescribeType, "a type name")
	case p.acceptKw("FUNCTIONS"):
		d.What = DescribeFunctions
	case p.acceptKw("FUNCTION"):
		named(DescribeFunction, "a function name")
	case p.acceptKw("AGGREGATES"):
		d.What = DescribeAggregates
	case p.acceptKw("AGGREGATE"):
		named(DescribeAggregate, "an aggregate name")
	case p.acceptKw("INDEX"):
		named(DescribeIndex, "an index name")
	case p.acceptKw("MATERIALIZED"):
		p.expectKw("VIEW")
		named(DescribeView, "a view name")
	case p.isIdent():
		named(DescribeObject, "a keyspace, table, index or view name")
	default:
		p.failExpected("what to describe (CLUSTER, SCHEMA, KEYSPACES, KEYSPACE, TABLES, TABLE, TYPES, TYPE, FUNCTIONS, AGGREGATES, INDEX, MATERIALIZED VIEW or a name)")
	}
	switch d.What {
	case DescribeKeyspace, DescribeTable, DescribeObject:
		if p.acceptKw("WITH") {
			p.expectKw("INTERNALS")
			d.Internals = true
		}
	}
	return d
}
