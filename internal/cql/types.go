package cql

// TypeKind says what a Type is.
type TypeKind uint8

const (
	TypeNative TypeKind = iota // Name is one of nativeTypes
	TypeList                   // list<Args[0]>
	TypeSet                    // set<Args[0]>
	TypeMap                    // map<Args[0], Args[1]>
	TypeTuple                  // tuple<Args...>, at least one
	TypeFrozen                 // frozen<Args[0]>
	TypeUser                   // a user-defined type: Keyspace.Name (parsed here, refused later)
)

// Type is a CQL data type as written in a statement.
type Type struct {
	Kind TypeKind
	// Name is the lower-case native type name for TypeNative, the type's name for TypeUser,
	// and empty otherwise.
	Name string
	// Keyspace qualifies a TypeUser; empty when the statement does not name one.
	Keyspace string
	// Args are the element types: one for list, set and frozen, two for map, one or more for
	// tuple, none for native and user types.
	Args []*Type
}

// nativeTypes are CQL's native types. A word here in type position is a native type, never a
// user type (Cassandra refuses user types named like a native one).
var nativeTypes = map[string]bool{
	"ascii": true, "bigint": true, "blob": true, "boolean": true, "counter": true, "date": true,
	"decimal": true, "double": true, "duration": true, "float": true, "inet": true, "int": true,
	"smallint": true, "text": true, "time": true, "timestamp": true, "timeuuid": true,
	"tinyint": true, "uuid": true, "varchar": true, "varint": true,
}

// IsNative reports whether name (lower case) is a native CQL type.
func IsNative(name string) bool { return nativeTypes[name] }
