package storage

import (
	"bytes"
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2/objstorage"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// SSTs move a replica's state between nodes: the sender writes one sstable per key span of
// the state from a snapshot, each beginning with the deletion of its whole span, and the
// receiver ingests them all at once, which replaces what it held in those spans atomically
// (the deletion does not remove the keys of its own sstable: they come after it).

// KV is a key and its value, for BuildSST.
type KV struct{ Key, Value []byte }

// SpanSST is an sstable that replaces span with what snap holds in it.
func (s *Snapshot) SpanSST(db *DB, span Span) ([]byte, error) {
	it, err := s.NewIter(span.Start, span.End)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	w := db.newSSTWriter()
	if err := w.w.DeleteRange(span.Start, span.End); err != nil {
		return nil, err
	}
	for it.First(); it.Valid(); it.Next() {
		if err := w.w.Set(it.Key(), it.Value()); err != nil {
			return nil, err
		}
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	return w.finish()
}

// BuildSST is an sstable that replaces span with kvs, which must lie in it, in key order.
func (db *DB) BuildSST(span Span, kvs []KV) ([]byte, error) {
	w := db.newSSTWriter()
	if err := w.w.DeleteRange(span.Start, span.End); err != nil {
		return nil, err
	}
	for _, kv := range kvs {
		if bytes.Compare(kv.Key, span.Start) < 0 || bytes.Compare(kv.Key, span.End) >= 0 {
			return nil, fmt.Errorf("storage: key %x is outside the sstable's span", kv.Key)
		}
		if err := w.w.Set(kv.Key, kv.Value); err != nil {
			return nil, err
		}
	}
	return w.finish()
}

type sstWriter struct {
	buf memWritable
	w   *sstable.Writer
}

func (db *DB) newSSTWriter() *sstWriter {
	s := &sstWriter{}
	s.w = sstable.NewWriter(&s.buf, db.opts.MakeWriterOptions(0, db.db.TableFormat()))
	return s
}

func (s *sstWriter) finish() ([]byte, error) {
	if err := s.w.Close(); err != nil {
		return nil, err
	}
	return s.buf.Bytes(), nil
}

// memWritable is an objstorage.Writable in memory.
type memWritable struct{ bytes.Buffer }

var _ objstorage.Writable = (*memWritable)(nil)

func (m *memWritable) Write(p []byte) error { _, err := m.Buffer.Write(p); return err }
func (m *memWritable) Finish() error        { return nil }
func (m *memWritable) Abort()               {}

// Ingest makes the sstables part of the database in one step: every reader sees all of them or
// none, and so does whatever survives a crash. Their spans must not overlap one another.
func (db *DB) Ingest(ssts [][]byte) error {
	var paths []string
	defer func() {
		for _, p := range paths {
			db.fs.Remove(p) // Pebble links or moves them; a leftover is removed here
		}
	}()
	for _, b := range ssts {
		path := db.fs.PathJoin(db.dir, fmt.Sprintf("ingest-%d.sst", db.ingests.Add(1)))
		if err := db.writeFile(path, b); err != nil {
			return err
		}
		paths = append(paths, path)
	}
	return db.db.Ingest(context.Background(), paths)
}

// writeFile writes b to a new file at path, synced: an sstable to ingest.
func (db *DB) writeFile(path string, b []byte) error {
	f, err := db.fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
