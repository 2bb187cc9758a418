// Package query is Partita's Cosmos DB NoSQL query engine: a hand-written lexer and
// recursive-descent parser that produce an AST (ast.go), the built-in functions, and the
// evaluation of queries over JSON values (package value).
//
// It knows no storage: it reads items through a small scan interface that the engine
// implements with partitions, so the same executor runs inside one partition and merges
// across many. It must never import the engine, the partition or the storage packages.
package query
