package partition

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/storage"
)

// A rebuild stepped while writers replace, create and delete items leaves every item's entries
// following the new policy, and at every point they follow one of the policies in flight.
// Pre-reads computed under the old policy, and operations whose Terms were computed under it,
// must not leak old entries.
func TestReindexWithConcurrentWrites(t *testing.T) {
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	oldJSON := json.RawMessage(`{"includedPaths":[{"path":"/a/?"}],"excludedPaths":[{"path":"/*"}]}`)
	newJSON := json.RawMessage(`{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/a/?"}]}`)
	oldPol, _ := indexing.Parse(oldJSON)
	newPol, _ := indexing.Parse(newJSON)
	p, err := Open(Config{DB: db, Container: 1, ID: 0, Range: epk.All, MaxLogicalBytes: 1 << 30, Index: oldPol})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	write := func(kind OpKind, i, v int, pol *indexing.Policy) {
		item, key, err := document.Parse([]byte(fmt.Sprintf(`{"id":"i%d","pk":"p%d","a":%d,"b":"x%d"}`, i, i%7, v, v)), [][]string{{"pk"}})
		if err != nil {
			t.Error(err)
			return
		}
		op := Operation{Kind: kind, EPK: epk.SchemeV2.Hash(key), ID: item.ID, Item: item}
		if pol != nil { // otherwise the writer computes them
			op.Terms, op.TermsPolicy = TermsOf(item.Value, pol, nil), pol
		}
		if kind == Delete {
			op.Item, op.Terms = nil, nil
		}
		if _, err := p.Execute(op); err != nil {
			t.Error(err)
		}
	}
	for i := range 300 {
		write(Create, i, i, oldPol)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < 300; i += 4 {
				switch i % 3 {
				case 0:
					write(Upsert, i, i+1000, oldPol) // terms of the old policy: the writer redoes them
				case 1:
					write(Upsert, i, i+2000, nil)
				default:
					write(Delete, i, 0, nil)
				}
				write(Create, 1000+i, i, nil)
			}
		}()
	}
	if err := p.ChangePolicy(newPol); err != nil {
		t.Fatal(err)
	}
	for {
		done, _, err := p.ReindexStep(50, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.CheckIndex(); err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
	}
	wg.Wait()
	if err := p.CheckIndex(); err != nil {
		t.Fatal(err)
	}
	if !p.IndexTrusted("/b") || p.IndexTrusted("/a") {
		t.Fatalf("after the rebuild: /b trusted %v, /a trusted %v", p.IndexTrusted("/b"), p.IndexTrusted("/a"))
	}
	v, err := db.GetCopy(nil, storage.IndexingKey(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if st, terms, err := decodeIndexState(v, 0); err != nil || terms != termsSystemPaths || !st.settled() || !st.pol.Equal(newPol) {
		t.Fatalf("the record after the rebuild: %s, %v", v, err)
	}
}
