package storage

import (
	"bytes"
	"math/rand/v2"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// MemFS is a file system in memory that remembers which of its bytes and directory entries
// were synced, for power-loss tests: a DB opened on it (Options.FS) writes there, and Crash
// returns what a machine would find on its disk after losing power at that moment. It wraps
// Pebble's crashable MemFS so that tests above storage reach none of Pebble.
type MemFS struct {
	mem *vfs.MemFS
	// fs is mem as the DB sees it: every sync first calls beforeSync.
	fs         vfs.FS
	beforeSync atomic.Pointer[func()]
}

// NewMemFS returns an empty file system in memory.
func NewMemFS() *MemFS { return wrapMem(vfs.NewCrashableMem()) }

func wrapMem(mem *vfs.MemFS) *MemFS {
	m := &MemFS{mem: mem}
	m.fs = noReuse{errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData {
			if fn := m.beforeSync.Load(); fn != nil {
				(*fn)()
			}
		}
		return nil
	}))}
	return m
}

// noReuse is a file system that writes a new file where Pebble would reuse an old one (a
// recycled WAL). Pebble's crashable MemFS takes its clone lock twice in ReuseForWrite, once
// there and once in the Rename it calls; a Crash (CrashClone) that asks for the lock between
// the two waits for the first, and the second waits behind it: both stop for good.
type noReuse struct{ vfs.FS }

func (fs noReuse) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.Create(newname, category)
	if err != nil {
		return nil, err
	}
	if err := fs.Remove(oldname); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Crash returns a new file system holding what survives a power loss now: every byte and
// directory entry that was synced, and of the rest, each 4 KB block of a file and each
// directory entry with a probability of keepUnsynced percent, drawn from rng (which may be
// nil when keepUnsynced is 0). A block kept past lost ones leaves zeros in the gap, as a disk
// that wrote some sectors of a write and not others. Writes to m after Crash do not reach
// the copy; the DB on m goes on running and must be closed as usual.
func (m *MemFS) Crash(keepUnsynced int, rng *rand.Rand) *MemFS {
	return wrapMem(m.mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: keepUnsynced, RNG: rng}))
}

// WriteFile writes a file, creating the directories it needs, and syncs it: for tests that
// start from a data directory copied into memory.
func (m *MemFS) WriteFile(name string, data []byte) error {
	if err := m.mem.MkdirAll(m.mem.PathDir(name), 0o755); err != nil {
		return err
	}
	f, err := m.mem.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	// A copy: in race and invariants builds Pebble's MemFS scrambles what it is given to
	// write, to catch callers that reuse it, and data is the caller's.
	if _, err := f.Write(bytes.Clone(data)); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// The new entries of every directory on the way, down from the root.
	for dir := m.mem.PathDir(name); ; dir = m.mem.PathDir(dir) {
		d, err := m.mem.OpenDir(dir)
		if err != nil {
			return err
		}
		err = d.Sync()
		if cerr := d.Close(); err == nil {
			err = cerr
		}
		if err != nil || dir == m.mem.PathDir(dir) {
			return err
		}
	}
}

// BeforeSync makes fn run before every sync of a file or directory (nil: none), on the
// goroutine that syncs, which is usually one of Pebble's own: a Crash taken in fn loses that
// sync and what it would have made durable. fn must not write to the DB.
func (m *MemFS) BeforeSync(fn func()) {
	if fn == nil {
		m.beforeSync.Store(nil)
		return
	}
	m.beforeSync.Store(&fn)
}
