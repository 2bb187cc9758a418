// Package storage is Partita's one use of Pebble: it opens the node's database, and it owns
// the layout of every key (keys.go), so that all other packages build and parse keys through it.
//
// It knows nothing of JSON, partition keys or Cosmos semantics; it must never import a package
// above it (partition, engine, api).
package storage
