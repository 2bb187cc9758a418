package indexing

import "testing"

func TestIndexedByAll(t *testing.T) {
	all, _ := Parse(nil)
	onlyN, _ := Parse([]byte(`{"includedPaths":[{"path":"/n/?"}],"excludedPaths":[{"path":"/*"}]}`))
	none, _ := Parse([]byte(`{"indexingMode":"none","automatic":false,"includedPaths":[],"excludedPaths":[]}`))
	for _, c := range []struct {
		path string
		pols []*Policy
		want bool
	}{
		{"/n", nil, true},
		{"/n", []*Policy{all, onlyN}, true},
		{"/m", []*Policy{all, onlyN}, false},
		{"/n", []*Policy{all, none}, false},
		{"/m", []*Policy{all, all}, true},
	} {
		if got := IndexedByAll(c.path, c.pols...); got != c.want {
			t.Errorf("IndexedByAll(%q, %d policies) = %v, want %v", c.path, len(c.pols), got, c.want)
		}
	}
	if !ContainsEqual([]*Policy{onlyN, all}, &Policy{}) || ContainsEqual([]*Policy{onlyN}, none) {
		t.Error("ContainsEqual")
	}
}
