package fulltext

import "math"

// BM25's two constants, at the values most engines use: k1 bounds how much repeating a term
// raises a score, b how much a long document is discounted.
const (
	k1 = 1.2
	b  = 0.75
)

// Corpus are the statistics a score needs, over every document a query reads.
type Corpus struct {
	Docs  int            // documents, those without the text included
	Terms int            // terms of the text in all documents together
	Freq  map[string]int // documents in which each query term appears
}

// Score is the BM25 score of a document whose text has length terms in all, in which each
// query term appears tf[term] times. Each query term counts once, however often the query
// names it.
func (c Corpus) Score(queryTerms []string, tf map[string]int, length int) float64 {
	if c.Docs == 0 {
		return 0
	}
	avg := float64(c.Terms) / float64(c.Docs)
	score := 0.0
	seen := map[string]bool{}
	for _, t := range queryTerms {
		if seen[t] {
			continue
		}
		seen[t] = true
		f := float64(tf[t])
		if f == 0 {
			continue
		}
		n := float64(c.Freq[t])
		idf := math.Log(1 + (float64(c.Docs)-n+0.5)/(n+0.5))
		norm := 1.0
		if avg > 0 {
			norm = 1 - b + b*float64(length)/avg
		}
		score += idf * f * (k1 + 1) / (f + k1*norm)
	}
	return score
}
