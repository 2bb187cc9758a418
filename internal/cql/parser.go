package cql

import (
	"fmt"
	"unicode/utf8"

	"github.com/partita-db/partita/internal/fault"
)

// maxDepth bounds how deeply terms, types and selectors nest, so that hostile input cannot
// exhaust the stack; real statements stay far below it.
const maxDepth = 64

// Parse parses one statement, optionally followed by a ';'. Every error is a syntax error: a
// *fault.Error of kind BadRequest whose Pos says where the text is wrong.
func Parse(src string) (st Statement, err error) {
	p := newParser(src)
	defer p.recover(&err)
	st = p.statement()
	p.acceptPunct(";")
	if p.tok().kind != tkEOF {
		p.failExpected("end of statement")
	}
	return st, nil
}

// ParseType parses a data type on its own, as a type's canonical text (Type.String) prints
// it: how schemas store their column types.
func ParseType(src string) (t *Type, err error) {
	p := newParser(src)
	defer p.recover(&err)
	t = p.dataType()
	if p.tok().kind != tkEOF {
		p.failExpected("end of type")
	}
	return t, nil
}

// ParseScript parses statements separated by ';' (a trailing ';' is allowed, empty statements
// are skipped). Bind markers are numbered per statement.
func ParseScript(src string) (sts []Statement, err error) {
	p := newParser(src)
	defer p.recover(&err)
	for {
		for p.acceptPunct(";") {
		}
		if p.tok().kind == tkEOF {
			return sts, nil
		}
		p.binds = nil
		sts = append(sts, p.statement())
		if p.tok().kind != tkEOF && !p.isPunct(";") {
			p.failExpected("';' or end of script")
		}
	}
}

// failure carries a syntax error up to Parse: the parser gives up at the first error, and
// unwinding by panic keeps the grammar functions free of error plumbing.
type failure struct{ err error }

type parser struct {
	src   string
	toks  []token // ends with tkEOF or tkError, which the parser never moves past
	i     int
	depth int
	binds []*BindMarker // the current statement's markers, in order
	cur   cursor        // the last position pos computed
}

func newParser(src string) *parser {
	return &parser{src: src, toks: lex(src), cur: cursor{line: 1, col: 1}}
}

func (p *parser) recover(err *error) {
	if r := recover(); r != nil {
		f, ok := r.(failure)
		if !ok {
			panic(r) // a bug in the parser, not in the statement
		}
		*err = f.err
	}
}

// Tokens.

func (p *parser) tok() token { return p.toks[p.i] }

// peek is the token n places ahead, or the last one (EOF or error).
func (p *parser) peek(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) advance() token {
	t := p.toks[p.i]
	if t.kind != tkEOF && t.kind != tkError {
		p.i++
	}
	return t
}

func (p *parser) isKw(kw string) bool { t := p.tok(); return t.kind == tkWord && t.kw == kw }

func (p *parser) isPunct(s string) bool { t := p.tok(); return t.kind == tkPunct && t.val == s }

func (p *parser) acceptKw(kw string) bool {
	if p.isKw(kw) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectKw(kw string) {
	if !p.acceptKw(kw) {
		p.failExpected(kw)
	}
}

func (p *parser) acceptPunct(s string) bool {
	if p.isPunct(s) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectPunct(s string) {
	if !p.acceptPunct(s) {
		p.failExpected("'" + s + "'")
	}
}

// isIdent reports whether the current token can be a name: a quoted identifier or an unquoted
// word that is not reserved.
func (p *parser) isIdent() bool {
	t := p.tok()
	return t.kind == tkQuoted || t.kind == tkWord && !keywords[t.kw]
}

// ident reads a name; what says which (for the error).
func (p *parser) ident(what string) string {
	t := p.tok()
	if t.kind == tkWord && keywords[t.kw] {
		p.fail(t.off, "expected %s, found reserved keyword '%s': quote it (\"%s\") to use it as a name",
			what, t.kw, t.val)
	}
	if !p.isIdent() {
		p.failExpected(what)
	}
	p.i++
	return t.val
}

// tableName reads [keyspace.]name.
func (p *parser) tableName(what string) TableName {
	n := TableName{Name: p.ident(what)}
	if p.acceptPunct(".") {
		n.Keyspace, n.Name = n.Name, p.ident(what)
	}
	return n
}

// identList reads ( name, ... ) with at least one name.
func (p *parser) identList(what string) []string {
	p.expectPunct("(")
	var names []string
	for {
		names = append(names, p.ident(what))
		if !p.acceptPunct(",") {
			break
		}
	}
	p.expectPunct(")")
	return names
}

// pos is the line and column of byte offset off. The parser asks for positions in increasing
// order (statement starts, bind markers), so it counts on from the last one it gave instead of
// from the start, which keeps a long batch with many markers linear.
func (p *parser) pos(off int) fault.Pos {
	if off < p.cur.off {
		p.cur = cursor{line: 1, col: 1}
	}
	for _, r := range p.src[p.cur.off:off] {
		if r == '\n' {
			p.cur.line, p.cur.col = p.cur.line+1, 1
		} else {
			p.cur.col++
		}
	}
	p.cur.off = off
	return fault.Pos{Line: p.cur.line, Column: p.cur.col}
}

// cursor is a byte offset with its line and column.
type cursor struct{ off, line, col int }

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.fail(p.tok().off, "the statement nests more than %d levels deep", maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

// Errors.

// fail stops parsing with a syntax error at byte offset off.
func (p *parser) fail(off int, format string, args ...any) {
	panic(failure{syntaxError(p.src, off, fmt.Sprintf(format, args...))})
}

// invalid stops parsing with an invalid-statement error at byte offset off (errors.go).
func (p *parser) invalid(off int, format string, args ...any) {
	panic(failure{invalidError(p.src, off, fmt.Sprintf(format, args...))})
}

// failExpected reports that the current token is not what was expected. A lexical error at the
// current token takes precedence: it is what the user has to fix first.
func (p *parser) failExpected(what string) {
	t := p.tok()
	if t.kind == tkError {
		p.fail(t.off, "%s", t.val)
	}
	p.fail(t.off, "expected %s, found %s", what, describe(t))
}

func describe(t token) string {
	switch t.kind {
	case tkEOF:
		return "end of input"
	case tkWord:
		if t.kw != "" {
			return "keyword '" + t.kw + "'"
		}
	case tkString:
		return "string literal"
	case tkQuoted:
		return "quoted identifier"
	}
	s := t.val
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:37]) + "..."
	}
	return "'" + s + "'"
}

// Statements.

// statement parses one statement, whichever its first keyword says.
func (p *parser) statement() Statement {
	t := p.tok()
	b := base{Pos: p.pos(t.off)}
	first := len(p.binds)
	var st Statement
	defer func() {
		if st != nil {
			st.setMarkers(p.binds[first:len(p.binds):len(p.binds)])
		}
	}()
	switch {
	case p.isKw("SELECT"):
		st = p.selectStmt(b)
	case p.isKw("INSERT"):
		st = p.insertStmt(b)
	case p.isKw("UPDATE"):
		st = p.updateStmt(b)
	case p.isKw("DELETE"):
		st = p.deleteStmt(b)
	case p.isKw("BEGIN"):
		st = p.batchStmt(b)
	case p.isKw("USE"):
		p.advance()
		st = &Use{base: b, Keyspace: p.ident("a keyspace name")}
	case p.isKw("CREATE"):
		st = p.createStmt(b)
	case p.isKw("ALTER"):
		st = p.alterStmt(b)
	case p.isKw("DROP"):
		st = p.dropStmt(b)
	case p.isKw("TRUNCATE"):
		p.advance()
		p.acceptKw("TABLE")
		st = &Truncate{base: b, Table: p.tableName("a table name")}
	case p.isKw("DESCRIBE"), p.isKw("DESC"):
		p.advance()
		st = p.describeStmt(b)
	default:
		p.failExpected("a statement (SELECT, INSERT, UPDATE, DELETE, BEGIN BATCH, USE, CREATE, ALTER, DROP, TRUNCATE or DESCRIBE)")
	}
	return st
}
