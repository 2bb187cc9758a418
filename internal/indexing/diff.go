package indexing

// While an index is rebuilt towards a new policy, each item's entries follow either the new
// policy or one of the policies before it. The values at a path are then all in the index only
// when every one of those policies records that path: IndexedByAll is the test a query makes
// before it trusts the index for a path.

// IndexedByAll reports whether every policy of pols indexes path (true when pols is empty).
func IndexedByAll(path string, pols ...*Policy) bool {
	for _, p := range pols {
		if !p.Indexes(path) {
			return false
		}
	}
	return true
}

// ContainsEqual reports whether pols holds a policy that indexes the same paths as p.
func ContainsEqual(pols []*Policy, p *Policy) bool {
	for _, q := range pols {
		if q.Equal(p) {
			return true
		}
	}
	return false
}
