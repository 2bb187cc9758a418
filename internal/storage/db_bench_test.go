package storage

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// BenchmarkSyncedSet1KB is the floor under Partita's synced creates: bare Pebble, with the
// node's options, committing one 1 KB value per batch with a synced WAL, from 64 writers
// (Pebble shares one fsync among the commits waiting for it). With a lookup, each write first
// looks up its key, as a create must to tell itself from a conflict; the key never exists.
func BenchmarkSyncedSet1KB(b *testing.B) {
	value := make([]byte, 1150) // an item of 1 KB with its system properties
	for _, l := range []struct {
		name   string
		lookup func(db *DB, key []byte) ([]byte, error)
	}{
		{"none", nil},
		{"Get", func(db *DB, key []byte) ([]byte, error) { return db.GetCopy(nil, key) }},
		{"GetLikelyAbsent", func(db *DB, key []byte) ([]byte, error) { return db.GetLikelyAbsent(nil, key) }},
	} {
		lookup := l.lookup
		b.Run("writers=64/lookup="+l.name, func(b *testing.B) {
			db, err := Open(b.TempDir(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			b.SetParallelism(32) // 2 cores x 32
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				var key []byte
				for pb.Next() {
					i := next.Add(1)
					key = ItemKey(key[:0], 1, fmt.Sprintf("%016x", uint64(i)*0x9E3779B97F4A7C15), fmt.Sprint(i))
					if lookup != nil {
						if _, err := lookup(db, key); !IsNotFound(err) {
							b.Fatalf("lookup of a new key: %v", err)
						}
					}
					if err := db.db.Set(key, value, pebble.Sync); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkStepPastRewrittenKey walks past a key written 10,000 times since the last flush (a
// busy logical partition's record), with Next and with NextPrefix.
func BenchmarkStepPastRewrittenKey(b *testing.B) {
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for i := range 10_000 {
		batch := db.NewBatch()
		if err := batch.Set([]byte("k"), fmt.Append(nil, i)); err != nil {
			b.Fatal(err)
		}
		if err := batch.CommitUnsynced(); err != nil {
			b.Fatal(err)
		}
	}
	for _, step := range []struct {
		name string
		next func(*Iter) bool
	}{{"Next", (*Iter).Next}, {"NextPrefix", (*Iter).NextPrefix}} {
		b.Run(step.name, func(b *testing.B) {
			for b.Loop() {
				it, err := db.NewIter([]byte("k"), []byte("l"))
				if err != nil {
					b.Fatal(err)
				}
				if !it.First() || step.next(it) {
					b.Fatal("want one key")
				}
				it.Close()
			}
		})
	}
}
