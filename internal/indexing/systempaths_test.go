package indexing

import (
	"strings"
	"testing"
)

// id and _ts are indexed whatever the rules say, unless nothing is (indexingMode none); the
// legacy form of a policy indexes them as builds before did: _ts never, id by the rules.
func TestSystemPaths(t *testing.T) {
	for _, tc := range []struct {
		policy          string
		id, ts          bool // this build
		legacyID, oldTS bool // the legacy form
	}{
		{``, true, true, true, false},
		{`{"excludedPaths":[{"path":"/*"}]}`, true, true, false, false},
		{`{"includedPaths":[{"path":"/a/?"}],"excludedPaths":[{"path":"/*"}]}`, true, true, false, false},
		{`{"excludedPaths":[{"path":"/id/?"},{"path":"/_ts/?"}]}`, true, true, false, false},
		{`{"automatic":false}`, true, true, true, false},
		{`{"indexingMode":"none"}`, false, false, false, false},
	} {
		p, err := Parse([]byte(tc.policy))
		if err != nil {
			t.Fatal(err)
		}
		if p.Indexes("/id") != tc.id || p.Indexes("/_ts") != tc.ts {
			t.Errorf("%s: id %v, _ts %v", tc.policy, p.Indexes("/id"), p.Indexes("/_ts"))
		}
		if p.IndexesNothing() != p.ModeNone() {
			t.Errorf("%s: IndexesNothing %v", tc.policy, p.IndexesNothing())
		}
		l, err := p.Legacy()
		if err != nil {
			t.Fatal(err)
		}
		if !l.IsLegacy() || l.Indexes("/id") != tc.legacyID || l.Indexes("/_ts") != tc.oldTS {
			t.Errorf("%s legacy: %v, id %v, _ts %v", tc.policy, l.IsLegacy(), l.Indexes("/id"), l.Indexes("/_ts"))
		}
		if l.Equal(p) != p.ModeNone() {
			t.Errorf("%s: the legacy form equal to this build's: %v", tc.policy, l.Equal(p))
		}
		// The legacy form survives its record, and only its record.
		back, err := ParseRecord(l.JSON())
		if err != nil || !back.IsLegacy() || !back.Equal(l) {
			t.Errorf("%s: legacy JSON %s reads back as %v, %v", tc.policy, l.JSON(), back.IsLegacy(), err)
		}
		asClient, err := Parse(l.JSON())
		if err != nil || asClient.IsLegacy() || !asClient.Equal(p) {
			t.Errorf("%s: a client's policy with the legacy member is legacy", tc.policy)
		}
		if again, _ := l.Legacy(); again != l {
			t.Errorf("%s: Legacy of a legacy policy is another", tc.policy)
		}
	}
	// Rules on id change nothing now; under the legacy form they do.
	a, _ := Parse([]byte(`{"excludedPaths":[{"path":"/id/?"}]}`))
	b, _ := Parse(nil)
	if !a.Equal(b) {
		t.Error("a rule on /id makes a policy differ")
	}
	la, _ := a.Legacy()
	lb, _ := b.Legacy()
	if la.Equal(lb) {
		t.Error("legacy policies that differ on /id are equal")
	}
	if !strings.Contains(string(la.JSON()), legacyMember) {
		t.Errorf("legacy JSON %s has no marker", la.JSON())
	}
}
