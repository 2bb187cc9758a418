package cql

// INSERT, UPDATE, DELETE and BATCH.

func (p *parser) insertStmt(b base) *Insert {
	p.expectKw("INSERT")
	p.expectKw("INTO")
	s := &Insert{base: b, Table: p.tableName("a table name")}
	if p.isKw("JSON") {
		p.advance()
		if p.isBindAhead() {
			s.JSON = p.bindMarker()
		} else if t := p.tok(); t.kind == tkString {
			p.advance()
			s.JSON = &Constant{Kind: ConstString, Text: t.val}
		} else {
			p.failExpected("a JSON string or a bind marker")
		}
		if p.acceptKw("DEFAULT") {
			if p.acceptKw("UNSET") {
				s.JSONDefaultUnset = true
			} else {
				p.expectKw("NULL")
			}
		}
	} else {
		s.Columns = p.identList("a column name")
		if !p.isKw("VALUES") {
			p.failExpected("VALUES")
		}
		p.advance()
		s.Values = p.termList("(", ")", false)
		if len(s.Values) != len(s.Columns) {
			p.invalid(p.toks[p.i-1].off, "unmatched column names/values: %d columns but %d values",
				len(s.Columns), len(s.Values))
		}
	}
	if p.acceptKw("IF") {
		p.expectKw("NOT")
		if !p.isKw("EXISTS") {
			p.failExpected("EXISTS")
		}
		p.advance()
		s.IfNotExists = true
	}
	s.Using = p.using(true)
	return s
}

// using parses [USING TTL t AND TIMESTAMP ts] in either order; TTL only when ttlOK.
func (p *parser) using(ttlOK bool) Using {
	var u Using
	if !p.acceptKw("USING") {
		return u
	}
	for {
		switch {
		case ttlOK && p.isKw("TTL") && u.TTL == nil:
			p.advance()
			u.TTL = p.limitValue()
		case p.isKw("TIMESTAMP") && u.Timestamp == nil:
			p.advance()
			u.Timestamp = p.usingInteger()
		default:
			if ttlOK {
				p.failExpected("TTL or TIMESTAMP")
			}
			p.failExpected("TIMESTAMP")
		}
		if !p.acceptKw("AND") {
			return u
		}
	}
}

// usingInteger is the (possibly negative) integer or bind marker of USING TIMESTAMP.
func (p *parser) usingInteger() Term {
	if p.isPunct("-") && p.peek(1).kind == tkInteger {
		return p.negative()
	}
	return p.limitValue()
}

func (p *parser) updateStmt(b base) *Update {
	p.expectKw("UPDATE")
	s := &Update{base: b, Table: p.tableName("a table name")}
	s.Using = p.using(true)
	p.expectKw("SET")
	for {
		s.Set = append(s.Set, p.assignment())
		if !p.acceptPunct(",") {
			break
		}
	}
	p.expectKw("WHERE")
	s.Where = p.where()
	s.IfExists, s.Conditions = p.conditions()
	return s
}

// assignment parses c = v, c[k] = v, c = c + v, c = c - v, c = v + c, c += v, c -= v.
func (p *parser) assignment() Assignment {
	a := Assignment{Column: p.ident("a column name")}
	if p.acceptPunct("[") {
		a.Key = p.term()
		p.expectPunct("]")
		p.expectPunct("=")
		a.Value = p.term()
		return a
	}
	switch {
	case p.acceptPunct("+="):
		a.Op, a.Value = AssignAdd, p.term()
		return a
	case p.acceptPunct("-="):
		a.Op, a.Value = AssignSub, p.term()
		return a
	}
	p.expectPunct("=")
	if p.isIdent() && !p.isFuncCallAhead() {
		// c = c + v or c = c - v: the column must be the one assigned, as in Cassandra.
		t := p.tok()
		if other := p.ident("a column name"); other != a.Column {
			p.fail(t.off, "only expressions of the form %s = %s + <value> are supported", a.Column, a.Column)
		}
		switch {
		case p.acceptPunct("+"):
			a.Op = AssignAdd
		case p.acceptPunct("-"):
			a.Op = AssignSub
		default:
			p.failExpected("'+' or '-'")
		}
		a.Value = p.term()
		return a
	}
	a.Value = p.term()
	if p.isPunct("+") {
		p.advance()
		t := p.tok()
		if other := p.ident("a column name"); other != a.Column {
			p.fail(t.off, "only expressions of the form %s = <value> + %s are supported", a.Column, a.Column)
		}
		a.Op = AssignPrepend
	}
	return a
}

// conditions parses [IF EXISTS | IF condition AND ...].
func (p *parser) conditions() (ifExists bool, cs []Condition) {
	if !p.acceptKw("IF") {
		return false, nil
	}
	// EXISTS is unreserved: IF exists = 1 is a condition on a column named exists.
	if p.isKw("EXISTS") && !p.isOperatorAt(1) {
		p.advance()
		return true, nil
	}
	for {
		c := Condition{Column: p.ident("a column name")}
		if p.acceptPunct("[") {
			c.Key = p.term()
			p.expectPunct("]")
		}
		c.Op = p.operator(false)
		if c.Op == OpIn && p.isPunct("(") {
			c.In = p.termList("(", ")", true)
		} else {
			c.Value = p.term()
		}
		cs = append(cs, c)
		if !p.acceptKw("AND") {
			return false, cs
		}
	}
}

func (p *parser) deleteStmt(b base) *Delete {
	p.expectKw("DELETE")
	s := &Delete{base: b}
	if !p.isKw("FROM") {
		for {
			d := Deletion{Column: p.ident("a column name or FROM")}
			if p.acceptPunct("[") {
				d.Key = p.term()
				p.expectPunct("]")
			}
			s.Columns = append(s.Columns, d)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	p.expectKw("FROM")
	s.Table = p.tableName("a table name")
	s.Using = p.using(false)
	p.expectKw("WHERE")
	s.Where = p.where()
	s.IfExists, s.Conditions = p.conditions()
	return s
}

func (p *parser) batchStmt(b base) *Batch {
	p.expectKw("BEGIN")
	s := &Batch{base: b}
	switch {
	case p.acceptKw("UNLOGGED"):
		s.Kind = BatchUnlogged
	case p.isKw("COUNTER"):
		p.advance()
		s.Kind = BatchCounter
	}
	p.expectKw("BATCH")
	s.Using = p.using(false)
	for {
		for p.acceptPunct(";") {
		}
		if p.acceptKw("APPLY") {
			p.expectKw("BATCH")
			return s
		}
		if !p.isKw("INSERT") && !p.isKw("UPDATE") && !p.isKw("DELETE") {
			p.failExpected("INSERT, UPDATE, DELETE or APPLY BATCH")
		}
		s.Statements = append(s.Statements, p.statement())
	}
}

// isOperatorAt reports whether the token n places ahead starts a condition's operator or a
// c[k] element.
func (p *parser) isOperatorAt(n int) bool {
	t := p.peek(n)
	switch {
	case t.kind == tkPunct:
		switch t.val {
		case "=", "<", "<=", ">", ">=", "!=", "[":
			return true
		}
	case t.kind == tkWord:
		return t.kw == "IN"
	}
	return false
}
