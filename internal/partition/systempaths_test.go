package partition

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/value"
)

// spFixture is a partition on a MemFS, so that a test can cut the power mid-rebuild.
type spFixture struct {
	t   *testing.T
	fs  *storage.MemFS
	db  *storage.DB
	p   *Partition
	pol *indexing.Policy
	ts  int64
	// mixed opens the partition as a replica, in a cluster, of a container older than the
	// system paths (Config.DistrustSystemPaths).
	mixed bool
}

const spDir = "/data"

func newSPFixture(t *testing.T, policy string) *spFixture {
	t.Helper()
	pol, err := indexing.Parse([]byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	f := &spFixture{t: t, fs: storage.NewMemFS(), pol: pol, ts: 1_700_000_000}
	f.openDB()
	return f
}

func (f *spFixture) openDB() {
	f.t.Helper()
	db, err := storage.Open(spDir, storage.Options{FS: f.fs})
	if err != nil {
		f.t.Fatal(err)
	}
	f.db = db
}

// open opens the partition under pol (the legacy form, to write as the earlier build did).
func (f *spFixture) open(pol *indexing.Policy, older bool) {
	f.t.Helper()
	p, err := Open(Config{DB: f.db, Container: 1, ID: 0, Range: epk.All, MaxLogicalBytes: 1 << 30, Index: pol,
		OlderSystemPaths: older, DistrustSystemPaths: f.mixed, Now: func() int64 { return f.ts }})
	if err != nil {
		f.t.Fatal(err)
	}
	f.p = p
}

// create writes items first..last-1, a second apart, with the terms the engine computes.
func (f *spFixture) create(first, last int) {
	f.t.Helper()
	for i := first; i < last; i++ {
		f.ts++
		item, key, err := document.Parse([]byte(fmt.Sprintf(`{"id":"i%03d","pk":"k%d","n":%d}`, i, i%3, i)), [][]string{{"pk"}})
		if err != nil {
			f.t.Fatal(err)
		}
		op := Operation{Kind: Upsert, EPK: epk.SchemeV2.Hash(key), ID: item.ID, Item: item,
			Terms: TermsOf(item.Value, f.p.Policy(), nil), TermsPolicy: f.p.Policy()}
		if _, err := f.p.Execute(op); err != nil {
			f.t.Fatal(err)
		}
	}
}

// tsFound is the ids of the items the index finds with a _ts in [lo, hi).
func (f *spFixture) tsFound(lo, hi int64) []string {
	f.t.Helper()
	l, _ := value.AppendIndexed(nil, value.Num(float64(lo)))
	h, _ := value.AppendIndexed(nil, value.Num(float64(hi)))
	var ids []string
	if err := f.p.IndexScan("/_ts", l, h, []epk.Range{epk.All}, 0, func(d Doc) bool { ids = append(ids, d.ID()); return true }); err != nil {
		f.t.Fatal(err)
	}
	sort.Strings(ids)
	return ids
}

func (f *spFixture) step(n int) (done bool) {
	f.t.Helper()
	done, _, err := f.p.ReindexStep(n, 1<<20)
	if err != nil {
		f.t.Fatal(err)
	}
	return done
}

// Items written by a build that indexed _ts never (and id only by the rules) get those entries
// from the rebuild that opening them with this build starts: a container marked older without
// a record, or a record of that build. Queries do not trust the index for them until it is
// done; the rebuild survives a power cut mid-way, going on from what its synced record kept;
// and once done the index finds every item by _ts, as this build's writes do from the start.
func TestSystemPathsOfOlderData(t *testing.T) {
	for _, c := range []struct {
		name, policy string
		record       bool // the earlier build recorded the policy (a policy change)
		older        bool // Config.OlderSystemPaths
	}{
		{"no record, older container", ``, false, true},
		{"record of the earlier build", `{"excludedPaths":[{"path":"/*"}]}`, true, false},
		{"no record, rules that exclude id", `{"includedPaths":[{"path":"/n/?"}],"excludedPaths":[{"path":"/*"}]}`, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newSPFixture(t, c.policy)
			legacy, err := f.pol.Legacy()
			if err != nil {
				t.Fatal(err)
			}
			f.open(legacy, false) // the earlier build's writes
			f.create(0, 30)
			if n := len(f.tsFound(0, 1<<40)); n != 0 {
				t.Fatalf("the earlier build's items have %d _ts entries", n)
			}
			f.p.Close()
			if c.record {
				rec, _ := json.Marshal(map[string]any{"policy": json.RawMessage(c.policy), "terms": termsFullText})
				b := f.db.NewBatch()
				if err := b.Set(storage.IndexingKey(1, 0), rec); err != nil {
					t.Fatal(err)
				}
				if err := b.Commit(); err != nil {
					t.Fatal(err)
				}
				b.Close()
			}

			f.open(f.pol, c.older)
			if f.p.IndexTrusted("/_ts") {
				t.Fatal("_ts trusted before the rebuild")
			}
			if f.p.IndexTrusted("/id") != f.pol.IndexesByRules("/id") {
				t.Fatalf("/id trusted %v before the rebuild, where the earlier build indexed it %v", f.p.IndexTrusted("/id"), f.pol.IndexesByRules("/id"))
			}
			if _, _, settled := f.p.ReindexProgress(); settled {
				t.Fatal("no rebuild in flight")
			}
			if err := f.p.CheckIndex(); err != nil {
				t.Fatal(err)
			}
			// Part of the rebuild, writes meanwhile, then a synced write makes what came
			// before it durable, and the power goes.
			for range 3 {
				f.step(4)
			}
			f.create(30, 33)
			done, _, _ := f.p.ReindexProgress()
			crashed := f.fs.Crash(0, nil)
			f.p.Close()
			f.db.Close()

			f.fs = crashed
			f.openDB()
			f.open(f.pol, c.older)
			resumed, _, settled := f.p.ReindexProgress()
			if settled || resumed != done || resumed == 0 {
				t.Fatalf("after the power cut: %d items passed, settled %v; before it %d", resumed, settled, done)
			}
			if err := f.p.CheckIndex(); err != nil {
				t.Fatal(err)
			}
			for !f.step(5) {
			}
			if !f.p.IndexTrusted("/_ts") || !f.p.IndexTrusted("/id") {
				t.Fatal("not trusted after the rebuild")
			}
			if err := f.p.CheckIndex(); err != nil {
				t.Fatal(err)
			}
			if got := f.tsFound(0, 1<<40); len(got) != 33 {
				t.Fatalf("the index finds %d items by _ts, want 33: %v", len(got), got)
			}
			// The incremental sync: items written after a moment.
			if got := f.tsFound(1_700_000_031, 1<<40); fmt.Sprint(got) != "[i030 i031 i032]" {
				t.Fatalf("_ts > t finds %v", got)
			}
			f.p.Close()
			f.open(f.pol, c.older)
			defer f.p.Close()
			if !f.p.IndexTrusted("/_ts") {
				t.Fatal("a restart does not trust the rebuilt entries")
			}
		})
	}
}

// A new container's partition (no record, not older) trusts the system paths at once; a
// replica of an older container in a cluster never does for those the earlier build left out
// (a leader of that build may have written without them), whatever its record says.
func TestSystemPathsTrust(t *testing.T) {
	f := newSPFixture(t, `{"includedPaths":[{"path":"/n/?"}],"excludedPaths":[{"path":"/*"}]}`)
	f.open(f.pol, false)
	defer f.p.Close()
	f.create(0, 5)
	if !f.p.IndexTrusted("/_ts") || !f.p.IndexTrusted("/id") || f.p.IndexTrusted("/pk") {
		t.Fatalf("trusted: _ts %v, id %v, pk %v", f.p.IndexTrusted("/_ts"), f.p.IndexTrusted("/id"), f.p.IndexTrusted("/pk"))
	}
	if got := f.tsFound(0, 1<<40); len(got) != 5 {
		t.Fatalf("the index finds %d items by _ts", len(got))
	}
	if err := f.p.CheckIndex(); err != nil {
		t.Fatal(err)
	}
	f.p.mixedSystemPaths = true
	if f.p.IndexTrusted("/_ts") || f.p.IndexTrusted("/id") || !f.p.IndexTrusted("/n") {
		t.Fatalf("mixed: trusted _ts %v, id %v, n %v", f.p.IndexTrusted("/_ts"), f.p.IndexTrusted("/id"), f.p.IndexTrusted("/n"))
	}
}

// In a cluster upgraded node by node, a leader of the earlier build may write items without
// their system paths' entries after the upgrade's rebuild passed them. Once no such node is
// left, a recheck rebuilds those entries again: the items it left out are found by _ts, and
// the index is trusted for the system paths from then on, after a restart too.
func TestSystemPathsRecheck(t *testing.T) {
	f := newSPFixture(t, `{"includedPaths":[{"path":"/n/?"}],"excludedPaths":[{"path":"/*"}]}`)
	legacy, err := f.pol.Legacy()
	if err != nil {
		t.Fatal(err)
	}
	f.open(legacy, false) // the earlier build's writes
	f.create(0, 10)
	f.p.Close()
	f.mixed = true
	f.open(f.pol, true) // this build: the upgrade's rebuild
	for !f.step(4) {
	}
	if f.p.IndexTrusted("/_ts") || !f.p.RecheckNeeded() {
		t.Fatal("a replica of an older container in a cluster trusts _ts before a recheck")
	}
	f.p.Close()

	// A leader of the earlier build writes two items, without their _ts entries: its writes
	// follow its own policy (this build's record set aside meanwhile).
	rec, err := f.db.GetCopy(nil, storage.IndexingKey(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	setRecord := func(v []byte) {
		b := f.db.NewBatch()
		defer b.Close()
		if v == nil {
			err = b.Delete(storage.IndexingKey(1, 0))
		} else {
			err = b.Set(storage.IndexingKey(1, 0), v)
		}
		if err != nil || b.Commit() != nil {
			t.Fatal("writing the indexing record", err)
		}
	}
	setRecord(nil)
	f.mixed = false
	f.open(legacy, false)
	f.create(10, 12)
	f.p.Close()
	setRecord(rec)

	f.mixed = true
	f.open(f.pol, true)
	if got := f.tsFound(0, 1<<40); len(got) != 10 {
		t.Fatalf("before the recheck the index finds %d items by _ts, want the 10 the upgrade rebuilt", len(got))
	}
	if err := f.p.RecheckSystemPaths(); err != nil {
		t.Fatal(err)
	}
	if f.p.RecheckNeeded() || f.p.IndexTrusted("/_ts") {
		t.Fatal("the recheck did not begin")
	}
	if _, _, settled := f.p.ReindexProgress(); settled {
		t.Fatal("no rebuild in flight")
	}
	if err := f.p.RecheckSystemPaths(); err != nil { // once is enough
		t.Fatal(err)
	}
	f.step(5)
	f.create(12, 13) // a write meanwhile has its entries
	for !f.step(5) {
	}
	if !f.p.IndexTrusted("/_ts") || f.p.RecheckNeeded() {
		t.Fatal("not trusted after the recheck")
	}
	if err := f.p.CheckIndex(); err != nil {
		t.Fatal(err)
	}
	if got := f.tsFound(0, 1<<40); len(got) != 13 {
		t.Fatalf("after the recheck the index finds %d items by _ts, want 13: %v", len(got), got)
	}
	f.p.Close()
	f.open(f.pol, true)
	defer f.p.Close()
	if !f.p.IndexTrusted("/_ts") || f.p.RecheckNeeded() {
		t.Fatal("a restart does not trust the rechecked entries")
	}
}
