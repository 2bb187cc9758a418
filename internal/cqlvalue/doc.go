// Package cqlvalue is CQL's type system: types resolved from the parser's type syntax, values
// in their native-protocol serialization (the form drivers bind and read, and the form rows
// store), literals turned into values, comparison in Cassandra's order, an order-preserving
// key encoding for clustering, and the collection operations of UPDATE.
//
// One concept per file:
//
//   - type.go: Kind, Type (String as system_schema shows it, Equal), Value, the constructors
//     Native, ListOf, SetOf, MapOf, TupleOf, FrozenOf; resolve.go: FromAST and Cassandra's rules
//     on types; wire.go: DataType for protocol metadata (text is varchar, 0x000D);
//   - literal.go, funcs.go, datetime.go, duration.go: Encode, terms to values (constants with
//     Cassandra's conversions and messages, bind markers, collection and tuple literals, casts,
//     now()/uuid()/totimestamp()...);
//   - validate.go: Validate (bound bytes against a type) and Normalize (sets and maps sorted and
//     de-duplicated: the stored form);
//   - compare.go: Compare in Cassandra's order; key.go: AppendKey, whose bytes sort as Compare
//     (reversed for DESC), self-delimiting so clustering components concatenate;
//   - collection.go: list/set/map operations on serialized collections (an empty collection
//     is null: the caller stores null); format.go: Format, values as CQL literals;
//     encode.go: typed constructors (EncodeInt, EncodeTimestamp...) and Int64; codec.go: the
//     byte-level framing.
//
// Every error is an *cql.InvalidError (CQL's Invalid, 0x2200) with Cassandra's message where
// Cassandra has one. Malformed bytes never panic (FuzzValidate, FuzzEncodeLiteral).
//
// It must never know about storage, the engine or the wire's framing.
package cqlvalue
