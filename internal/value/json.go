package value

import (
	"errors"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// Parse decodes one JSON value. It accepts exactly what encoding/json accepts when it decodes
// into an interface{}: numbers past the range of a double are refused.
func Parse(b []byte) (Value, error) {
	p := parser{b: b}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	p.space()
	if p.i != len(p.b) {
		return Value{}, p.fail("unexpected data after the value")
	}
	return v, nil
}

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 512

type parser struct {
	b []byte
	i int
}

func (p *parser) fail(msg string) error {
	return errors.New("invalid JSON at offset " + strconv.Itoa(p.i) + ": " + msg)
}

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, p.fail("nested too deeply")
	}
	if p.i >= len(p.b) {
		return Value{}, p.fail("unexpected end")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		var ms []Member
		p.space()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return Value{k: Object, obj: []Member{}}, nil
		}
		for {
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return Value{}, p.fail("expected a property name")
			}
			key, err := p.str()
			if err != nil {
				return Value{}, err
			}
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return Value{}, p.fail("expected ':'")
			}
			p.i++
			p.space()
			v, err := p.value(depth + 1)
			if err != nil {
				return Value{}, err
			}
			ms = append(ms, Member{key, v})
			p.space()
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.b) && p.b[p.i] == '}' {
				p.i++
				return Obj(ms), nil
			}
			return Value{}, p.fail("expected ',' or '}'")
		}
	case c == '[':
		p.i++
		elems := []Value{}
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return Arr(elems), nil
		}
		for {
			p.space()
			v, err := p.value(depth + 1)
			if err != nil {
				return Value{}, err
			}
			elems = append(elems, v)
			p.space()
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.b) && p.b[p.i] == ']' {
				p.i++
				return Arr(elems), nil
			}
			return Value{}, p.fail("expected ',' or ']'")
		}
	case c == '"':
		s, err := p.str()
		return Str(s), err
	case c == 't':
		return trueV, p.word("true")
	case c == 'f':
		return falseV, p.word("false")
	case c == 'n':
		return nullV, p.word("null")
	default:
		return p.number()
	}
}

func (p *parser) word(w string) error {
	if len(p.b)-p.i < len(w) || string(p.b[p.i:p.i+len(w)]) != w {
		return p.fail("unexpected character")
	}
	p.i += len(w)
	return nil
}

func (p *parser) number() (Value, error) {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	intStart := p.i
	if digits() == 0 || p.b[intStart] == '0' && p.i-intStart > 1 {
		return Value{}, p.fail("invalid number")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return Value{}, p.fail("invalid number")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return Value{}, p.fail("invalid number")
		}
	}
	f, err := strconv.ParseFloat(string(p.b[start:p.i]), 64)
	if math.IsInf(f, 0) {
		// Past the double range (1e400, a 400-digit integer): Cosmos refuses it, and kept it
		// would be stored as written but read by queries as infinity, which JSON cannot write.
		p.i = start
		return Value{}, p.fail("number out of the range of a double")
	}
	if err != nil {
		return Value{}, p.fail("invalid number")
	}
	return Num(f), nil
}

func (p *parser) str() (string, error) {
	b, start := p.b, p.i+1 // past the opening quote
	for i := start; i < len(b); i++ {
		c := b[i]
		if c == '"' {
			p.i = i + 1
			return string(b[start:i]), nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			p.i = i
			return p.slowStr(start)
		}
	}
	p.i = len(b)
	return "", p.fail("unterminated string")
}

// slowStr decodes the string that starts at start, of which p.b[start:p.i] needs no decoding.
func (p *parser) slowStr(start int) (string, error) {
	s, end, err := unquoteFrom(p.b[start:], p.i-start, '"', DialectJSON)
	if err == nil {
		p.i = start + end
		return s, nil
	}
	e := err.(*UnquoteError)
	p.i = start + e.Off
	msg := e.Reason.String()
	switch e.Reason {
	case ShortHex, BadHex:
		msg = "invalid \\u escape"
		p.i += 2 // the offset past \u, as it always was
	case UnknownEscape:
		p.i += 2
	}
	return "", p.fail(msg)
}

// AppendJSON writes v as JSON. Undefined writes nothing: callers leave undefined out of
// objects and arrays, as Cosmos does.
func AppendJSON(dst []byte, v Value) []byte {
	switch v.k {
	case Null:
		return append(dst, "null"...)
	case Boolean:
		return strconv.AppendBool(dst, v.b)
	case Number:
		return AppendNumber(dst, v.n)
	case String:
		return appendString(dst, v.s)
	case Array:
		dst = append(dst, '[')
		first := true
		for _, e := range v.arr {
			if e.k == Undefined {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = AppendJSON(dst, e)
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		first := true
		for _, m := range v.obj {
			if m.Val.k == Undefined {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendString(dst, m.Key)
			dst = append(dst, ':')
			dst = AppendJSON(dst, m.Val)
		}
		return append(dst, '}')
	}
	return dst
}

// AppendNumber writes a number as JavaScript would: integers without a fraction, others in
// the shortest form that reads back the same.
func AppendNumber(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...) // JSON has no NaN or Infinity
	}
	if f == 0 {
		// JavaScript writes -0 as 0; and since Equal(-0, 0), Key must not tell them apart.
		return append(dst, '0')
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	b := strconv.AppendFloat(nil, f, 'e', -1, 64)
	// Go writes e-07; JavaScript writes e-7.
	for i := range b {
		if b[i] == 'e' && i+2 < len(b) && b[i+2] == '0' {
			b = append(b[:i+2], b[i+3:]...)
			break
		}
	}
	return append(dst, b...)
}

const hexDigits = "0123456789abcdef"

func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x80 {
			dst = append(dst, c)
			i++
			continue
		}
		if c < 0x80 {
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}

// String is v's JSON, for messages and tests.
func (v Value) String() string {
	if v.k == Undefined {
		return "undefined"
	}
	return string(AppendJSON(nil, v))
}

// Key is a canonical encoding of v such that Key(a) == Key(b) exactly when Equal(a, b):
// objects' members are sorted. It serves DISTINCT and GROUP BY.
func Key(v Value) string { return string(appendKey(nil, v)) }

func appendKey(dst []byte, v Value) []byte {
	dst = append(dst, byte('0'+v.k))
	switch v.k {
	case Array:
		for _, e := range v.arr {
			dst = appendKey(dst, e)
		}
		return append(dst, ']')
	case Object:
		ms := append([]Member(nil), v.obj...)
		sort.Slice(ms, func(i, j int) bool { return ms[i].Key < ms[j].Key })
		for _, m := range ms {
			if m.Val.k == Undefined {
				continue
			}
			dst = appendString(dst, m.Key)
			dst = appendKey(dst, m.Val)
		}
		return append(dst, '}')
	}
	return AppendJSON(dst, v)
}
