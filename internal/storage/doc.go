// Package storage is Partita's one use of Pebble: it opens the node's database, offers the
// few things the layers above need (point reads, Batch, Iter, Snapshot, the row cache), and
// owns the layout of every key (keys.go), so that all other packages build and parse keys
// through it. No other package imports Pebble (internal/layering_test.go checks it), so the
// storage engine can change without touching them.
//
// A DB may also live in a MemFS (memfs.go), which remembers what was synced: power-loss tests
// cut the power there, at once or at a chosen sync, and reopen on what survived.
//
// It knows nothing of JSON, partition keys or Cosmos semantics; it must never import a package
// above it (partition, engine, api).
package storage
