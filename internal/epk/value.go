package epk

import (
	"encoding/json"
	"math"
	"strconv"
)

// Kind is the type of one partition key component.
//
// Its numeric value is the type byte Cosmos DB writes ahead of the component
// in both the hash input and the binary encoding, so it can be written out
// directly. The zero Kind (and so the zero Value) is KindUndefined: the value
// of a partition key path that is absent from a document.
type Kind uint8

// The component kinds. The names carry a Kind prefix because the plain names
// are taken by the constructors (String, Number, Null, Undefined).
const (
	KindUndefined Kind = 0x00
	KindNull      Kind = 0x01
	KindFalse     Kind = 0x02
	KindTrue      Kind = 0x03
	KindNumber    Kind = 0x05
	KindString    Kind = 0x08
)

// Valid reports whether k is one of the six component kinds. Values of any
// other kind are programming errors; the hash functions write their byte as
// is rather than panic.
func (k Kind) Valid() bool {
	switch k {
	case KindUndefined, KindNull, KindFalse, KindTrue, KindNumber, KindString:
		return true
	}
	return false
}

// String names the kind, for logs and test failures.
func (k Kind) String() string {
	switch k {
	case KindUndefined:
		return "undefined"
	case KindNull:
		return "null"
	case KindFalse:
		return "false"
	case KindTrue:
		return "true"
	case KindNumber:
		return "number"
	case KindString:
		return "string"
	}
	return "invalid"
}

// Value is one partition key component. Num is meaningful only for
// KindNumber and Str only for KindString; the other kinds carry no payload.
type Value struct {
	Kind Kind
	Num  float64
	Str  string
}

// String returns a string component. s is taken as UTF-8 and hashed byte for
// byte; invalid UTF-8 is not repaired (decoding JSON already replaces it).
func String(s string) Value { return Value{Kind: KindString, Str: s} }

// Number returns a number component. Cosmos DB hashes the IEEE-754 bits, so
// -0 and +0 give different hashes (as in the .NET SDK); callers that want
// them to share a partition must normalise before calling.
func Number(f float64) Value { return Value{Kind: KindNumber, Num: f} }

// Bool returns a true or false component (they are distinct kinds in Cosmos DB).
func Bool(b bool) Value {
	if b {
		return Value{Kind: KindTrue}
	}
	return Value{Kind: KindFalse}
}

// Null returns the JSON null component.
func Null() Value { return Value{Kind: KindNull} }

// Undefined returns the component of a partition key path that is absent from
// the document. It hashes as the single byte 0x00.
func Undefined() Value { return Value{Kind: KindUndefined} }

// Key is a partition key: one value per partition key path, in path order.
// A MultiHash key may be a prefix (fewer values than paths).
type Key []Value

// SystemNone is k as a container with the system key (/_partitionKey, created without a
// partition key) reads it: no value at all, or a null one, is its "none" logical partition,
// which is the undefined key, however a client names it.
func SystemNone(k Key) Key {
	if len(k) == 0 || len(k) == 1 && k[0].Kind == KindNull {
		return Key{Undefined()}
	}
	return k
}

// Same reports whether v and w are the same component: of one kind and, for numbers, with the
// same bits (-0 and +0 hash apart, so they name different logical partitions).
func (v Value) Same(w Value) bool {
	return v.Kind == w.Kind && math.Float64bits(v.Num) == math.Float64bits(w.Num) && v.Str == w.Str
}

// HasPrefix reports whether k begins with the components of p: the logical partitions under
// k are among those under p.
func (k Key) HasPrefix(p Key) bool {
	if len(p) > len(k) {
		return false
	}
	for i, v := range p {
		if !k[i].Same(v) {
			return false
		}
	}
	return true
}

// AppendJSON appends k as the JSON array the SDKs send in the partition key header (and a
// permission's resourcePartitionKey holds), {} standing for an absent value.
func (k Key) AppendJSON(b []byte) []byte {
	b = append(b, '[')
	for i, v := range k {
		if i > 0 {
			b = append(b, ',')
		}
		switch v.Kind {
		case KindString:
			s, _ := json.Marshal(v.Str) // a string always encodes
			b = append(b, s...)
		case KindNumber:
			// Keys come from JSON, so they are finite; were one not, the text would not parse
			// back, so it could never be taken for another key.
			b = strconv.AppendFloat(b, v.Num, 'g', -1, 64)
		case KindTrue:
			b = append(b, "true"...)
		case KindFalse:
			b = append(b, "false"...)
		case KindNull:
			b = append(b, "null"...)
		default:
			b = append(b, "{}"...)
		}
	}
	return append(b, ']')
}
