package storage

import "github.com/cockroachdb/pebble/v2"

// Iter walks the keys of one span in order, forward or backward. The slices Key and Value
// return are only valid until the iterator moves.
type Iter struct {
	it *pebble.Iterator
}

// NewIter iterates over the keys in [lower, upper) as of now.
func (db *DB) NewIter(lower, upper []byte) (*Iter, error) {
	return newIter(db.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper}))
}

func newIter(it *pebble.Iterator, err error) (*Iter, error) {
	if err != nil {
		return nil, err
	}
	return &Iter{it: it}, nil
}

func (i *Iter) First() bool { return i.it.First() }

// SeekGE moves to the first key at or after key. Seeking forward again from there is cheap:
// the iterator steps instead of searching when the next key is near.
func (i *Iter) SeekGE(key []byte) bool { return i.it.SeekGE(key) }
func (i *Iter) Last() bool             { return i.it.Last() }

// SeekLT moves to the last key before key.
func (i *Iter) SeekLT(key []byte) bool { return i.it.SeekLT(key) }
func (i *Iter) Next() bool             { return i.it.Next() }
func (i *Iter) Prev() bool             { return i.it.Prev() }

// NextPrefix is Next past a key that may have many versions not yet compacted away (one
// rewritten by every write, such as a logical partition's record): Next steps over each of
// them, NextPrefix seeks past them all.
func (i *Iter) NextPrefix() bool { return i.it.NextPrefix() }
func (i *Iter) Valid() bool      { return i.it.Valid() }
func (i *Iter) Key() []byte      { return i.it.Key() }
func (i *Iter) Value() []byte    { return i.it.Value() }

// Error is the first error the iterator met, if any; check it after a walk ends.
func (i *Iter) Error() error { return i.it.Error() }

// Close releases the iterator and returns its error, if any.
func (i *Iter) Close() error { return i.it.Close() }

// Snapshot is a consistent view of the database as of its creation, for reads that must not
// see later writes (a split's backfill).
type Snapshot struct {
	s *pebble.Snapshot
}

// NewSnapshot takes a snapshot; Close it when done, since it pins old data.
func (db *DB) NewSnapshot() *Snapshot { return &Snapshot{s: db.db.NewSnapshot()} }

// NewIter iterates over the snapshot's keys in [lower, upper).
func (s *Snapshot) NewIter(lower, upper []byte) (*Iter, error) {
	return newIter(s.s.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper}))
}

// Get reads key as of the snapshot and returns a copy of its value appended to dst.
func (s *Snapshot) Get(dst, key []byte) ([]byte, error) {
	v, closer, err := s.s.Get(key)
	if err != nil {
		return nil, err
	}
	dst = append(dst, v...)
	return dst, closer.Close()
}

// Close releases the snapshot.
func (s *Snapshot) Close() error { return s.s.Close() }
