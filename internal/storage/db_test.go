package storage

import (
	"bytes"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// GetLikelyAbsent agrees with Get wherever the key lives: memtable, or the last level, whose
// bloom filters it reads and Get does not.
func TestGetLikelyAbsent(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, k := range []string{"abc", "abd", "b"} {
		if err := db.db.Set([]byte(k), []byte("v-"+k), pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	check := func(where string) {
		t.Helper()
		for _, k := range []string{"abc", "abd", "b", "ab", "abcd", "a", "c"} {
			want, werr := db.GetCopy(nil, []byte(k))
			got, gerr := db.GetLikelyAbsent([]byte("dst:"), []byte(k))
			if IsNotFound(werr) != IsNotFound(gerr) || (werr == nil) != (gerr == nil) {
				t.Fatalf("%s: %q: Get gave error %v, GetLikelyAbsent %v", where, k, werr, gerr)
			}
			if werr == nil && !bytes.Equal(got, append([]byte("dst:"), want...)) {
				t.Fatalf("%s: %q: Get gave %q, GetLikelyAbsent %q", where, k, want, got)
			}
		}
	}
	check("memtable")
	if err := db.db.Compact(t.Context(), []byte("a"), []byte("z"), true); err != nil {
		t.Fatal(err)
	}
	if m := db.db.Metrics(); m.Levels[6].TablesCount == 0 {
		t.Fatal("the compaction left no table in the last level")
	}
	check("last level")
	// The point: an absent key is ruled out by the last level's filter, without a data block.
	before := db.db.Metrics().Filter.Hits
	if _, err := db.GetLikelyAbsent(nil, []byte("abz")); !IsNotFound(err) {
		t.Fatal(err)
	}
	if db.db.Metrics().Filter.Hits == before {
		t.Fatal("the lookup of an absent key did not use the last level's bloom filter")
	}
}
