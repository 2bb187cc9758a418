package storage

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// Sstables written from a snapshot as it iterates, each ending at about the size asked, and
// ingested together from an SSTDir, replace the span on another store exactly as one sstable
// would: the keys it held there that the sender did not hold go, the sender's arrive, and
// what lies outside the span stays.
func TestStreamedSpanSSTs(t *testing.T) {
	for _, fs := range []*MemFS{nil, NewMemFS()} {
		name := "disk"
		if fs != nil {
			name = "memfs"
		}
		t.Run(name, func(t *testing.T) {
			dir := func() string {
				if fs != nil {
					return fmt.Sprintf("/db%d", rand.Int())
				}
				return t.TempDir()
			}
			src, err := Open(dir(), Options{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			dst, err := Open(dir(), Options{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			defer dst.Close()
			span := Span{Start: []byte("k"), End: []byte("l")}
			rng := rand.New(rand.NewPCG(1, 2))
			value := make([]byte, 500)
			b := src.NewBatch()
			for i := range 20_000 {
				for j := range value {
					value[j] = byte(rng.Uint32())
				}
				if err := b.Set(fmt.Appendf(nil, "k%06d", i), value); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			b.Close()
			// What the receiver holds before: keys inside the span that must go, and keys
			// outside it that must stay.
			b = dst.NewBatch()
			for _, k := range []string{"j1", "k", "k000001x", "k5", "kz", "l", "m"} {
				if err := b.Set([]byte(k), []byte("old")); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			b.Close()

			const maxBytes = 1 << 20
			snap := src.NewSnapshot()
			defer snap.Close()
			in, err := dst.NewSSTDir()
			if err != nil {
				t.Fatal(err)
			}
			var (
				cur      io.WriteCloser
				sizes    []int
				maxWrite int
			)
			err = snap.WriteSpanSSTs(src, span, maxBytes, func() (io.Writer, error) {
				if cur != nil {
					if err := cur.Close(); err != nil {
						return nil, err
					}
				}
				var err error
				cur, err = in.Create()
				sizes = append(sizes, 0)
				return writerFunc(func(p []byte) (int, error) {
					sizes[len(sizes)-1] += len(p)
					maxWrite = max(maxWrite, len(p))
					return cur.Write(p)
				}), err
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := cur.Close(); err != nil {
				t.Fatal(err)
			}
			if len(sizes) < 5 {
				t.Fatalf("10 MB written as %d sstables of at most 1 MB", len(sizes))
			}
			for i, n := range sizes {
				if n > maxBytes+maxBytes/4 {
					t.Fatalf("sstable %d is %d bytes, more than about %d", i, n, maxBytes)
				}
			}
			// The writer hands over a block at a time, not a whole sstable.
			if maxWrite > 256<<10 {
				t.Fatalf("a write of %d bytes", maxWrite)
			}
			if err := in.Ingest(nil); err != nil {
				t.Fatal(err)
			}
			if err := in.Remove(); err != nil {
				t.Fatal(err)
			}
			if dirs, err := dst.SSTDirs(); err != nil || len(dirs) != 0 {
				t.Fatalf("SSTDirs left: %v, %v", dirs, err)
			}
			if got, want := dump(t, dst, []byte("a"), []byte("n")), "j1=old "+dump(t, src, span.Start, span.End)+"l=old m=old "; got != want {
				i := 0
				for i < min(len(got), len(want)) && got[i] == want[i] {
					i++
				}
				t.Fatalf("after the ingestion the store holds %d bytes of listing, want %d; first difference at %q, want %q",
					len(got), len(want), got[max(0, i-40):min(len(got), i+80)], want[max(0, i-40):min(len(want), i+80)])
			}
		})
	}
}

// An SSTDir left by a process that stopped goes at RemoveSSTDirs.
func TestRemoveSSTDirs(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if dirs, err := db.SSTDirs(); err != nil || len(dirs) != 0 {
		t.Fatalf("a new store's SSTDirs: %v, %v", dirs, err)
	}
	d, err := db.NewSSTDir()
	if err != nil {
		t.Fatal(err)
	}
	f, err := d.Create()
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half an sstable"))
	f.Close()
	if dirs, _ := db.SSTDirs(); len(dirs) != 1 {
		t.Fatalf("SSTDirs: %v", dirs)
	}
	if err := db.RemoveSSTDirs(); err != nil {
		t.Fatal(err)
	}
	if dirs, err := db.SSTDirs(); err != nil || len(dirs) != 0 {
		t.Fatalf("after RemoveSSTDirs: %v, %v", dirs, err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// dump is every key and a hash of its value in [lo, hi).
func dump(t *testing.T, db *DB, lo, hi []byte) string {
	t.Helper()
	it, err := db.NewIter(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out bytes.Buffer
	for it.First(); it.Valid(); it.Next() {
		v := it.Value()
		if len(v) > 8 {
			v = v[:8]
		}
		fmt.Fprintf(&out, "%s=%s ", it.Key(), v)
	}
	return out.String()
}
