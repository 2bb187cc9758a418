package cql

// SELECT, its selectors, and the WHERE relations shared with UPDATE and DELETE.

func (p *parser) selectStmt(b base) *Select {
	p.expectKw("SELECT")
	s := &Select{base: b}
	// JSON and DISTINCT are unreserved: `SELECT json FROM t` selects a column named json.
	if p.isKw("JSON") && p.isModifier() {
		p.advance()
		s.JSON = true
	}
	if p.isKw("DISTINCT") && p.isModifier() {
		p.advance()
		s.Distinct = true
	}
	if p.acceptPunct("*") {
		s.Star = true
	} else {
		for {
			s.Selectors = append(s.Selectors, p.selector())
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	p.expectKw("FROM")
	s.Table = p.tableName("a table name")
	if p.acceptKw("WHERE") {
		s.Where = p.where()
	}
	if p.isKw("GROUP") {
		p.advance()
		p.expectKw("BY")
		for {
			s.GroupBy = append(s.GroupBy, p.ident("a column name"))
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	if p.acceptKw("ORDER") {
		p.expectKw("BY")
		for {
			s.OrderBy = append(s.OrderBy, p.ordering())
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	if p.isKw("PER") {
		p.advance()
		p.expectKw("PARTITION")
		p.expectKw("LIMIT")
		s.PerPartitionLimit = p.limitValue()
	}
	if p.acceptKw("LIMIT") {
		s.Limit = p.limitValue()
	}
	if p.acceptKw("ALLOW") {
		p.expectKw("FILTERING")
		s.AllowFiltering = true
	}
	return s
}

// isModifier reports whether the current word (JSON or DISTINCT) modifies SELECT rather than
// being selected as a column: it is a column when FROM, ',', AS or '(' follows it.
func (p *parser) isModifier() bool {
	n := p.peek(1)
	if n.kind == tkWord && (n.kw == "FROM" || n.kw == "AS") {
		return false
	}
	return !(n.kind == tkPunct && (n.val == "," || n.val == "(" || n.val == "."))
}

// limitValue is the integer or bind marker of LIMIT and PER PARTITION LIMIT.
func (p *parser) limitValue() Term {
	if p.isBindAhead() {
		return p.bindMarker()
	}
	t := p.tok()
	if t.kind != tkInteger {
		p.failExpected("an integer or a bind marker")
	}
	p.advance()
	return &Constant{Kind: ConstInteger, Text: t.val}
}

// ordering parses column [ASC | DESC].
func (p *parser) ordering() Ordering {
	o := Ordering{Column: p.ident("a column name")}
	if p.acceptKw("DESC") {
		o.Desc = true
	} else {
		p.acceptKw("ASC")
	}
	return o
}

func (p *parser) selector() Selector {
	s := Selector{Expr: p.selectable()}
	if p.isKw("AS") {
		p.advance()
		s.Alias = p.ident("an alias")
	}
	return s
}

// selectable parses a column, a function call (count(*), token(...), writetime(c), ...), CAST,
// or a constant.
func (p *parser) selectable() Selectable {
	p.enter()
	defer p.leave()
	if p.isKw("CAST") && p.peek(1).kind == tkPunct && p.peek(1).val == "(" {
		p.advance()
		p.advance()
		c := &CastSelector{Expr: p.selectable()}
		p.expectKw("AS")
		c.Type = p.dataType()
		p.expectPunct(")")
		return c
	}
	if (p.isIdent() || p.isKw("TOKEN")) && p.isFuncCallAhead() {
		ks, name := p.funcName()
		f := &FuncSelector{Keyspace: ks, Name: name}
		p.expectPunct("(")
		if p.acceptPunct("*") {
			f.Star = true
		} else if !p.isPunct(")") {
			for {
				f.Args = append(f.Args, p.selectable())
				if !p.acceptPunct(",") {
					break
				}
			}
		}
		p.expectPunct(")")
		return f
	}
	if p.isIdent() {
		return &ColumnRef{Name: p.ident("a column name")}
	}
	if p.isTermStart() {
		return &TermSelector{Term: p.term()}
	}
	// SELECT from, a FROM t: say that the name is reserved rather than that it is unexpected.
	if t, n := p.tok(), p.peek(1); t.kind == tkWord && keywords[t.kw] &&
		(n.kind == tkPunct && n.val == "," || n.kw == "FROM" || n.kw == "AS") {
		p.ident("a column name")
	}
	p.failExpected("a selector")
	return nil
}

// where parses relation AND relation ...
func (p *parser) where() []Relation {
	var rs []Relation
	for {
		rs = append(rs, p.relation())
		if !p.acceptKw("AND") {
			return rs
		}
	}
}

// relation parses one restriction: c op v, (c1, c2) op tuple, token(c, ...) op v, or
// c IS NOT NULL.
func (p *parser) relation() Relation {
	var r Relation
	switch {
	case p.isKw("TOKEN") && p.peek(1).kind == tkPunct && p.peek(1).val == "(":
		p.advance()
		r.Kind = RelToken
		r.Columns = p.identList("a column name")
		r.Op = p.operator(false)
		r.Value = p.term()
		return r
	case p.isPunct("("):
		r.Kind = RelTuple
		r.Columns = p.identList("a column name")
		r.Op = p.operator(false)
		if r.Op == OpIn && p.isPunct("(") {
			r.In = p.termList("(", ")", true)
		} else {
			r.Value = p.term()
		}
		return r
	}
	r.Columns = []string{p.ident("a column name")}
	if p.isKw("IS") {
		p.advance()
		p.expectKw("NOT")
		p.expectKw("NULL")
		r.Op = OpIsNotNull
		return r
	}
	r.Op = p.operator(true)
	if r.Op == OpIn && p.isPunct("(") {
		r.In = p.termList("(", ")", true)
	} else {
		r.Value = p.term()
	}
	return r
}

var comparisons = map[string]Operator{"=": OpEq, "<": OpLt, "<=": OpLe, ">": OpGt, ">=": OpGe, "!=": OpNe}

// operator parses a comparison; CONTAINS [KEY] and LIKE only when single is true.
func (p *parser) operator(single bool) Operator {
	t := p.tok()
	if t.kind == tkPunct {
		if op, ok := comparisons[t.val]; ok {
			p.advance()
			return op
		}
	}
	switch {
	case p.acceptKw("IN"):
		return OpIn
	case single && p.isKw("CONTAINS"):
		p.advance()
		if p.isKw("KEY") {
			p.advance()
			return OpContainsKey
		}
		return OpContains
	case single && p.isKw("LIKE"):
		p.advance()
		return OpLike
	}
	p.failExpected("an operator (=, <, <=, >, >=, !=, IN, CONTAINS, CONTAINS KEY)")
	return 0
}
