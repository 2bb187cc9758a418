package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Options configure the node's database.
type Options struct {
	// CacheSize bounds the memory reads use beyond memtables: a thirty-second of it caches
	// hot items (DB.Rows), the rest is Pebble's block cache.
	CacheSize int64
	// Logger receives Pebble's own messages; nil discards them.
	Logger pebble.Logger
	// Stalls receives a summary of write stalls (see stallLog); nil discards them.
	Stalls *slog.Logger
	// FS, when set, is the file system the database lives on instead of the operating
	// system's: power-loss tests open it on a MemFS.
	FS *MemFS
}

// DefaultCacheSize is used when Options.CacheSize is zero.
const DefaultCacheSize = 128 << 20

// DB is the node's Pebble database. Other packages reach Pebble only through its methods
// and the Batch, Iter and Snapshot types, so that the storage engine stays replaceable.
type DB struct {
	db *pebble.DB
	// Rows caches hot items in front of Pebble; see RowCache for the rule its users keep.
	Rows *RowCache
	// format is the layout the database holds (Format).
	format byte
	// opts, fs and dir are what the database was opened with, for the sstables of snapshots.
	opts *pebble.Options
	fs   vfs.FS
	dir  string
	// ingests numbers the files of ingestions, which are written in dir before Pebble takes them.
	ingests atomic.Uint64
}

// Open opens (creating if needed) the database in dir.
func Open(dir string, opts Options) (*DB, error) {
	size := opts.CacheSize
	if size <= 0 {
		size = DefaultCacheSize
	}
	rows := size / 32
	cache := pebble.NewCache(size - rows)
	po := &pebble.Options{
		Cache:                       cache,
		MemTableSize:                32 << 20,
		MemTableStopWritesThreshold: 4,
		CompactionConcurrencyRange:  func() (int, int) { return 1, 2 },
		Logger:                      opts.Logger,
		FormatMajorVersion:          pebble.FormatNewest,
	}
	// Every create first looks up a key that usually does not exist yet; bloom filters answer
	// those lookups without reading data blocks (for the last level, see GetLikelyAbsent).
	// A point read that hits walks one table's index to one data block; a single-level index
	// (one index block per table, as large as it needs, like CockroachDB's 256 KB) saves a
	// block lookup on every read compared with the default two-level index of 4 KB blocks.
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		po.Levels[i].IndexBlockSize = 256 << 10
	}
	if opts.Stalls != nil {
		po.EventListener = (&stallLog{log: opts.Stalls, now: time.Now}).listener()
	}
	if po.Logger == nil {
		po.Logger = quietLogger{}
	}
	if opts.FS != nil {
		po.FS = opts.FS.fs
	}
	po.EnsureDefaults() // as Open does to its copy; the sstables of snapshots need them
	db, err := pebble.Open(dir, po)
	cache.Unref() // the DB holds its own reference
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	d := &DB{db: db, Rows: NewRowCache(rows), opts: po, fs: po.FS, dir: dir}
	if d.fs == nil {
		d.fs = vfs.Default
	}
	if err := d.checkFormat(dir); err != nil {
		db.Close()
		return nil, err
	}
	return d, nil
}

// FormatVersion is the version of the key layout (keys.go) this build writes. The first
// layout (documents keyed by EPK and id) wrote no version; layout 2 had no change feed log, so
// its items could not be read back from the feed; layout 3 (keys_v3.go) is upgraded in place.
const FormatVersion = 4

// UpgradableFormat is the older layout this build can upgrade in place to FormatVersion.
const UpgradableFormat = 3

// ErrFormat is what Open returns for a data directory written in another layout.
var ErrFormat = errors.New("storage: the data directory uses another storage layout")

// Format is the layout version the database holds: FormatVersion, or UpgradableFormat until
// its upgrade finishes (StampFormat).
func (db *DB) Format() byte { return db.format }

// FinishUpgrade commits b, synced, with the record that the database holds layout
// FormatVersion: the last write of an upgrade.
func (db *DB) FinishUpgrade(b *Batch) error {
	if err := b.Set(FormatKey(), []byte{FormatVersion}); err != nil {
		return err
	}
	if err := b.Commit(); err != nil {
		return err
	}
	db.format = FormatVersion
	return nil
}

// checkFormat refuses a database written in a layout this build cannot read or upgrade, so
// that it is never misread, and stamps a new one with this build's.
func (db *DB) checkFormat(dir string) error {
	v, err := db.GetCopy(nil, FormatKey())
	switch {
	case err == nil:
		if len(v) == 1 && (v[0] == FormatVersion || v[0] == UpgradableFormat) {
			db.format = v[0]
			return nil
		}
		held := fmt.Sprintf("%x", v) // not a layout this or an earlier build wrote
		if len(v) == 1 {
			held = fmt.Sprint(v[0])
		}
		return fmt.Errorf("%w: %s holds storage layout %s; this Partita reads layout %d and upgrades layout %d. "+
			"Run the Partita version that wrote it, or move the directory aside and start on an empty one",
			ErrFormat, dir, held, FormatVersion, UpgradableFormat)
	case !IsNotFound(err):
		return err
	}
	it, err := db.NewIter(nil, nil)
	if err != nil {
		return err
	}
	empty := !it.First()
	if err := it.Close(); err != nil {
		return err
	}
	if !empty {
		return fmt.Errorf("%w: %s was written in Partita's first storage layout (documents keyed by "+
			"partition key and id); this version reads layout %d only. Run the Partita version that wrote it to "+
			"read the data out (for example with the SDK's read feed), then move the directory aside and "+
			"start this version on an empty one (or give it another --data)", ErrFormat, dir, FormatVersion)
	}
	b := db.NewBatch()
	defer b.Close()
	return db.FinishUpgrade(b)
}

// Close closes the database. Every batch, iterator and snapshot must be closed first.
func (db *DB) Close() error { return db.db.Close() }

// Get reads key. The value is only valid until closer is closed.
func (db *DB) Get(key []byte) (value []byte, closer io.Closer, err error) { return db.db.Get(key) }

// GetCopy reads key and returns a copy of its value that outlives Pebble's buffers, appended to dst.
func (db *DB) GetCopy(dst, key []byte) ([]byte, error) {
	v, closer, err := db.Get(key)
	if err != nil {
		return nil, err
	}
	dst = append(dst, v...)
	return dst, closer.Close()
}

// GetLikelyAbsent is GetCopy for a key that most likely does not exist, such as the id of an
// item being created. Get skips the bloom filters of the last level, which holds most of the
// data, because a point read usually finds its key there; for an absent key that costs a data
// block read per lookup, from disk when the block is not cached. An iterator may opt into
// those filters, and then answers most such lookups from filters alone.
func (db *DB) GetLikelyAbsent(dst, key []byte) ([]byte, error) {
	it, err := db.db.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		return nil, err
	}
	found := it.SeekPrefixGE(key) && bytes.Equal(it.Key(), key)
	if found {
		v, verr := it.ValueAndErr()
		dst, err = append(dst, v...), verr
	}
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err == nil && !found {
		err = pebble.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return dst, nil
}

// ErrNotFound is what the reads return for a key that does not exist.
var ErrNotFound = pebble.ErrNotFound

// IsNotFound reports whether err means the key is absent.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...)) // Pebble only calls this on corruption it cannot survive
}

// Compacting reports whether a compaction is running: a benchmark waits for a quiet spell
// after a bulk load, so that what it measures next is not the load's compactions.
func (db *DB) Compacting() bool { return db.db.Metrics().Compact.NumInProgress > 0 }
