package storage

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// Options configure the node's database.
type Options struct {
	// CacheSize bounds the memory reads use beyond memtables: a thirty-second of it caches
	// hot items (DB.Rows), the rest is Pebble's block cache.
	CacheSize int64
	// Logger receives Pebble's own messages; nil discards them.
	Logger pebble.Logger
}

// DefaultCacheSize is used when Options.CacheSize is zero.
const DefaultCacheSize = 128 << 20

// DB is the node's Pebble database.
type DB struct {
	*pebble.DB
	// Rows caches hot items in front of Pebble; see RowCache for the rule its users keep.
	Rows  *RowCache
	cache *pebble.Cache
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
	// Every create and most writes first look up a key that usually does not exist yet; bloom
	// filters answer those lookups without reading data blocks.
	// A point read that hits walks one table's index to one data block; a single-level index
	// (one index block per table, as large as it needs, like CockroachDB's 256 KB) saves a
	// block lookup on every read compared with the default two-level index of 4 KB blocks.
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		po.Levels[i].IndexBlockSize = 256 << 10
	}
	if po.Logger == nil {
		po.Logger = quietLogger{}
	}
	db, err := pebble.Open(dir, po)
	cache.Unref() // the DB holds its own reference
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	return &DB{DB: db, Rows: NewRowCache(rows)}, nil
}

// Sync is the write option for everything that is acknowledged to a client.
var Sync = pebble.Sync

// GetCopy reads key and returns a copy of its value that outlives Pebble's buffers, appended to dst.
func (db *DB) GetCopy(dst, key []byte) ([]byte, error) {
	v, closer, err := db.Get(key)
	if err != nil {
		return nil, err
	}
	dst = append(dst, v...)
	return dst, closer.Close()
}

// IsNotFound reports whether err means the key is absent.
func IsNotFound(err error) bool { return errors.Is(err, pebble.ErrNotFound) }

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...)) // Pebble only calls this on corruption it cannot survive
}
