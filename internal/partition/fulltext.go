package partition

import (
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/storage"
)

// FullTextStats are what BM25 needs of a partition's text at a path (see fulltext.Corpus),
// read from the full-text entries of its range index (indexing.FullTextTermPath) rather than
// from its items.
type FullTextStats struct {
	Items  int64   // the items a query reads: every indexed item, with text at the path or not
	Tokens int64   // the tokens of their text at the path, in all
	Freq   []int64 // for each token asked for, the items whose text holds it
}

// FullTextStats reads the statistics of the text whose full-text entries are at path (an
// indexing.FullTextTermPath) for the analyzed tokens, over the items whose EPK is in r. ok is
// false, and nothing is read, when the entries cannot stand for the items a query reads: the
// index is not trusted for path (IndexTrusted), r does not cover the partition, or items may
// expire (the entries of an expired item remain until it is deleted, while reads skip it).
func (p *Partition) FullTextStats(path string, tokens []string, r epk.Range) (FullTextStats, bool, error) {
	return p.fullTextStats(Consistency{}, path, tokens, r)
}

func (p *Partition) fullTextStats(cons Consistency, path string, tokens []string, r epk.Range) (FullTextStats, bool, error) {
	var st FullTextStats
	if r.Min > p.rng.Min || r.Max < p.rng.Max || p.Hides() || !p.IndexTrusted(path) {
		return st, false, nil
	}
	if err := p.await(cons); err != nil {
		return st, false, err
	}
	snap, err := p.snapshot()
	if err != nil {
		return st, false, err
	}
	defer snap.Close()
	prefix := storage.IndexPathPrefix(path)
	// each calls fn with the encoded value of every entry of [lo, hi).
	each := func(lo, hi []byte, fn func(v []byte) error) error {
		it, err := snap.NewIter(p.indexBound(prefix, lo), p.indexBound(prefix, hi))
		if err != nil {
			return err
		}
		defer it.Close()
		for it.First(); it.Valid(); it.Next() {
			v, _, err := storage.ParseIndexEntry(it.Key(), len(prefix))
			if err != nil {
				return err
			}
			if err := fn(v); err != nil {
				return err
			}
		}
		return it.Error()
	}
	lo, hi := indexing.FullTextLengths()
	err = each(lo, hi, func(v []byte) error {
		n, ok := indexing.ParseFullTextLength(v)
		if !ok {
			return fault.New(fault.Internal, "partition %d: a full-text length entry at %q holds %x", p.id, path, v)
		}
		st.Items++
		st.Tokens += int64(n)
		return nil
	})
	if err != nil {
		return st, false, err
	}
	st.Freq = make([]int64, len(tokens))
	for i, tok := range tokens {
		v := indexing.FullTextToken(tok)
		// An escaped token ends its own encoding: every entry of the span is the token's.
		err := each(v, append(v[:len(v):len(v)], 0xFF), func([]byte) error {
			st.Freq[i]++
			return nil
		})
		if err != nil {
			return st, false, err
		}
	}
	return st, true, nil
}
