// Package value is Partita's one representation of JSON values, shared by the query engine
// and (later) server-side JavaScript: undefined as distinct from null, objects that keep their
// member order, Cosmos's total order across types (undefined < null < false < true < numbers <
// strings < arrays < objects), deep equality, and a fast parser and serializer.
//
// It must never import another package of Partita: it is a leaf that every evaluator builds on.
package value
