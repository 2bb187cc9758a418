// Package indexing is a container's indexing policy: which paths of an item its range index
// records. Cosmos users choose it to make writes cheaper (fewer index entries) at the price of
// scans for filters on the paths left out.
//
//	pol, err := indexing.Parse(rawPolicy) // nil or empty: Cosmos's default, every path
//	if pol.Indexes("/address/city") { ... }
//
// Paths are written as Cosmos writes them ("/*", "/a/?", "/a/b/*", "/tags/[]/?",
// "/\"quoted name\"/?") and are matched against the index's term paths (value.Terms). Of the
// included and excluded paths that match, the most precise decides: the one with more
// segments, and at equal length "/?" (the value at that path) over "/*" (the subtree); an
// excluded path wins a tie. A path no rule matches is indexed. The system paths /id and /_ts
// are indexed whatever the rules say, as on the service (systempaths.go).
//
// Composite indexes (composite.go) decide which ORDER BY over several expressions a query may
// use, as in Cosmos; spatial indexes (spatial.go) are validated and kept. With automatic
// false (Manual), writes index an item only when they carry the Include directive.
//
// It must never know about storage, partitions or the wire: it only answers which paths are
// indexed.
package indexing
