package storage

import "github.com/cockroachdb/pebble/v2"

// Batch is a set of writes applied atomically by Commit. A batch is used by one goroutine.
type Batch struct {
	b *pebble.Batch
}

// NewBatch starts an empty batch.
func (db *DB) NewBatch() *Batch { return &Batch{b: db.db.NewBatch()} }

// Set writes value under key. Both are copied into the batch.
func (b *Batch) Set(key, value []byte) error { return b.b.Set(key, value, nil) }

// Delete removes key.
func (b *Batch) Delete(key []byte) error { return b.b.Delete(key, nil) }

// DeleteRange removes every key in [start, end).
func (b *Batch) DeleteRange(start, end []byte) error { return b.b.DeleteRange(start, end, nil) }

// Count is how many writes the batch holds.
func (b *Batch) Count() uint32 { return b.b.Count() }

// Commit applies the batch and syncs it: once Commit returns nil the writes survive a crash.
// Everything acknowledged to a client is committed this way.
func (b *Batch) Commit() error { return b.b.Commit(pebble.Sync) }

// CommitUnsynced applies the batch without waiting for it to reach the disk, for writes that a
// later synced batch makes durable (a split's backfill) or that can be rebuilt.
func (b *Batch) CommitUnsynced() error { return b.b.Commit(pebble.NoSync) }

// Close releases the batch; it must not be used after.
func (b *Batch) Close() error { return b.b.Close() }
