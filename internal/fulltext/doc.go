// Package fulltext turns text into search terms and scores documents by them, for Cosmos DB's
// full-text functions (FullTextContains, FullTextContainsAll, FullTextContainsAny and
// FullTextScore).
//
// Analysis (analyze.go) is the same for stored text and for the terms a query names, so the
// two meet: the text is split into words at every character that is neither a letter nor a
// digit, lowered, stripped of the language's stop words (English only), and stemmed by the
// language's Snowball stemmer (github.com/blevesearch/snowballstem). "Running shoes" and
// "run shoe" give the same terms.
//
//	terms := fulltext.Analyze("en-US", "The runners are running") // ["runner", "run"]
//
// Scoring (bm25.go) is Okapi BM25 over corpus statistics the caller gathers: how many
// documents there are, how many terms they hold in all, and in how many documents each
// query term appears. The caller gathers them over everything the query reads (all of a
// container's partitions for a cross-partition query), so scores do not depend on how the
// container is partitioned.
//
// It must never know about storage, queries or the wire.
package fulltext
