package partition

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fulltext"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/searchpolicy"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/value"
)

// ftFixture is a partition with a full-text index on /text (English) and the items it should
// hold, to compare what the index says with what the items say.
type ftFixture struct {
	t     *testing.T
	db    *storage.DB
	p     *Partition
	ft    *searchpolicy.FullTextPolicy
	pol   *indexing.Policy
	items map[string]string // id -> text ("" for an item without text)
}

const ftPolicyJSON = `{"fullTextIndexes":[{"path":"/text"}]}`

var ftPath = indexing.FullTextTermPath("/text")

func newFTFixture(t *testing.T) *ftFixture {
	t.Helper()
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ft, err := searchpolicy.ParseFullText([]byte(`{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/text","language":"en-US"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := indexing.Parse([]byte(ftPolicyJSON))
	if err != nil {
		t.Fatal(err)
	}
	return &ftFixture{t: t, db: db, ft: ft, pol: pol, items: map[string]string{}}
}

// open opens the partition with cfg's full-text settings.
func (f *ftFixture) open(ft *searchpolicy.FullTextPolicy, older bool) {
	f.t.Helper()
	p, err := Open(Config{DB: f.db, Container: 1, ID: 0, Range: epk.All, MaxLogicalBytes: 1 << 30, Index: f.pol,
		FullText: ft, OlderFullText: older, OlderSystemPaths: older})
	if err != nil {
		f.t.Fatal(err)
	}
	f.p = p
}

// write applies one operation, the writer computing the terms; text "" writes no text.
func (f *ftFixture) write(kind OpKind, id, text string) {
	f.t.Helper()
	body := fmt.Sprintf(`{"id":%q,"pk":"k"}`, id)
	if text != "" {
		body = fmt.Sprintf(`{"id":%q,"pk":"k","text":%q}`, id, text)
	}
	item, key, err := document.Parse([]byte(body), [][]string{{"pk"}})
	if err != nil {
		f.t.Fatal(err)
	}
	op := Operation{Kind: kind, EPK: epk.SchemeV2.Hash(key), ID: id, Item: item}
	switch kind {
	case Delete:
		op.Item = nil
		delete(f.items, id)
	case Mutate:
		// a patch: the new text replaces the old, with the terms the engine computes
		op.Item = nil
		op.Mutate = func([]byte) (*document.Item, epk.EPK, [][]byte, error) {
			return item, op.EPK, TermsOf(item.Value, f.p.Policy(), f.ft), nil
		}
		f.items[id] = text
	default:
		f.items[id] = text
	}
	if _, err := f.p.Execute(op); err != nil {
		f.t.Fatal(err)
	}
}

// check compares the index with the items: the statistics, and the items each token finds.
func (f *ftFixture) check(trusted bool) {
	f.t.Helper()
	if err := f.p.CheckIndex(); err != nil {
		f.t.Fatal(err)
	}
	tokens := []string{"cat", "dog", "run", "absent"}
	st, ok, err := f.p.FullTextStats(ftPath, tokens, epk.All)
	if err != nil || ok != trusted {
		f.t.Fatalf("FullTextStats: ok %v, err %v; want ok %v", ok, err, trusted)
	}
	if !ok {
		return
	}
	want := FullTextStats{Items: int64(len(f.items)), Freq: make([]int64, len(tokens))}
	holders := make([][]string, len(tokens))
	for id, text := range f.items {
		terms := fulltext.Analyze("en-US", text)
		want.Tokens += int64(len(terms))
		for i, tok := range tokens {
			if slices.Contains(terms, tok) {
				want.Freq[i]++
				holders[i] = append(holders[i], id)
			}
		}
	}
	if st.Items != want.Items || st.Tokens != want.Tokens || !slices.Equal(st.Freq, want.Freq) {
		f.t.Fatalf("FullTextStats = %+v, want %+v", st, want)
	}
	for i, tok := range tokens {
		var got []string
		err := f.p.IndexScanValues(ftPath, [][]byte{indexing.FullTextToken(tok)}, []epk.Range{epk.All}, 0, func(d Doc) bool {
			v, _ := value.Parse(d.JSON)
			got = append(got, v.Get("id").Str())
			return true
		})
		if err != nil {
			f.t.Fatal(err)
		}
		slices.Sort(got)
		slices.Sort(holders[i])
		if !slices.Equal(got, holders[i]) {
			f.t.Fatalf("items holding %q: %v, want %v", tok, got, holders[i])
		}
	}
}

// Every kind of write keeps the full-text entries of its item: a create adds them, a replace
// or a patch changes them, a delete removes them; the statistics and the items found by
// token follow.
func TestFullTextTermsFollowWrites(t *testing.T) {
	f := newFTFixture(t)
	f.open(f.ft, false)
	defer f.p.Close()
	f.write(Create, "a", "The cat runs")
	f.write(Create, "b", "Dogs running after cats, cats")
	f.write(Create, "c", "")
	f.check(true)
	f.write(Replace, "a", "a dog")
	f.write(Upsert, "d", "running running")
	f.check(true)
	f.write(Mutate, "b", "nothing here")
	f.write(Delete, "d", "")
	f.check(true)
	// Both kinds of entry are under the path's full-text term path, none under /text.
	var either [][]byte
	err := f.p.IndexScan(ftPath, []byte{0}, []byte{0xFF}, []epk.Range{epk.All}, 0, func(Doc) bool { either = append(either, nil); return true })
	if err != nil || len(either) != 3 {
		t.Fatalf("items with full-text entries: %d, %v; want 3", len(either), err)
	}
}

// A policy change that adds a full-text index rebuilds its entries online: until the rebuild
// is done the statistics are refused (queries read the items), after it they match the
// items, and writes during it are kept.
func TestFullTextIndexAddedByPolicyChange(t *testing.T) {
	f := newFTFixture(t)
	plain, _ := indexing.Parse(nil)
	full := f.pol
	f.pol = plain
	f.open(f.ft, false)
	defer f.p.Close()
	for i := range 40 {
		f.write(Create, fmt.Sprintf("i%d", i), []string{"cat", "dog runs", "", "cats and dogs"}[i%4])
	}
	if err := f.p.ChangePolicy(full); err != nil {
		t.Fatal(err)
	}
	f.pol = full
	f.check(false)
	for step := 0; ; step++ {
		done, _, err := f.p.ReindexStep(7, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		f.write(Upsert, fmt.Sprintf("i%d", step), "a running cat")
		f.write(Create, fmt.Sprintf("n%d", step), "dog")
		if done {
			break
		}
		f.check(false)
	}
	f.check(true)
}

// Data written by a build without full-text terms has a policy with a full-text index but no
// entries for it: a record without Terms, or no record in a container marked older, makes the
// partition rebuild them before it trusts them; a new container's partition without a record
// trusts them at once.
func TestFullTextTermsOfOlderData(t *testing.T) {
	for _, c := range []struct {
		name   string
		record bool // the older build recorded the policy (a policy change)
		older  bool // Config.OlderFullText
		trust  bool // trusted at once
	}{
		{"record without terms", true, false, false},
		{"no record, older container", false, true, false},
		{"no record, new container", false, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFTFixture(t)
			// Without the full-text policy, the writer computes no full-text terms, and under
			// the legacy form of the policy none for _ts, as the older build did; a new
			// container's items have them from the start.
			if c.trust {
				f.open(f.ft, false)
			} else {
				pol := f.pol
				f.pol, _ = pol.Legacy()
				f.open(nil, false)
				f.pol = pol
			}
			f.write(Create, "a", "cat")
			f.write(Create, "b", "dog")
			f.p.Close()
			if c.record {
				rec, _ := json.Marshal(map[string]any{"policy": json.RawMessage(ftPolicyJSON)})
				b := f.db.NewBatch()
				if err := b.Set(storage.IndexingKey(1, 0), rec); err != nil {
					t.Fatal(err)
				}
				if err := b.Commit(); err != nil {
					t.Fatal(err)
				}
				b.Close()
			}
			f.open(f.ft, c.older)
			defer f.p.Close()
			if got := f.p.IndexTrusted(ftPath); got != c.trust {
				t.Fatalf("trusted at open: %v, want %v", got, c.trust)
			}
			f.check(c.trust)
			for {
				done, _, err := f.p.ReindexStep(1, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				if done {
					break
				}
			}
			f.check(true)
			// The record now says the entries are there: a restart trusts them.
			f.p.Close()
			f.open(f.ft, c.older)
			f.check(true)
		})
	}
}
