package vectorindex

// Recall is the share of truth (the exact top k) that found holds: the measure of an
// approximate search that the tests, the benchmarks and the docs report. It is 1 for an empty
// truth.
func Recall[T comparable](found, truth []T) float64 {
	if len(truth) == 0 {
		return 1
	}
	want := make(map[T]bool, len(truth))
	for _, id := range truth {
		want[id] = true
	}
	hit := 0
	for _, id := range found {
		if want[id] {
			hit++
			delete(want, id) // a repeated id counts once
		}
	}
	return float64(hit) / float64(len(truth))
}
