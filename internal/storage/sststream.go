package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/objstorage"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Streamed sstables move a span of any size between nodes in bounded memory. The sender
// writes them from a snapshot as it iterates (WriteSpanSSTs): the sstable writer's blocks go
// to an io.Writer as they are finished, and a new sstable begins once one is large enough, so
// that what the writer holds (its current blocks, the index and filter of one sstable) does
// not grow with the span. The receiver appends what arrives to files of an SSTDir, in the
// store's directory, and ingests them all at once when the last has arrived: the same atomic
// replacement that Ingest makes of sstables held in memory.

// WriteSpanSSTs writes sstables that together replace span with what s holds in it, as
// SpanSST's one sstable would: next is called for each sstable, and its bytes are written to
// the io.Writer next returns as the sstable writer produces them. An sstable ends once it
// holds about maxBytes, and the next begins at the key where it ended; each begins (in key
// order) with the deletion of its own part of span, so that the parts tile span, do not
// overlap, and may be ingested together.
func (s *Snapshot) WriteSpanSSTs(db *DB, span Span, maxBytes uint64, next func() (io.Writer, error)) error {
	it, err := s.NewIter(span.Start, span.End)
	if err != nil {
		return err
	}
	defer it.Close()
	var (
		w     *sstable.Writer
		start = span.Start // the part of span the current sstable replaces begins here
	)
	open := func() error {
		out, err := next()
		if err != nil {
			return err
		}
		w = sstable.NewWriter(&streamWritable{w: out}, db.opts.MakeWriterOptions(0, db.db.TableFormat()))
		return nil
	}
	// finish ends the current sstable with the deletion of its part, [start, end).
	finish := func(end []byte) error {
		err := w.DeleteRange(start, end)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		w = nil
		return err
	}
	defer func() {
		if w != nil {
			w.Close() // after a failure: the bytes it wrote are of no use
		}
	}()
	if err := open(); err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		if w.Raw().EstimatedSize() >= maxBytes {
			end := bytes.Clone(it.Key())
			if err := finish(end); err != nil {
				return err
			}
			start = end
			if err := open(); err != nil {
				return err
			}
		}
		if err := w.Set(it.Key(), it.Value()); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	return finish(span.End)
}

// streamWritable is an objstorage.Writable that passes what the sstable writer writes on.
type streamWritable struct{ w io.Writer }

var _ objstorage.Writable = (*streamWritable)(nil)

func (s *streamWritable) Write(p []byte) error { _, err := s.w.Write(p); return err }
func (s *streamWritable) Finish() error        { return nil }
func (s *streamWritable) Abort()               {}

// sstDirs is the directory of the store under which SSTDirs live; nothing else is kept there,
// so whatever it holds at start-up was left by a process that died (RemoveSSTDirs).
const sstDirs = "sst-incoming"

// SSTDir is a directory of the store where sstables arrive, a piece at a time, before they
// are ingested together. Its files are in the store's file system, so ingesting them links
// them into the database rather than copying them.
type SSTDir struct {
	db    *DB
	path  string
	files []string
}

// sstDirSeq numbers the SSTDirs of this process; with the time, it names them uniquely.
var sstDirSeq atomic.Uint64

// NewSSTDir makes an empty SSTDir.
func (db *DB) NewSSTDir() (*SSTDir, error) {
	path := db.fs.PathJoin(db.dir, sstDirs, fmt.Sprintf("%d-%d", time.Now().UnixNano(), sstDirSeq.Add(1)))
	if err := db.fs.MkdirAll(path, 0o755); err != nil {
		return nil, err
	}
	return &SSTDir{db: db, path: path}, nil
}

// Create begins the directory's next sstable; Close syncs it. The sstables are ingested in
// the order they were created, though their order does not matter to the ingestion.
func (d *SSTDir) Create() (io.WriteCloser, error) {
	path := d.db.fs.PathJoin(d.path, fmt.Sprintf("%06d.sst", len(d.files)))
	f, err := d.db.fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, err
	}
	d.files = append(d.files, path)
	return sstFile{f}, nil
}

// sstFile is a file of an SSTDir: Close syncs it first, as an ingestion needs.
type sstFile struct{ f vfs.File }

func (s sstFile) Write(p []byte) (int, error) { return s.f.Write(p) }

func (s sstFile) Close() error {
	err := s.f.Sync()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Files is how many sstables the directory holds.
func (d *SSTDir) Files() int { return len(d.files) }

// Ingest makes the directory's sstables, and the sstables more (small ones, held in memory),
// part of the database in one step, as Ingest does. Their spans must not overlap one another.
// Remove the directory afterwards, whatever the outcome.
func (d *SSTDir) Ingest(more [][]byte) error {
	paths := append([]string(nil), d.files...)
	for i, b := range more {
		path := d.db.fs.PathJoin(d.path, fmt.Sprintf("more-%06d.sst", i))
		if err := d.db.writeFile(path, b); err != nil {
			return err
		}
		paths = append(paths, path)
	}
	return d.db.db.Ingest(context.Background(), paths)
}

// Remove deletes the directory and what it holds.
func (d *SSTDir) Remove() error { return d.db.fs.RemoveAll(d.path) }

// SSTDirs lists the SSTDirs the store holds (tests look for leftovers).
func (db *DB) SSTDirs() ([]string, error) {
	names, err := db.fs.List(db.fs.PathJoin(db.dir, sstDirs))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return names, nil
}

// RemoveSSTDirs deletes every SSTDir of the store: at start-up, those that a process which
// stopped while sstables arrived left behind.
func (db *DB) RemoveSSTDirs() error {
	return db.fs.RemoveAll(db.fs.PathJoin(db.dir, sstDirs))
}
