// Package advisor ranks partition keys for a container from a sample of its items, and
// proposes synthetic keys when no property is good enough.
//
// It is pure: no HTTP, no storage, no clock. Everything it knows comes in an Input (a sample
// of items as JSON, optionally the request units recently charged to each logical partition
// of the current key, recorded query texts with counts, the current key definition, the
// number of physical partitions and the size of the whole container), and the same Input
// always gives the same Advice: the one random choice (the random-suffix prediction) comes
// from a generator seeded with a constant.
//
// Candidates are every scalar path found in the sample (nested ones too, bounded by depth and
// count) and hierarchical (MultiHash) combinations of the best of them. Each is scored by one
// formula (see score.go and docs/advisor.md):
//
//	score = 100 × cardinality × storage × request × fan-out × presence × cap
//
// each factor in [0, 1] and explained by a sentence in the candidate's reasons.
//
// Predicted spreads hash each item's would-be key with internal/epk exactly as the engine
// does (version 2 hash, or MultiHash) and count items per physical partition over P equal
// EPK ranges (epk.InitialRanges), which is how a new container with P partitions is laid out.
package advisor
