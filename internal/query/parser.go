package query

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// maxParseDepth bounds how deeply expressions and subqueries may nest, so that a hostile query
// gets a 400 rather than exhausting the stack of the parser or of the evaluator after it.
const maxParseDepth = 128

// Parse parses one Cosmos DB NoSQL query. Errors are 400s whose message names the line and
// column of the offending token and what was expected there.
//
// Operator precedence, from loosest to tightest:
//
//	? :                     conditional, right-associative
//	??                      coalesce
//	OR
//	AND
//	NOT                     prefix
//	= != <> < <= > >=       comparison, with [NOT] BETWEEN, [NOT] IN (...), [NOT] LIKE
//	||                      string concatenation
//	|
//	^
//	&
//	<< >> >>>
//	+ -
//	* / %
//	- + ~ NOT               prefix, on a single operand
//	.name [expr]            postfix
//
// The .NET SDK's grammar lists || as the loosest binary operator; here it is kept tighter than
// the comparisons so that c.first || ' ' || c.last = 'Ann Lee' compares the concatenation.
func Parse(sql string) (q *Query, err error) {
	return parseWith(sql, (*sqlParser).query)
}

// parseWith parses the whole of sql with the grammar rule top.
func parseWith(sql string, top func(*sqlParser) *Query) (q *Query, err error) {
	p := &sqlParser{src: sql, toks: lexQuery(sql)}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(parseFailure)
			if !ok {
				panic(r) // a bug in the parser, not in the query
			}
			q, err = nil, f.err
		}
	}()
	q = top(p)
	if p.tok().kind != tkEOF {
		p.failTrailing("end of query")
	}
	return q, nil
}

// parseFailure carries a syntax error up to Parse: the parser gives up at the first error, and
// unwinding by panic keeps the grammar functions free of error plumbing.
type parseFailure struct{ err *fault.Error }

type sqlParser struct {
	src   string
	toks  []lexToken // ends with tkEOF or tkError, which the parser never moves past
	i     int
	depth int
}

func (p *sqlParser) query() *Query {
	p.enter()
	defer p.leave()
	q := &Query{}
	p.expectKw("SELECT")
	q.Select = p.selectClause()
	if p.acceptKw("FROM") {
		q.From = p.fromClause()
	}
	if p.acceptKw("WHERE") {
		q.Where = p.expr()
	}
	if p.acceptKw("GROUP") {
		p.expectKw("BY")
		q.GroupBy = p.exprList()
	}
	if p.acceptKw("ORDER") {
		p.expectKw("BY")
		q.OrderBy = p.orderBy()
	}
	if p.acceptKw("OFFSET") {
		q.Offset = p.count()
		p.expectKw("LIMIT")
		q.Limit = p.count()
	}
	return q
}

// selectClause parses what follows SELECT. DISTINCT and TOP n are accepted in either order.
func (p *sqlParser) selectClause() Select {
	var s Select
modifiers:
	for {
		t := p.tok()
		switch {
		case t.kw == "DISTINCT":
			if s.Distinct {
				p.fail(t.off, "DISTINCT is given twice")
			}
			p.advance()
			s.Distinct = true
		case t.kw == "TOP":
			if s.Top != nil {
				p.fail(t.off, "TOP is given twice")
			}
			p.advance()
			s.Top = p.count()
		default:
			break modifiers
		}
	}
	switch t := p.tok(); {
	case p.acceptPunct("*"):
		s.Star = true
		if c := p.tok(); c.text == "," && c.kind == tkPunct {
			p.fail(c.off, "'*' must be the only item of SELECT")
		}
	case p.acceptKw("VALUE"):
		s.Value = p.expr()
		if c := p.tok(); c.text == "," && c.kind == tkPunct {
			p.fail(c.off, "SELECT VALUE takes a single expression, found ','")
		}
	case t.kind == tkEOF || clauseKeywords[t.kw]:
		p.failExpected("'*', VALUE or a list of expressions")
	default:
		for {
			item := SelectItem{Expr: p.expr()}
			item.Alias = p.alias()
			s.Items = append(s.Items, item)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	return s
}

// clauseKeywords start a clause; finding one out of place earns a hint about clause order.
var clauseKeywords = map[string]bool{
	"SELECT": true, "FROM": true, "JOIN": true, "WHERE": true, "GROUP": true, "ORDER": true,
	"OFFSET": true, "LIMIT": true,
}

// alias parses an optional [AS] name after a projected expression or a FROM source.
func (p *sqlParser) alias() string {
	if p.acceptKw("AS") {
		t := p.tok()
		if !isNameToken(t) {
			if t.kind == tkWord {
				p.failExpected("an alias (reserved words cannot be aliases)")
			}
			p.failExpected("an alias")
		}
		p.advance()
		return t.text
	}
	if t := p.tok(); isNameToken(t) {
		p.advance()
		return t.text
	}
	return ""
}

// isNameToken reports whether t can name something: a word that is neither a keyword nor a
// constant such as true.
func isNameToken(t lexToken) bool {
	return t.kind == tkWord && t.kw == "" && !sqlLiteralWords[t.text]
}

// count parses the argument of TOP, OFFSET or LIMIT: a non-negative integer or a parameter,
// whose value the executor checks.
func (p *sqlParser) count() Expr {
	t := p.tok()
	switch t.kind {
	case tkNumber:
		if t.num != math.Trunc(t.num) || t.num > 1<<53 {
			p.fail(t.off, "expected a non-negative integer after '%s', found %s", p.prev().text, t.text)
		}
		p.advance()
		return Literal{Val: value.Num(t.num)}
	case tkParam:
		p.advance()
		return Param{Name: t.text}
	}
	p.failExpected("a non-negative integer or a parameter")
	return nil
}

func (p *sqlParser) fromClause() *From {
	f := &From{Source: p.source()}
	for p.acceptKw("JOIN") {
		f.Joins = append(f.Joins, p.source())
	}
	return f
}

// source parses one collection expression of FROM or JOIN:
//
//	path [[AS] alias]          a container name or alias followed by .name, [number], ["name"]
//	(SELECT ...) [[AS] alias]
//	alias IN path
//	alias IN (SELECT ...)
//
// Paths take only literal indexes, as in Cosmos DB. When no alias is written, the alias is
// inferred leniently: the last property name of the path (c → "c", c.a.b → "b",
// c["x"] → "x"); a path ending in a number index, or a subquery, gets "", so it can be
// selected with SELECT * but not named elsewhere.
func (p *sqlParser) source() Source {
	t := p.tok()
	switch {
	case t.kind == tkPunct && t.text == "(":
		e := p.subquery()
		return Source{Alias: p.alias(), Expr: e}
	case isNameToken(t) && p.peek(1).kw == "IN":
		p.advance()
		p.advance()
		if p.tok().kind == tkPunct && p.tok().text == "(" {
			return Source{Alias: t.text, In: true, Expr: p.subquery()}
		}
		if !isNameToken(p.tok()) {
			p.failExpected("a path or a subquery")
		}
		e, _ := p.path()
		return Source{Alias: t.text, In: true, Expr: e}
	case isNameToken(t):
		e, last := p.path()
		s := Source{Alias: p.alias(), Expr: e}
		if s.Alias == "" {
			s.Alias = last
		}
		return s
	}
	p.failExpected("a container name, an alias or a subquery")
	return Source{}
}

// path parses a FROM path and returns it with its last property name ("" after an index).
func (p *sqlParser) path() (Expr, string) {
	t := p.advance()
	var e Expr = Ident{Name: t.text, At: t.off + 1}
	last := t.text
	for {
		switch {
		case p.acceptPunct("."):
			n := p.propertyName()
			e, last = Property{Obj: e, Name: n}, n
		case p.acceptPunct("["):
			switch i := p.tok(); i.kind {
			case tkNumber:
				e, last = Index{Obj: e, Index: Literal{Val: value.Num(i.num)}}, ""
			case tkString:
				e, last = Property{Obj: e, Name: i.str}, i.str
			default:
				p.failExpected("a number or a string (a FROM path indexes only with literals)")
			}
			p.advance()
			p.expectPunct("]")
		default:
			return e, last
		}
	}
}

// propertyName parses the name after '.'. Reserved words and the constants true, false, null
// and undefined cannot follow a '.', as in Cosmos DB's grammar: such properties are reached
// with a string index, c["value"].
func (p *sqlParser) propertyName() string {
	t := p.tok()
	switch {
	case t.kind != tkWord:
		p.failExpected("a property name")
	case t.kw != "" || isConstantWord(t.text):
		p.fail(t.off, "expected a property name after '.', found reserved word '%s': write it as a string index, [\"%s\"]", t.text, t.text)
	}
	p.advance()
	return t.text
}

// isConstantWord reports the words that denote JSON's constants. NaN and Infinity are constants
// too in expressions, but Cosmos DB's grammar has them as identifiers, so c.NaN is a property.
func isConstantWord(w string) bool {
	return sqlLiteralWords[w] && w != "NaN" && w != "Infinity"
}

// subquery parses ( SELECT ... ).
func (p *sqlParser) subquery() Subquery {
	p.expectPunct("(")
	if !p.isKw("SELECT") {
		p.failExpected("SELECT")
	}
	q := p.query()
	if t := p.tok(); t.kind != tkPunct || t.text != ")" {
		p.failTrailing("')'")
	}
	p.advance()
	return Subquery{Q: q}
}

func (p *sqlParser) orderBy() []OrderItem {
	var items []OrderItem
	for {
		// ORDER BY RANK scores: RANK is a keyword only when a scoring function follows it,
		// so a property named rank (ORDER BY rank) still orders.
		if t := p.tok(); t.kind == tkWord && strings.EqualFold(t.text, "RANK") && isNameToken(p.peek(1)) {
			p.advance()
			items = append(items, OrderItem{Expr: p.expr(), Rank: true})
		} else {
			it := OrderItem{Expr: p.expr()}
			if p.acceptKw("DESC") {
				it.Desc, it.Directed = true, true
			} else {
				it.Directed = p.acceptKw("ASC")
			}
			items = append(items, it)
		}
		if !p.acceptPunct(",") {
			return items
		}
	}
}

func (p *sqlParser) exprList() []Expr {
	var list []Expr
	for {
		list = append(list, p.expr())
		if !p.acceptPunct(",") {
			return list
		}
	}
}

// Expressions, loosest binding first.

func (p *sqlParser) expr() Expr {
	p.enter()
	defer p.leave()
	return p.conditional()
}

func (p *sqlParser) conditional() Expr {
	c := p.coalesce()
	if !p.acceptPunct("?") {
		return c
	}
	then := p.expr()
	p.expectPunct(":")
	return Conditional{Cond: c, Then: then, Else: p.expr()}
}

func (p *sqlParser) coalesce() Expr {
	l := p.or()
	for p.acceptPunct("??") {
		l = Binary{Op: "??", L: l, R: p.or()}
	}
	return l
}

func (p *sqlParser) or() Expr {
	l := p.and()
	for p.acceptKw("OR") {
		l = Binary{Op: "OR", L: l, R: p.and()}
	}
	return l
}

func (p *sqlParser) and() Expr {
	l := p.not()
	for p.acceptKw("AND") {
		l = Binary{Op: "AND", L: l, R: p.not()}
	}
	return l
}

// not is the logical prefix NOT, which applies to a whole comparison: NOT a = b is NOT (a = b).
func (p *sqlParser) not() Expr {
	if !p.acceptKw("NOT") {
		return p.comparison()
	}
	p.enter()
	defer p.leave()
	return Unary{Op: "NOT", X: p.not()}
}

// comparison parses comparisons and the [NOT] BETWEEN / IN / LIKE forms, left to right. Their
// operands bind tighter, so the AND of BETWEEN a AND b cannot be mistaken for a logical AND.
func (p *sqlParser) comparison() Expr {
	l := p.binary(0)
	for {
		if t := p.tok(); t.kind == tkPunct {
			switch op := t.text; op {
			case "=", "!=", "<>", "<", "<=", ">", ">=":
				p.advance()
				if op == "<>" {
					op = "!="
				}
				l = Binary{Op: op, L: l, R: p.binary(0)}
				continue
			}
		}
		not := false
		if p.isKw("NOT") {
			if k := p.peek(1).kw; k != "BETWEEN" && k != "IN" && k != "LIKE" {
				p.advance()
				p.failExpected("BETWEEN, IN or LIKE")
			}
			p.advance()
			not = true
		}
		switch {
		case p.acceptKw("BETWEEN"):
			lo := p.binary(0)
			p.expectKw("AND")
			l = Between{X: l, Lo: lo, Hi: p.binary(0), Not: not}
		case p.acceptKw("IN"):
			p.expectPunct("(")
			list := p.exprList()
			p.expectPunct(")")
			l = In{X: l, List: list, Not: not}
		case p.acceptKw("LIKE"):
			like := Like{X: l, Pattern: p.binary(0), Not: not}
			if p.acceptKw("ESCAPE") {
				t := p.tok()
				if t.kind != tkString {
					p.failExpected("a string literal")
				}
				p.advance()
				like.Escape = Literal{Val: value.Str(t.str)}
			}
			l = like
		default:
			return l
		}
	}
}

// binaryLevels are the left-associative binary operators from || to * / %, loosest first.
var binaryLevels = [][]string{
	{"||"}, {"|"}, {"^"}, {"&"}, {"<<", ">>", ">>>"}, {"+", "-"}, {"*", "/", "%"},
}

func (p *sqlParser) binary(level int) Expr {
	if level == len(binaryLevels) {
		return p.prefix()
	}
	l := p.binary(level + 1)
	for {
		t := p.tok()
		if t.kind != tkPunct || !slices.Contains(binaryLevels[level], t.text) {
			return l
		}
		p.advance()
		l = Binary{Op: t.text, L: l, R: p.binary(level + 1)}
	}
}

// prefix parses the unary operators, which bind tighter than any binary one: -a.b[0] is
// -(a.b[0]) and 1 + NOT x is 1 + (NOT x).
func (p *sqlParser) prefix() Expr {
	t := p.tok()
	op := ""
	switch {
	case t.kind == tkPunct && (t.text == "-" || t.text == "+" || t.text == "~"):
		op = t.text
	case t.kw == "NOT":
		op = "NOT"
	default:
		return p.postfix()
	}
	p.advance()
	p.enter()
	defer p.leave()
	return Unary{Op: op, X: p.prefix()}
}

// postfix parses a primary expression followed by any number of .name and [expr]. An index
// that is a string literal is a property access: c["a b"] is Property{c, "a b"}.
func (p *sqlParser) postfix() Expr {
	e := p.primary()
	for {
		switch {
		case p.acceptPunct("."):
			e = Property{Obj: e, Name: p.propertyName()}
		case p.acceptPunct("["):
			i := p.expr()
			p.expectPunct("]")
			if lit, ok := i.(Literal); ok && lit.Val.Kind() == value.String {
				e = Property{Obj: e, Name: lit.Val.Str()}
			} else {
				e = Index{Obj: e, Index: i}
			}
		default:
			return e
		}
	}
}

func (p *sqlParser) primary() Expr {
	t := p.tok()
	switch t.kind {
	case tkNumber:
		p.advance()
		return Literal{Val: value.Num(t.num)}
	case tkString:
		p.advance()
		return Literal{Val: value.Str(t.str)}
	case tkParam:
		p.advance()
		return Param{Name: t.text}
	case tkWord:
		return p.word()
	case tkPunct:
		switch t.text {
		case "(":
			if p.peek(1).kw == "SELECT" {
				return p.subquery()
			}
			p.advance()
			e := p.expr()
			p.expectPunct(")")
			return e
		case "[":
			p.advance()
			var a ArrayLit
			if !p.acceptPunct("]") {
				a.Elems = p.exprList()
				p.expectPunct("]")
			}
			return a
		case "{":
			return p.object()
		}
	}
	p.failExpected("an expression")
	return nil
}

// word parses an expression that starts with a word: a constant, a name or a function call.
func (p *sqlParser) word() Expr {
	t := p.tok()
	if t.kw != "" {
		return p.keywordExpr()
	}
	p.advance()
	switch t.text {
	case "true", "false":
		return Literal{Val: value.Bool(t.text == "true")}
	case "null":
		return Literal{Val: value.NullV()}
	case "undefined":
		return Literal{Val: value.Undef()}
	case "NaN":
		return Literal{Val: value.Num(math.NaN())}
	case "Infinity":
		return Literal{Val: value.Num(math.Inf(1))}
	}
	if n := p.tok(); n.kind != tkPunct || n.text != "(" {
		return Ident{Name: t.text, At: t.off + 1}
	}
	name := strings.ToUpper(t.text)
	// ALL, FIRST and LAST over a subquery are Cosmos DB forms the AST cannot express; as
	// calls they would silently mean something else.
	if (name == "ALL" || name == "FIRST" || name == "LAST") && p.peek(1).kw == "SELECT" {
		p.fail(t.off, "%s (SELECT ...) is not supported", t.text)
	}
	return Call{Name: name, Args: p.args()}
}

// keywordExpr parses the expressions that start with a keyword: EXISTS(...), ARRAY(...),
// udf.name(...), and the functions LEFT and RIGHT, whose names are reserved words.
func (p *sqlParser) keywordExpr() Expr {
	t := p.tok()
	switch t.kw {
	case "EXISTS":
		p.advance()
		return Exists{Q: p.subquery().Q}
	case "ARRAY":
		p.advance()
		return ArrayQuery{Q: p.subquery().Q}
	case "UDF":
		p.advance()
		p.expectPunct(".")
		n := p.tok()
		if n.kind != tkWord {
			p.failExpected("the name of a user-defined function")
		}
		p.advance()
		return Call{Name: n.text, UDF: true, Args: p.args()}
	case "LEFT", "RIGHT":
		if n := p.peek(1); n.kind == tkPunct && n.text == "(" {
			p.advance()
			return Call{Name: t.kw, Args: p.args()}
		}
	}
	p.failExpected("an expression")
	return nil
}

// args parses a parenthesized argument list, possibly empty.
func (p *sqlParser) args() []Expr {
	p.expectPunct("(")
	if p.acceptPunct(")") {
		return nil
	}
	list := p.exprList()
	p.expectPunct(")")
	return list
}

// object parses {key: value, ...}. Keys are strings or bare words, keywords included.
func (p *sqlParser) object() ObjectLit {
	p.expectPunct("{")
	var o ObjectLit
	if p.acceptPunct("}") {
		return o
	}
	for {
		k := p.tok()
		var key string
		switch k.kind {
		case tkString:
			key = k.str
		case tkWord:
			key = k.text
		default:
			p.failExpected("a property name")
		}
		p.advance()
		p.expectPunct(":")
		o.Members = append(o.Members, ObjectMember{Key: key, Val: p.expr()})
		if !p.acceptPunct(",") {
			break
		}
	}
	p.expectPunct("}")
	return o
}

// Token access.

func (p *sqlParser) tok() lexToken { return p.toks[p.i] }

func (p *sqlParser) peek(n int) lexToken { return p.toks[min(p.i+n, len(p.toks)-1)] }

func (p *sqlParser) prev() lexToken {
	if p.i == 0 {
		return lexToken{}
	}
	return p.toks[p.i-1]
}

// advance consumes the current token and returns it; it never moves past the last token.
func (p *sqlParser) advance() lexToken {
	t := p.toks[p.i]
	if t.kind != tkEOF && t.kind != tkError {
		p.i++
	}
	return t
}

func (p *sqlParser) isKw(kw string) bool { return p.tok().kw == kw }

func (p *sqlParser) acceptKw(kw string) bool {
	if p.isKw(kw) {
		p.advance()
		return true
	}
	return false
}

func (p *sqlParser) expectKw(kw string) {
	if !p.acceptKw(kw) {
		p.failExpected(kw)
	}
}

func (p *sqlParser) acceptPunct(s string) bool {
	if t := p.tok(); t.kind == tkPunct && t.text == s {
		p.advance()
		return true
	}
	return false
}

func (p *sqlParser) expectPunct(s string) {
	if !p.acceptPunct(s) {
		p.failExpected("'" + s + "'")
	}
}

func (p *sqlParser) enter() {
	p.depth++
	if p.depth > maxParseDepth {
		p.fail(p.tok().off, "the query nests expressions or subqueries more than %d levels deep", maxParseDepth)
	}
}

func (p *sqlParser) leave() { p.depth-- }

// Errors.

// fail stops parsing with a syntax error at byte offset off.
func (p *sqlParser) fail(off int, format string, args ...any) {
	pos := fault.PosAt(p.src, off)
	e := fault.New(fault.BadRequest, "Syntax error at line %d, column %d: %s", pos.Line, pos.Column, fmt.Sprintf(format, args...))
	e.Pos = pos
	panic(parseFailure{e})
}

// failExpected reports that the current token is not what was expected. A lexical error at the
// current token takes precedence: it is what the user has to fix first.
func (p *sqlParser) failExpected(what string) {
	t := p.tok()
	if t.kind == tkError {
		p.fail(t.off, "%s", t.str)
	}
	after := ""
	// Naming the previous token helps when it is a keyword or an operator ("after 'WHERE'");
	// after a name or a literal it would only repeat the query.
	if pr := p.prev(); pr.kw != "" || pr.kind == tkPunct {
		after = fmt.Sprintf(" after '%s'", pr.text)
	}
	p.fail(t.off, "expected %s%s, found %s", what, after, describeToken(t))
}

// failTrailing is failExpected at the end of a query, where a clause keyword out of place is
// the likeliest mistake.
func (p *sqlParser) failTrailing(what string) {
	if t := p.tok(); clauseKeywords[t.kw] {
		p.fail(t.off, "expected %s, found %s: clauses must come in the order SELECT, FROM "+
			"(with its JOINs), WHERE, GROUP BY, ORDER BY, OFFSET ... LIMIT, each at most once",
			what, describeToken(t))
	}
	p.failExpected(what)
}

func describeToken(t lexToken) string {
	switch {
	case t.kind == tkEOF:
		return "end of query"
	case t.kw != "":
		return "keyword '" + t.text + "'"
	}
	s := t.text
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:37]) + "..."
	}
	return "'" + s + "'"
}
