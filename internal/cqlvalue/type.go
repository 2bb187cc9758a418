package cqlvalue

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
