package storage

import (
	"bytes"
	"errors"
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

// A data directory written by the first layout, which recorded no version, or by an unknown
// layout is refused with ErrFormat and left as it was; an empty one is stamped and reopens.
func TestOpenChecksFormat(t *testing.T) {
	fresh := t.TempDir()
	db, err := Open(fresh, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = Open(fresh, Options{}); err != nil {
		t.Fatalf("reopening a directory this version made: %v", err)
	}
	db.Close()

	for name, keys := range map[string]map[string]string{
		"first layout": {"d\x00\x00\x00\x01abc\x00\x01id\x00\x01": `{"id":"id"}`},
		"layout 2":     {"v": "\x02"},
		"newer layout": {"v": string(rune(FormatVersion + 1))},
	} {
		dir := t.TempDir()
		pdb, err := pebble.Open(dir, &pebble.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range keys {
			pdb.Set([]byte(k), []byte(v), pebble.Sync)
		}
		pdb.Close()
		if _, err := Open(dir, Options{}); !errors.Is(err, ErrFormat) {
			t.Fatalf("%s: Open gave %v, want ErrFormat", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
		pdb, err = pebble.Open(dir, &pebble.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range keys {
			got, closer, err := pdb.Get([]byte(k))
			if err != nil || string(got) != v {
				t.Fatalf("%s: key %q after the refusal: %q, %v", name, k, got, err)
			}
			closer.Close()
		}
		_, closer, err := pdb.Get(FormatKey())
		if err == nil {
			closer.Close()
			if name == "first layout" {
				t.Fatalf("%s: the refused directory was stamped", name)
			}
		}
		pdb.Close()
	}
}
