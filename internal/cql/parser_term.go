package cql

// Terms and types.

// term parses a value: a constant, NULL, a bind marker, a collection or tuple literal, a
// function call or a type hint.
func (p *parser) term() Term {
	p.enter()
	defer p.leave()
	t := p.tok()
	switch t.kind {
	case tkString:
		p.advance()
		return &Constant{Kind: ConstString, Text: t.val}
	case tkInteger:
		p.advance()
		return &Constant{Kind: ConstInteger, Text: t.val}
	case tkFloat:
		p.advance()
		return &Constant{Kind: ConstFloat, Text: t.val}
	case tkBool:
		p.advance()
		return &Constant{Kind: ConstBool, Text: t.val}
	case tkHex:
		p.advance()
		return &Constant{Kind: ConstHex, Text: t.val}
	case tkUUID:
		p.advance()
		return &Constant{Kind: ConstUUID, Text: t.val}
	case tkDuration:
		p.advance()
		return &Constant{Kind: ConstDuration, Text: t.val}
	case tkQuestion:
		return p.bindMarker()
	case tkPunct:
		switch t.val {
		case ":":
			return p.bindMarker()
		case "-":
			return p.negative()
		case "[":
			return p.listLiteral()
		case "{":
			return p.braceLiteral()
		case "(":
			if h := p.typeHint(); h != nil {
				return h
			}
			return &Tuple{Elems: p.termList("(", ")", false)}
		}
	case tkWord, tkQuoted:
		if p.isKw("NULL") {
			p.advance()
			return &Null{}
		}
		if (p.isIdent() || p.isKw("TOKEN")) && p.isFuncCallAhead() {
			return p.funcCall()
		}
	}
	p.failExpected("a value")
	return nil
}

// negative parses -number: a negative integer, float, Infinity or duration.
func (p *parser) negative() Term {
	p.advance()
	t := p.tok()
	var k ConstKind
	switch t.kind {
	case tkInteger:
		k = ConstInteger
	case tkFloat:
		k = ConstFloat
	case tkDuration:
		k = ConstDuration
	default:
		p.failExpected("a number after '-'")
	}
	p.advance()
	return &Constant{Kind: k, Text: "-" + t.val}
}

// bindMarker parses ? or :name and numbers it.
func (p *parser) bindMarker() Term {
	t := p.advance()
	m := &BindMarker{Index: len(p.binds), Pos: p.pos(t.off)}
	if t.kind == tkPunct { // ':'
		m.Name = p.ident("a bind marker name after ':'")
	}
	p.binds = append(p.binds, m)
	return m
}

// isBindAhead reports whether a bind marker starts here.
func (p *parser) isBindAhead() bool {
	t := p.tok()
	return t.kind == tkQuestion || t.kind == tkPunct && t.val == ":"
}

// isFuncCallAhead reports whether [ks.]name( starts here.
func (p *parser) isFuncCallAhead() bool {
	if next := p.peek(1); next.kind == tkPunct && next.val == "(" {
		return true
	}
	return p.peek(1).kind == tkPunct && p.peek(1).val == "." && p.peek(3).kind == tkPunct && p.peek(3).val == "("
}

// funcName reads [keyspace.]name of a function; token is reserved but is a function too.
func (p *parser) funcName() (ks, name string) {
	if p.isKw("TOKEN") {
		p.advance()
		return "", "token"
	}
	name = p.ident("a function name")
	if p.acceptPunct(".") {
		ks, name = name, p.ident("a function name")
	}
	return ks, name
}

func (p *parser) funcCall() Term {
	ks, name := p.funcName()
	return &FuncCall{Keyspace: ks, Name: name, Args: p.termList("(", ")", true)}
}

// termList parses open term, ... close; empty only when allowed.
func (p *parser) termList(open, close string, emptyOK bool) []Term {
	p.expectPunct(open)
	elems := []Term{}
	if emptyOK && p.acceptPunct(close) {
		return elems
	}
	for {
		elems = append(elems, p.term())
		if !p.acceptPunct(",") {
			break
		}
	}
	p.expectPunct(close)
	return elems
}

func (p *parser) listLiteral() Term {
	return &List{Elems: p.termList("[", "]", true)}
}

// braceLiteral parses {a, b} (a set) or {k: v, ...} (a map); {} is an empty map.
func (p *parser) braceLiteral() Term {
	p.expectPunct("{")
	if p.acceptPunct("}") {
		return &Map{Entries: []MapEntry{}}
	}
	first := p.term()
	if p.acceptPunct(":") {
		m := &Map{Entries: []MapEntry{{Key: first, Value: p.term()}}}
		for p.acceptPunct(",") {
			k := p.term()
			p.expectPunct(":")
			m.Entries = append(m.Entries, MapEntry{Key: k, Value: p.term()})
		}
		p.expectPunct("}")
		return m
	}
	s := &Set{Elems: []Term{first}}
	for p.acceptPunct(",") {
		s.Elems = append(s.Elems, p.term())
	}
	p.expectPunct("}")
	return s
}

// typeHint parses (type) term when the parenthesis holds a type followed by ')' and a value;
// otherwise it consumes nothing and returns nil, and the parenthesis is a tuple.
func (p *parser) typeHint() Term {
	if !p.isTypeAhead(1) {
		return nil
	}
	save, depth := p.i, p.depth
	p.advance() // (
	var typ *Type
	if !p.attempt(func() { typ = p.dataType() }) || !p.isPunct(")") {
		p.i, p.depth = save, depth
		return nil
	}
	p.advance()
	if !p.isTermStart() {
		p.i = save
		return nil
	}
	return &TypeHint{Type: typ, Term: p.term()}
}

// attempt runs f and reports whether it parsed without a syntax error; on an error the caller
// rewinds. It lets (list(1)) be a tuple holding a call of a function named list.
func (p *parser) attempt(f func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, isFailure := r.(failure); !isFailure {
				panic(r)
			}
			ok = false
		}
	}()
	f()
	return true
}

// isTypeAhead reports whether the token n places ahead can start a type: a native type name, a
// collection keyword, or any other name (a user type).
func (p *parser) isTypeAhead(n int) bool {
	t := p.peek(n)
	return t.kind == tkQuoted || t.kind == tkWord && !keywords[t.kw]
}

// isTermStart reports whether a term can start at the current token.
func (p *parser) isTermStart() bool {
	t := p.tok()
	switch t.kind {
	case tkString, tkInteger, tkFloat, tkBool, tkHex, tkUUID, tkDuration, tkQuestion:
		return true
	case tkPunct:
		switch t.val {
		case ":", "-", "[", "{", "(":
			return true
		}
	case tkWord, tkQuoted:
		return p.isKw("NULL") || (p.isIdent() || p.isKw("TOKEN")) && p.isFuncCallAhead()
	}
	return false
}

// dataType parses a CQL type.
func (p *parser) dataType() *Type {
	p.enter()
	defer p.leave()
	t := p.tok()
	if t.kind == tkWord && !keywords[t.kw] {
		var k TypeKind
		n := 0 // type arguments; -1 for one or more
		switch t.val {
		case "list":
			k, n = TypeList, 1
		case "map":
			k, n = TypeMap, 2
		case "frozen":
			k, n = TypeFrozen, 1
		case "tuple":
			k, n = TypeTuple, -1
		default:
			if nativeTypes[t.val] {
				p.advance()
				return &Type{Kind: TypeNative, Name: t.val}
			}
		}
		if n != 0 {
			p.advance()
			p.expectPunct("<")
			typ := &Type{Kind: k}
			for {
				typ.Args = append(typ.Args, p.dataType())
				if n > 0 && len(typ.Args) == n {
					break
				}
				if n < 0 && !p.isPunct(",") {
					break
				}
				p.expectPunct(",")
			}
			p.expectPunct(">")
			return typ
		}
	}
	if t.kind == tkWord && t.kw == "SET" { // set is reserved as a keyword but is also a type
		p.advance()
		p.expectPunct("<")
		typ := &Type{Kind: TypeSet, Args: []*Type{p.dataType()}}
		p.expectPunct(">")
		return typ
	}
	if !p.isIdent() {
		p.failExpected("a type")
	}
	n := p.tableName("a type")
	return &Type{Kind: TypeUser, Keyspace: n.Keyspace, Name: n.Name}
}
