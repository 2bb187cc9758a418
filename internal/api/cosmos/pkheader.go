package cosmos

import (
	"strconv"
	"strings"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// parsePartitionKey reads the x-ms-documentdb-partitionkey header: a JSON array of values,
// where {} stands for an absent (undefined) value. It is lenient where the Go SDK is not JSON:
// its strings are Go-quoted, so they may carry \U0001f600, \x7f, \a or \v escapes, which decode
// to the same string the body holds.
func parsePartitionKey(h string) (epk.Key, error) {
	p := pkParser{s: h}
	key, err := p.array()
	if err != nil {
		return nil, fault.New(fault.BadRequest, "The partition key header %q is not valid: %v. Send a JSON array such as [\"value\"]", h, err)
	}
	return key, nil
}

type pkParser struct {
	s string
	i int
}

type pkError string

func (e pkError) Error() string { return string(e) }

func (p *pkParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pkParser) array() (epk.Key, error) {
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '[' {
		return nil, pkError("it must start with '['")
	}
	p.i++
	key := epk.Key{}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
	} else {
		for {
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			key = append(key, v)
			p.space()
			if p.i >= len(p.s) {
				return nil, pkError("the array is not closed")
			}
			if p.s[p.i] == ']' {
				p.i++
				break
			}
			if p.s[p.i] != ',' {
				return nil, pkError("expected ',' or ']' at offset " + strconv.Itoa(p.i))
			}
			p.i++
		}
	}
	p.space()
	if p.i != len(p.s) {
		return nil, pkError("unexpected text after the array at offset " + strconv.Itoa(p.i))
	}
	return key, nil
}

func (p *pkParser) value() (epk.Value, error) {
	p.space()
	if p.i >= len(p.s) {
		return epk.Value{}, pkError("a value is missing")
	}
	rest := p.s[p.i:]
	switch {
	case rest[0] == '"':
		s, err := p.str()
		return epk.String(s), err
	case rest[0] == '{':
		p.i++
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '}' {
			return epk.Value{}, pkError("only {} (an absent value) may appear as an object")
		}
		p.i++
		return epk.Undefined(), nil
	case strings.HasPrefix(rest, "true"):
		p.i += 4
		return epk.Bool(true), nil
	case strings.HasPrefix(rest, "false"):
		p.i += 5
		return epk.Bool(false), nil
	case strings.HasPrefix(rest, "null"):
		p.i += 4
		return epk.Null(), nil
	}
	end := p.i
	for end < len(p.s) && strings.IndexByte("+-.0123456789eE", p.s[end]) >= 0 {
		end++
	}
	f, err := strconv.ParseFloat(p.s[p.i:end], 64)
	if err != nil || end == p.i {
		return epk.Value{}, pkError("a value must be a string, number, true, false, null or {} at offset " + strconv.Itoa(p.i))
	}
	p.i = end
	return epk.Number(f), nil
}

// str reads a quoted string with JSON escapes plus Go's \a \v \xHH \UHHHHHHHH. It decodes
// as the body's JSON parser does (unpaired surrogates and invalid UTF-8 become U+FFFD), so
// that a key hashes alike in the header and in the item.
func (p *pkParser) str() (string, error) {
	s, n, err := value.Unquote(p.s[p.i+1:], '"', value.DialectGo)
	if err == nil {
		p.i += 1 + n
		return s, nil
	}
	e := err.(*value.UnquoteError)
	switch e.Reason {
	case value.UnknownEscape:
		return "", pkError("unknown escape \\" + string(rune(p.s[p.i+1+e.Off+1])))
	case value.ShortHex:
		return "", pkError("a hex escape is cut short")
	case value.BadHex:
		return "", pkError("a hex escape is not valid")
	case value.RuneRange:
		return "", pkError("\\U escape out of range")
	}
	return "", pkError("a string is not closed")
}

// partitionKeyJSON renders a partition key as the JSON array the partition key header and a
// permission's resourcePartitionKey hold.
func partitionKeyJSON(k epk.Key) []byte { return k.AppendJSON(nil) }
