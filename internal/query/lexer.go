package query

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/partita-db/partita/internal/value"
)

// The lexer turns query text into tokens. It runs ahead of the parser over the whole text; a
// lexical error becomes a final tkError token, so that it is reported only if the parser gets
// that far, and errors therefore come out in source order.

type tokKind uint8

const (
	tkEOF    tokKind = iota
	tkWord           // identifier or keyword: keywords are told apart by lexToken.kw
	tkNumber         // number literal; value in num
	tkString         // string literal; decoded value in str
	tkParam          // @name; text is the whole parameter, '@' included
	tkPunct          // operator or punctuation; text is the operator
	tkError          // lexical error; message in str
)

type lexToken struct {
	kind tokKind
	off  int    // byte offset of the token's first character in the query
	text string // the token as written
	kw   string // for keywords, the keyword in upper case; "" otherwise
	str  string
	num  float64
}

// sqlKeywords are the reserved words, recognised in any letter case. They cannot be
// identifiers, aliases or property names after '.' (c.value is a syntax error in Cosmos DB;
// c["value"] is the way to reach such a property); as object literal keys any word is
// accepted, because there it is unambiguous. The list is the keyword set of Cosmos DB's
// grammar (the .NET SDK's sql.g4) minus ALL, FIRST and LAST, which that grammar also accepts
// as identifiers. LEFT and RIGHT are also the names of string functions, so the parser accepts
// them when a '(' follows. RANK, which newer grammars reserve for ORDER BY RANK, is left out:
// "rank" is a common property name, and refusing c.rank on a guess would break working
// queries; the parser recognises ORDER BY RANK by position.
var sqlKeywords = map[string]bool{
	"AND": true, "ARRAY": true, "AS": true, "ASC": true, "BETWEEN": true, "BY": true,
	"DESC": true, "DISTINCT": true, "ESCAPE": true, "EXISTS": true, "FROM": true,
	"GROUP": true, "IN": true, "JOIN": true, "LEFT": true, "LIKE": true, "LIMIT": true,
	"NOT": true, "OFFSET": true, "OR": true, "ORDER": true, "RIGHT": true,
	"SELECT": true, "TOP": true, "UDF": true, "VALUE": true, "WHERE": true,
}

// sqlLiteralWords are the words that denote constants. Unlike keywords they are case-sensitive,
// as in JSON and in the .NET SDK's grammar: `TRUE` is an identifier, not a boolean. NaN and
// Infinity are accepted by Cosmos DB (ToString(NaN) is "NaN"), so they are constants too.
var sqlLiteralWords = map[string]bool{
	"true": true, "false": true, "null": true, "undefined": true, "NaN": true, "Infinity": true,
}

// sqlPunct lists the operators, longest first so that the longest match wins.
var sqlPunct = []string{
	">>>",
	"<<", ">>", "<=", ">=", "<>", "!=", "||", "??",
	"(", ")", "[", "]", "{", "}", ",", ".", ":", "?",
	"*", "/", "%", "+", "-", "~", "|", "^", "&", "=", "<", ">",
}

type sqlLexer struct {
	src  string
	i    int
	toks []lexToken
}

// lexQuery splits src into tokens, ending with tkEOF or tkError.
func lexQuery(src string) []lexToken {
	l := &sqlLexer{src: src}
	for {
		t := l.next()
		l.toks = append(l.toks, t)
		if t.kind == tkEOF || t.kind == tkError {
			return l.toks
		}
	}
}

func (l *sqlLexer) errorf(off int, format string, args ...any) lexToken {
	return lexToken{kind: tkError, off: off, str: fmt.Sprintf(format, args...)}
}

func (l *sqlLexer) next() lexToken {
	l.skipSpace()
	start := l.i
	if l.i >= len(l.src) {
		return lexToken{kind: tkEOF, off: start}
	}
	c := l.src[l.i]
	switch {
	case isWordStart(c):
		for l.i < len(l.src) && isWordChar(l.src[l.i]) {
			l.i++
		}
		w := l.src[start:l.i]
		t := lexToken{kind: tkWord, off: start, text: w}
		if up := strings.ToUpper(w); sqlKeywords[up] {
			t.kw = up
		}
		return t
	case isDecDigit(c) || c == '.' && l.i+1 < len(l.src) && isDecDigit(l.src[l.i+1]):
		return l.number()
	case c == '"' || c == '\'':
		return l.string()
	case c == '@':
		l.i++
		for l.i < len(l.src) && isWordChar(l.src[l.i]) {
			l.i++
		}
		if l.i == start+1 {
			return l.errorf(start, "expected a parameter name after '@'")
		}
		return lexToken{kind: tkParam, off: start, text: l.src[start:l.i]}
	}
	for _, p := range sqlPunct {
		if strings.HasPrefix(l.src[l.i:], p) {
			l.i += len(p)
			return lexToken{kind: tkPunct, off: start, text: p}
		}
	}
	r, size := utf8.DecodeRuneInString(l.src[l.i:])
	if r == utf8.RuneError && size == 1 {
		return l.errorf(start, "invalid UTF-8 in query text")
	}
	return l.errorf(start, "unexpected character %q", r)
}

// skipSpace skips whitespace and -- comments, which run to the end of the line.
func (l *sqlLexer) skipSpace() {
	for l.i < len(l.src) {
		switch c := l.src[l.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			l.i++
		case c == '-' && strings.HasPrefix(l.src[l.i:], "--"):
			if nl := strings.IndexByte(l.src[l.i:], '\n'); nl >= 0 {
				l.i += nl + 1
			} else {
				l.i = len(l.src)
			}
		default:
			return
		}
	}
}

// number lexes a decimal literal (digits, optional fraction, optional exponent, or a leading
// '.') or a hexadecimal 0x literal. A sign is not part of the literal: -1 is unary minus.
func (l *sqlLexer) number() lexToken {
	start := l.i
	var v float64
	if strings.HasPrefix(l.src[l.i:], "0x") || strings.HasPrefix(l.src[l.i:], "0X") {
		l.i += 2
		for l.i < len(l.src) && isHexDig(l.src[l.i]) {
			v = v*16 + float64(hexDigitVal(l.src[l.i]))
			l.i++
		}
		if l.i == start+2 {
			return l.errorf(start, "malformed number %q: expected hexadecimal digits after 0x", l.src[start:l.i])
		}
	} else {
		l.digits()
		if l.i < len(l.src) && l.src[l.i] == '.' {
			l.i++
			l.digits()
		}
		if l.i < len(l.src) && (l.src[l.i] == 'e' || l.src[l.i] == 'E') {
			j := l.i + 1
			if j < len(l.src) && (l.src[j] == '+' || l.src[j] == '-') {
				j++
			}
			if j >= len(l.src) || !isDecDigit(l.src[j]) {
				return l.errorf(start, "malformed number %q: expected digits in the exponent", l.src[start:min(j+1, len(l.src))])
			}
			l.i = j
			l.digits()
		}
		f, err := strconv.ParseFloat(l.src[start:l.i], 64)
		if err != nil && !math.IsInf(f, 0) {
			return l.errorf(start, "malformed number %q", l.src[start:l.i])
		}
		v = f
	}
	// 12abc is one malformed token rather than 12 followed by an alias abc.
	if l.i < len(l.src) && isWordChar(l.src[l.i]) {
		end := l.i
		for end < len(l.src) && isWordChar(l.src[end]) {
			end++
		}
		return l.errorf(start, "malformed number %q", l.src[start:end])
	}
	if math.IsInf(v, 0) {
		return l.errorf(start, "number %s is out of range", l.src[start:l.i])
	}
	return lexToken{kind: tkNumber, off: start, text: l.src[start:l.i], num: v}
}

func (l *sqlLexer) digits() {
	for l.i < len(l.src) && isDecDigit(l.src[l.i]) {
		l.i++
	}
}

// string lexes a literal in single or double quotes with JSON's escapes plus \'. Raw control
// characters are refused as in JSON. It decodes as the JSON parser does (unpaired surrogates
// and invalid UTF-8 become U+FFFD), so a literal equals the same string in an item.
func (l *sqlLexer) string() lexToken {
	start := l.i
	q := l.src[start]
	s, n, err := value.Unquote(l.src[start+1:], q, value.DialectSQL)
	if err == nil {
		l.i = start + 1 + n
		return lexToken{kind: tkString, off: start, text: l.src[start:l.i], str: s}
	}
	e := err.(*value.UnquoteError)
	at := start + 1 + e.Off
	switch e.Reason {
	case value.ControlChar:
		return l.errorf(at, "control character %q in string literal; write it as an escape such as \\n", rune(l.src[at]))
	case value.LoneBackslash:
		return l.errorf(at, "unclosed string literal: it ends with a lone '\\'")
	case value.UnknownEscape:
		r, _ := utf8.DecodeRuneInString(l.src[at+1:])
		return l.errorf(at, "invalid escape sequence '\\%c' in string literal", r)
	case value.ShortHex, value.BadHex:
		return l.errorf(at, "invalid escape sequence in string literal: \\u needs four hexadecimal digits")
	}
	return l.errorf(start, "unclosed string literal: missing closing %c", q)
}

func isWordStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isWordChar(c byte) bool  { return isWordStart(c) || isDecDigit(c) }
func isDecDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isHexDig(c byte) bool    { return isDecDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func hexDigitVal(c byte) int {
	switch {
	case isDecDigit(c):
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	default:
		return int(c-'A') + 10
	}
}
