package engine_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/storage"
)

// The format 3 fixture (testdata/format3): a data directory written by the build before the
// upgrade, and what that build read from it. Opened here it is upgraded in place, and must
// read the same.

// fixture3Clock is the fixture's clock, held where its dump was taken.
var fixture3Clock = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

func fixture3Options(dir string, fs *storage.MemFS) engine.Options {
	return engine.Options{Dir: dir, FS: fs, ChangeFeedRetention: 24 * time.Hour, ManualReindex: true,
		Now: func() time.Time { return fixture3Clock }}
}

// checkFixture3 opens the engine and compares what it reads with the golden dump.
func checkFixture3(t *testing.T, o engine.Options) {
	t.Helper()
	e, err := engine.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dump(e, o.Now)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/format3/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("the upgraded data reads differently from line %d:\n got: %s\nwant: %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("the upgraded data reads differently: %d lines, want %d", len(gl), len(wl))
	}
}

// A data directory written in layout 3 opens in this build, upgraded in place, and reads
// exactly as it did; opened again, it is not upgraded twice.
func TestUpgradeFromFormat3(t *testing.T) {
	dir := t.TempDir()
	for name, b := range engine.Fixture3Files(t) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkFixture3(t, fixture3Options(dir, nil))
	checkFixture3(t, fixture3Options(dir, nil))
}

// The upgrade cut short by a power loss after any of its batches, keeping none or some of
// what was not synced, finishes at the next start and reads exactly as the fixture did.
func TestUpgradeSurvivesPowerLoss(t *testing.T) {
	files := engine.Fixture3Files(t)
	load := func() *storage.MemFS {
		mem := storage.NewMemFS()
		for name, b := range files {
			if err := mem.WriteFile(filepath.Join("/data", name), b); err != nil {
				t.Fatal(err)
			}
		}
		return mem
	}
	// How many batches an upgrade of the fixture takes, in small batches.
	const batchKeys = 97
	count := 0
	{
		mem := load()
		db, err := storage.Open("/data/db", storage.Options{FS: mem})
		if err != nil {
			t.Fatal(err)
		}
		if err := engine.Upgrade(db, partition.UpgradeOptions{BatchKeys: batchKeys, AfterBatch: func() { count++ }}); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	if count < 10 {
		t.Fatalf("the upgrade took %d batches: too few to cut it short anywhere interesting", count)
	}
	step := 1
	if testing.Short() {
		step = count / 5
	}
	for _, keep := range []int{0, 50} {
		for k := 1; k <= count; k += step {
			t.Run(fmt.Sprintf("keep=%d/after-batch-%d", keep, k), func(t *testing.T) {
				mem := load()
				db, err := storage.Open("/data/db", storage.Options{FS: mem})
				if err != nil {
					t.Fatal(err)
				}
				var survived *storage.MemFS
				n := 0
				rng := rand.New(rand.NewPCG(uint64(k), uint64(keep)))
				err = engine.Upgrade(db, partition.UpgradeOptions{BatchKeys: batchKeys, AfterBatch: func() {
					if n++; n == k {
						survived = mem.Crash(keep, rng)
					}
				}})
				db.Close()
				if err != nil {
					t.Fatal(err)
				}
				checkFixture3(t, fixture3Options("/data", survived))
			})
		}
	}
}
