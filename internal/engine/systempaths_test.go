package engine

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/value"
)

// fixture3Files are the fixture's files, by their path in the data directory.
func fixture3Files(t *testing.T) map[string][]byte {
	t.Helper()
	f, err := os.Open("testdata/format3/data.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Clean(h.Name)] = b
	}
}

// loadFixture3 copies the data directory an earlier build wrote (testdata/format3) into a
// MemFS under /data.
func loadFixture3(t *testing.T) *storage.MemFS {
	t.Helper()
	mem := storage.NewMemFS()
	for name, b := range fixture3Files(t) {
		if err := mem.WriteFile(filepath.Join("/data", name), b); err != nil {
			t.Fatal(err)
		}
	}
	return mem
}

// tsQuery runs SELECT VALUE c.id ... WHERE c._ts > t over c to its end, with or without the
// index: the ids found, sorted, and the items it loaded.
func tsQuery(t *testing.T, c *Container, ts int64, noIndex bool) (ids []string, loaded int, use query.IndexUse) {
	t.Helper()
	p, err := query.Prepare("SELECT VALUE c.id FROM c WHERE c._ts > @t")
	if err != nil {
		t.Fatal(err)
	}
	opts := query.Options{Params: map[string]value.Value{"@t": value.Num(float64(ts))}, NoIndex: noIndex, MaxItems: 1000}
	for {
		res, err := c.Query(p, epk.All, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range res.Results {
			ids = append(ids, v.Str())
		}
		loaded += res.Stats.ItemsLoaded
		if res.Stats.Index.Filter != "" {
			use = res.Stats.Index
		}
		if res.Next == "" {
			break
		}
		opts.Continuation = res.Next
	}
	slices.Sort(ids)
	return ids, loaded, use
}

// The data directory of an earlier build, which indexed _ts never, opens in this build (its
// layout upgraded in place) with the entries of id and _ts to rebuild in every document
// container: a filter on _ts reads every item until the rebuild is done, and finds the same
// items as a scan all along. The rebuild, cut by a power loss half-way, goes on at the next
// start from what it had made durable; done, the filter reads the index (fewer items loaded)
// and the index metrics name it.
func TestSystemPathsOfAnEarlierBuild(t *testing.T) {
	mem := loadFixture3(t)
	// After the fixture's last write (00:14), before any of its items expires (README).
	clock := func() time.Time { return time.Date(2026, 6, 1, 0, 20, 0, 0, time.UTC) }
	opts := Options{FS: mem, ChangeFeedRetention: 24 * time.Hour, ManualReindex: true, Now: clock}
	e := openEngine(t, "/data", opts)
	c, err := e.Container("app", "orders")
	if err != nil {
		t.Fatal(err)
	}
	if !c.reindexPending() || c.indexProgress() != 0 {
		t.Fatalf("no rebuild pending for an earlier build's container: progress %d", c.indexProgress())
	}
	all, scanned, _ := tsQuery(t, c, 0, true)
	if len(all) < 300 {
		t.Fatalf("the fixture's orders: %d items", len(all))
	}
	// The items written in the last 40 seconds of the fixture's clock.
	var newest int64
	p, _ := query.Prepare("SELECT VALUE MAX(c._ts) FROM c")
	if res, err := c.Query(p, epk.All, query.Options{}); err != nil || len(res.Results) != 1 {
		t.Fatalf("max _ts: %v %v", res.Results, err)
	} else {
		newest = int64(res.Results[0].Num())
	}
	since := newest - 40
	want, _, _ := tsQuery(t, c, since, true)
	if len(want) == 0 || len(want) > 60 {
		t.Fatalf("%d items after %d", len(want), since)
	}
	// indexed: whether the index was read (fewer items loaded); mid-rebuild the partitions
	// whose rebuild is done read theirs, the others scan (-1: either).
	check := func(what string, indexed int) {
		t.Helper()
		got, loaded, use := tsQuery(t, c, since, false)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: _ts > t finds %d items, the scan %d", what, len(got), len(want))
		}
		if use.Filter != "/_ts" {
			t.Fatalf("%s: the filter's index %q", what, use.Filter)
		}
		if indexed >= 0 && (indexed == 1) != (loaded < scanned) {
			t.Fatalf("%s: %d items loaded of %d (index read: want %v)", what, loaded, scanned, indexed == 1)
		}
	}
	check("before the rebuild", 0)
	for range 2 {
		if _, _, _, err := e.reindexStep(c, 40, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	check("mid-rebuild", -1)
	// A synced write makes the steps before it durable; then the power goes.
	if _, err := c.UpsertItem([]byte(`{"id":"after-steps","customer":"c-01"}`), ItemOptions{}); err != nil {
		t.Fatal(err)
	}
	progress := c.indexProgress()
	if progress == 0 || progress == 100 {
		t.Fatalf("progress %d after two steps", progress)
	}
	survived := mem.Crash(0, nil)
	e.Close()

	opts.FS, opts.ManualReindex = survived, false // the rebuild resumes at the start, by itself
	e = openEngine(t, "/data", opts)
	defer e.Close()
	c, err = e.Container("app", "orders")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, "after-steps")
	slices.Sort(want)
	deadline := time.Now().Add(30 * time.Second)
	for {
		pending := ""
		for _, id := range []string{"orders", "events", "legacy", "ttl", "unique", "reindexing"} {
			if ct, err := e.Container("app", id); err != nil {
				t.Fatal(err)
			} else if ct.indexProgress() != 100 {
				pending = fmt.Sprintf("%s at %d%%", id, ct.indexProgress())
			}
		}
		if pending == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rebuild did not finish: %s", pending)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, p := range c.routes.Load().parts {
		if err := p.CheckIndex(); err != nil {
			t.Fatal(err)
		}
	}
	check("after the rebuild", 1)
	pq, _ := query.Prepare("SELECT VALUE c.id FROM c WHERE c._ts > @t")
	_, _, use := tsQuery(t, c, since, false)
	if m := c.IndexMetrics(pq, use); !slices.Contains(m.UtilizedSingle, "/_ts/?") || slices.Contains(m.PotentialSingle, "/_ts/?") {
		t.Fatalf("index metrics: %+v", m)
	}
}
