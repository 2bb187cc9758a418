package cql

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The lexer turns statement text into tokens. It runs ahead of the parser over the whole text; a
// lexical error becomes a final tkError token, reported only if the parser gets that far, so that
// errors come out in source order.

// punctuation lists the operators, longest first so that the longest match wins.
var punctuation = []string{
	"<=", ">=", "!=", "+=", "-=",
	"(", ")", "[", "]", "{", "}", ",", ";", ".", ":", "=", "<", ">", "+", "-", "*", "/", "%",
}

type lexer struct {
	src  string
	i    int
	toks []token
}

// lex splits src into tokens, ending with tkEOF or tkError.
func lex(src string) []token {
	// About one token per five bytes of typical CQL; sizing for it up front saves regrowing.
	l := &lexer{src: src, toks: make([]token, 0, len(src)/5+2)}
	for {
		t := l.next()
		l.toks = append(l.toks, t)
		if t.kind == tkEOF || t.kind == tkError {
			return l.toks
		}
	}
}

func errorToken(off int, format string, args ...any) token {
	return token{kind: tkError, off: off, val: fmt.Sprintf(format, args...)}
}

func (l *lexer) next() token {
	if t, ok := l.skipSpace(); !ok {
		return t
	}
	start := l.i
	if l.i >= len(l.src) {
		return token{kind: tkEOF, off: start}
	}
	if n := uuidLen(l.src[l.i:]); n > 0 {
		l.i += n
		return token{kind: tkUUID, off: start, val: strings.ToLower(l.src[start:l.i])}
	}
	c := l.src[l.i]
	switch {
	case isLetter(c):
		for l.i < len(l.src) && isWordChar(l.src[l.i]) {
			l.i++
		}
		w := strings.ToLower(l.src[start:l.i])
		switch w {
		case "true", "false":
			return token{kind: tkBool, off: start, val: w}
		case "nan":
			return token{kind: tkFloat, off: start, val: "NaN"}
		case "infinity":
			return token{kind: tkFloat, off: start, val: "Infinity"}
		}
		return token{kind: tkWord, off: start, val: w, kw: keywordOf[w]}
	case isDigit(c):
		return l.number()
	case c == '\'':
		return l.quoted('\'', tkString, "string literal")
	case c == '"':
		t := l.quoted('"', tkQuoted, "quoted identifier")
		if t.kind == tkQuoted && t.val == "" {
			return errorToken(start, "a quoted identifier cannot be empty")
		}
		return t
	case c == '$' && strings.HasPrefix(l.src[l.i:], "$$"):
		end := strings.Index(l.src[l.i+2:], "$$")
		if end < 0 {
			return errorToken(start, "unterminated $$ string literal")
		}
		l.i += 2 + end + 2
		s := l.src[start+2 : l.i-2]
		if !utf8.ValidString(s) {
			return errorToken(start, "invalid UTF-8 in string literal")
		}
		return token{kind: tkString, off: start, val: s}
	case c == '?':
		l.i++
		return token{kind: tkQuestion, off: start, val: "?"}
	}
	for _, p := range punctuation {
		if strings.HasPrefix(l.src[l.i:], p) {
			l.i += len(p)
			return token{kind: tkPunct, off: start, val: p}
		}
	}
	r, size := utf8.DecodeRuneInString(l.src[l.i:])
	if r == utf8.RuneError && size == 1 {
		return errorToken(start, "invalid UTF-8 in statement text")
	}
	return errorToken(start, "unexpected character %q", r)
}

// skipSpace skips whitespace and comments (-- and // to the end of the line, /* ... */ not
// nested). It returns an error token, and false, for an unterminated block comment.
func (l *lexer) skipSpace() (token, bool) {
	for l.i < len(l.src) {
		rest := l.src[l.i:]
		switch c := rest[0]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			l.i++
		case strings.HasPrefix(rest, "--") || strings.HasPrefix(rest, "//"):
			if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
				l.i += nl + 1
			} else {
				l.i = len(l.src)
			}
		case strings.HasPrefix(rest, "/*"):
			end := strings.Index(rest[2:], "*/")
			if end < 0 {
				return errorToken(l.i, "unterminated comment: /* without */"), false
			}
			l.i += 2 + end + 2
		default:
			return token{}, true
		}
	}
	return token{}, true
}

// quoted lexes text between quote characters q, in which a doubled q stands for one.
func (l *lexer) quoted(q byte, kind tokKind, what string) token {
	start := l.i
	l.i++
	// Most literals hold no doubled quote: then the value is a slice of the source.
	if j := strings.IndexByte(l.src[l.i:], q); j >= 0 && (l.i+j+1 >= len(l.src) || l.src[l.i+j+1] != q) {
		s := l.src[l.i : l.i+j]
		l.i += j + 1
		if !utf8.ValidString(s) {
			return errorToken(start, "invalid UTF-8 in %s", what)
		}
		return token{kind: kind, off: start, val: s}
	}
	var b strings.Builder
	for {
		j := strings.IndexByte(l.src[l.i:], q)
		if j < 0 {
			l.i = len(l.src)
			return errorToken(start, "unterminated %s", what)
		}
		b.WriteString(l.src[l.i : l.i+j])
		l.i += j + 1
		if l.i < len(l.src) && l.src[l.i] == q {
			b.WriteByte(q)
			l.i++
			continue
		}
		s := b.String()
		if !utf8.ValidString(s) {
			return errorToken(start, "invalid UTF-8 in %s", what)
		}
		return token{kind: kind, off: start, val: s}
	}
}

// number lexes an integer, a float (digits, optional fraction, optional exponent), a hex blob
// 0x..., or a duration (1h30m). A sign is not part of the literal: the parser reads -1 as a
// negative constant where a term is expected.
func (l *lexer) number() token {
	start := l.i
	if strings.HasPrefix(l.src[l.i:], "0x") || strings.HasPrefix(l.src[l.i:], "0X") {
		l.i += 2
		for l.i < len(l.src) && isHexDigit(l.src[l.i]) {
			l.i++
		}
		if l.i < len(l.src) && isWordChar(l.src[l.i]) {
			return l.malformed(start, "a blob literal is 0x followed by hexadecimal digits")
		}
		return token{kind: tkHex, off: start, val: strings.ToLower(l.src[start:l.i])}
	}
	l.digits()
	kind := tkInteger
	if l.i < len(l.src) && l.src[l.i] == '.' {
		kind = tkFloat
		l.i++
		l.digits()
	}
	if l.i < len(l.src) && (l.src[l.i] == 'e' || l.src[l.i] == 'E') {
		j := l.i + 1
		if j < len(l.src) && (l.src[j] == '+' || l.src[j] == '-') {
			j++
		}
		if j < len(l.src) && isDigit(l.src[j]) {
			kind = tkFloat
			l.i = j
			l.digits()
		} else if kind == tkFloat {
			return l.malformed(start, "expected digits in the exponent")
		}
	}
	if kind == tkInteger && l.i < len(l.src) && isLetter(l.src[l.i]) {
		if n := durationLen(l.src[start:]); n > 0 && (start+n == len(l.src) || !isWordChar(l.src[start+n])) {
			l.i = start + n
			return token{kind: tkDuration, off: start, val: strings.ToLower(l.src[start:l.i])}
		}
	}
	if l.i < len(l.src) && isWordChar(l.src[l.i]) {
		return l.malformed(start, "")
	}
	return token{kind: kind, off: start, val: l.src[start:l.i]}
}

// malformed is the error for a number run into letters: 12abc is one bad token, not 12 then abc.
func (l *lexer) malformed(start int, why string) token {
	end := l.i
	for end < len(l.src) && isWordChar(l.src[end]) {
		end++
	}
	l.i = end
	if why != "" {
		return errorToken(start, "malformed number %q: %s", l.src[start:end], why)
	}
	return errorToken(start, "malformed number %q", l.src[start:end])
}

func (l *lexer) digits() {
	for l.i < len(l.src) && isDigit(l.src[l.i]) {
		l.i++
	}
}

// durationUnits are the units of a duration literal, longest first where one is a prefix of
// another (mo and ms before m, us before u).
var durationUnits = []string{"mo", "ms", "us", "µs", "ns", "y", "w", "d", "h", "m", "s"}

// durationLen is the length of the duration literal (one or more integer-unit pairs, any case)
// at the start of s, or 0.
func durationLen(s string) int {
	i := 0
	for {
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == i {
			return i
		}
		unit := ""
		for _, u := range durationUnits {
			if len(s)-j >= len(u) && strings.EqualFold(s[j:j+len(u)], u) {
				unit = u
				break
			}
		}
		if unit == "" {
			return 0
		}
		i = j + len(unit)
	}
}

// uuidLen is 36 when s starts with a UUID (8-4-4-4-12 hexadecimal digits) not followed by a
// word character, 0 otherwise.
func uuidLen(s string) int {
	if len(s) < 36 || len(s) > 36 && isWordChar(s[36]) {
		return 0
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return 0
			}
		default:
			if !isHexDigit(s[i]) {
				return 0
			}
		}
	}
	return 36
}

func isLetter(c byte) bool   { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isWordChar(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' }
func isHexDigit(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
