package cqlvalue

import (
	"slices"
	"strings"
)

// Kind is what a Type is: a native type or a kind of composite.
type Kind uint8

// The kinds. varchar is text (Cassandra stores and shows it as text).
const (
	Invalid Kind = iota
	Ascii
	Bigint
	Blob
	Boolean
	Counter
	Date
	Decimal
	Double
	Duration
	Float
	Inet
	Int
	Smallint
	Text
	Time
	Timestamp
	Timeuuid
	Tinyint
	UUID
	Varint
	List
	Set
	Map
	Tuple
	UDT
)

// Type is a resolved CQL type: the type of a column, a bind marker or a result column.
type Type struct {
	Kind Kind
	// Elems are the element types: one for List and Set, two (key, value) for Map, one per
	// component for Tuple and per field for UDT; none for native kinds.
	Elems []*Type
	// Frozen marks a collection or user type stored, compared and replaced as one value.
	// Tuples are always frozen; collections nested in collections must be frozen.
	Frozen bool
	// Keyspace, Name and Fields describe a UDT (Fields parallel to Elems).
	Keyspace, Name string
	Fields         []string
}

// Value is one value as the native protocol carries it: Bytes is its serialization (protocol
// v4 format) unless Null or Unset (a bound value left unset, protocol v4's length -2).
type Value struct {
	Bytes []byte
	Null  bool
	Unset bool
}

// kindNames are the CQL names of the native kinds (and of the composite kinds, for messages).
var kindNames = [...]string{
	Invalid: "invalid", Ascii: "ascii", Bigint: "bigint", Blob: "blob", Boolean: "boolean",
	Counter: "counter", Date: "date", Decimal: "decimal", Double: "double", Duration: "duration",
	Float: "float", Inet: "inet", Int: "int", Smallint: "smallint", Text: "text", Time: "time",
	Timestamp: "timestamp", Timeuuid: "timeuuid", Tinyint: "tinyint", UUID: "uuid",
	Varint: "varint", List: "list", Set: "set", Map: "map", Tuple: "tuple", UDT: "udt",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// IsNative reports whether k is one of the native (non-composite) kinds.
func (k Kind) IsNative() bool { return k > Invalid && k < List }

// natives holds one shared *Type per native kind. They are shared: never modify the *Type that
// Native returns (nor the element types of any Type, which may be natives).
var natives = func() [List]*Type {
	var n [List]*Type
	for k := Ascii; k < List; k++ {
		n[k] = &Type{Kind: k}
	}
	return n
}()

// nativeByName resolves a native type name as the parser gives it (varchar is text).
var nativeByName = func() map[string]Kind {
	m := map[string]Kind{"varchar": Text}
	for k := Ascii; k < List; k++ {
		m[kindNames[k]] = k
	}
	return m
}()

// Native returns the shared type of the native kind k; it panics for a composite kind, which is
// a programming error.
func Native(k Kind) *Type {
	if !k.IsNative() {
		panic("cqlvalue.Native: not a native kind: " + k.String())
	}
	return natives[k]
}

// ListOf is list<elem>, not frozen (wrap it with FrozenOf for frozen<list<elem>>).
func ListOf(elem *Type) *Type { return &Type{Kind: List, Elems: []*Type{elem}} }

// SetOf is set<elem>, not frozen.
func SetOf(elem *Type) *Type { return &Type{Kind: Set, Elems: []*Type{elem}} }

// MapOf is map<key, value>, not frozen.
func MapOf(key, value *Type) *Type { return &Type{Kind: Map, Elems: []*Type{key, value}} }

// TupleOf is tuple<elems...>; tuples are always frozen.
func TupleOf(elems ...*Type) *Type { return &Type{Kind: Tuple, Elems: elems, Frozen: true} }

// FrozenOf returns t frozen, as frozen<t> makes it: a copy whose nested collections and user
// types are frozen too (Cassandra freezes the whole type). Native types come back unchanged.
func FrozenOf(t *Type) *Type {
	if t.Kind.IsNative() {
		return t
	}
	c := *t
	c.Frozen = true
	c.Elems = make([]*Type, len(t.Elems))
	for i, e := range t.Elems {
		c.Elems[i] = FrozenOf(e)
	}
	return &c
}

// IsCollection reports whether t is a list, set or map (frozen or not).
func (t *Type) IsCollection() bool { return t.Kind == List || t.Kind == Set || t.Kind == Map }

// MultiCell reports whether t is a collection or user type that is not frozen: one whose
// elements UPDATE can change one by one.
func (t *Type) MultiCell() bool { return (t.IsCollection() || t.Kind == UDT) && !t.Frozen }

// String is the type as Cassandra shows it (system_schema.columns.type, messages): text, int,
// list<int>, frozen<list<int>>, map<text, frozen<set<int>>>, frozen<tuple<int, text>> (tuples
// always show frozen), a user type by name (frozen<name> when frozen).
func (t *Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t *Type) write(b *strings.Builder) {
	if t.Kind.IsNative() {
		b.WriteString(kindNames[t.Kind])
		return
	}
	frozen := t.Frozen || t.Kind == Tuple
	if frozen {
		b.WriteString("frozen<")
	}
	switch t.Kind {
	case UDT:
		b.WriteString(quoteName(t.Name))
	case List, Set, Map, Tuple:
		b.WriteString(kindNames[t.Kind])
		b.WriteByte('<')
		for i, e := range t.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			e.write(b)
		}
		b.WriteByte('>')
	default:
		b.WriteString("invalid")
	}
	if frozen {
		b.WriteByte('>')
	}
}

// quoteName quotes a name unless it is a plain lower-case identifier.
func quoteName(s string) string {
	plain := s != ""
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// Equal reports whether a and b are the same type (frozenness included).
func Equal(a, b *Type) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.Kind != b.Kind || a.Frozen != b.Frozen || len(a.Elems) != len(b.Elems) {
		return false
	}
	if a.Kind == UDT && (a.Keyspace != b.Keyspace || a.Name != b.Name || !slices.Equal(a.Fields, b.Fields)) {
		return false
	}
	for i := range a.Elems {
		if !Equal(a.Elems[i], b.Elems[i]) {
			return false
		}
	}
	return true
}
