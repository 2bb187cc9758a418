// Package cqlvalue is CQL's type system: types resolved from the parser's type syntax, values
// in their native-protocol serialization (the form drivers bind and read, and the form rows
// store), literals turned into values, comparison in Cassandra's order, an order-preserving
// key encoding for clustering, and the collection operations of UPDATE.
//
// It must never know about storage, the engine or the wire's framing.
package cqlvalue
