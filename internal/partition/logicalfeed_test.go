package partition

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/storage"
)

// A logical partition's latest-version feed read from its items returns, page by page, what
// the same read of the log returns: the same changes, in the same order, through the same LSNs.
func TestLatestFeedByItemsMatchesLog(t *testing.T) {
	p := openWhole(t)
	rng := rand.New(rand.NewPCG(7, 7))
	const keys, ids = 4, 30
	live := map[string]bool{}
	ranges := make([]epk.Range, keys)
	for k := range keys {
		_, key, err := document.Parse(fmt.Appendf(nil, `{"id":"x","pk":"k%d"}`, k), [][]string{{"pk"}})
		if err != nil {
			t.Fatal(err)
		}
		e := epk.SchemeV2.Hash(key)
		ranges[k] = epk.Range{Min: e, Max: e + "\x00"}
	}
	for n := range 600 {
		id := fmt.Sprint(rng.IntN(ids))
		k := fmt.Sprint("k", rng.IntN(keys))
		item, key, err := document.Parse(fmt.Appendf(nil, `{"id":%q,"pk":%q,"n":%d}`, id, k, n), [][]string{{"pk"}})
		if err != nil {
			t.Fatal(err)
		}
		kind := Upsert
		if live[k+"/"+id] && rng.IntN(4) == 0 {
			kind = Delete
		}
		live[k+"/"+id] = kind != Delete
		if _, err := p.Execute(Operation{Kind: kind, EPK: epk.SchemeV2.Hash(key), ID: id, Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(r epk.Range, after uint64, max int) (string, uint64) {
		out := ""
		got := 0
		through, err := p.ReadLog(LogRead{Range: r, After: after}, func(c *LogChange) bool {
			out += fmt.Sprintf("%d %s %s %d %d %s\n", c.LSN, c.Op, c.ID, c.TS, c.PrevLSN, c.JSON)
			got++
			return got < max
		})
		if err != nil {
			t.Fatal(err)
		}
		return out, through
	}
	defer func(v uint64) { logicalFeedMax = v }(logicalFeedMax)
	for _, r := range append(ranges, epk.All) {
		for _, after := range []uint64{0, 100, 450, 599, 600} {
			for _, max := range []int{1, 7, 1000} {
				logicalFeedMax = 10_000
				byItems, t1 := read(r, after, max)
				logicalFeedMax = 0
				byLog, t2 := read(r, after, max)
				if byItems != byLog || t1 != t2 {
					t.Fatalf("range %v after %d, pages of %d: from the items, through %d:\n%s\nfrom the log, through %d:\n%s",
						r, after, max, t1, byItems, t2, byLog)
				}
			}
		}
	}
}

// One logical partition's latest-version feed, read from the start, in a partition whose log
// holds the changes of 2,000 logical partitions: from its items, and from the log.
func BenchmarkLogicalFeed(b *testing.B) {
	db, err := storage.Open(b.TempDir(), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	p, err := Open(Config{DB: db, Container: 1, ID: 0, Range: epk.All, MaxLogicalBytes: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	const lps, perLP = 2000, 10
	var one epk.Range
	for n := range lps * perLP {
		item, key, err := document.Parse(fmt.Appendf(nil, `{"id":"%d","pk":"k%d","pad":"0123456789012345678901234567890123456789"}`, n, n%lps), [][]string{{"pk"}})
		if err != nil {
			b.Fatal(err)
		}
		e := epk.SchemeV2.Hash(key)
		if n == 0 {
			one = epk.Range{Min: e, Max: e + "\x00"}
		}
		if _, err := p.Execute(Operation{Kind: Create, EPK: e, ID: fmt.Sprint(n), Item: item}); err != nil {
			b.Fatal(err)
		}
	}
	defer func(v uint64) { logicalFeedMax = v }(logicalFeedMax)
	for _, path := range []struct {
		name string
		max  uint64
	}{{"items", 10_000}, {"log", 0}} {
		b.Run(path.name, func(b *testing.B) {
			logicalFeedMax = path.max
			for b.Loop() {
				n := 0
				if _, err := p.ReadLog(LogRead{Range: one}, func(*LogChange) bool { n++; return true }); err != nil || n != perLP {
					b.Fatalf("%d changes, %v", n, err)
				}
			}
		})
	}
}
