package partitiontest

import (
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/storage"
)

// handleOpen creates a fresh store with one partition (firstID) owning the whole EPK space.
//
//	open [max-logical-bytes=N] [unique=(KEY,...)] [fs=memory]
func (env *Env) handleOpen(t *testing.T, d *datadriven.TestData) string {
	env.maxLogical = 1 << 30
	d.MaybeScanArgs(t, "max-logical-bytes", &env.maxLogical)
	env.unique = parseUnique(t, d)
	env.items.Unique = env.unique
	env.dir = t.TempDir()
	if d.HasArg("fs") {
		var fs string
		d.ScanArgs(t, "fs", &fs)
		if fs != "memory" {
			t.Fatalf("fs=%s: only fs=memory is known", fs)
		}
		env.dir, env.mem = "/store", storage.NewMemFS()
	}
	db, err := storage.Open(env.dir, storage.Options{FS: env.mem})
	if err != nil {
		t.Fatal(err)
	}
	env.db = db
	p, err := partition.Open(env.config(firstID, epk.All))
	if err != nil {
		t.Fatal(err)
	}
	env.parts = []*partition.Partition{p}
	return describe(p)
}
