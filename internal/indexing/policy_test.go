package indexing

import "testing"

func TestIndexes(t *testing.T) {
	cases := []struct {
		policy string
		path   string
		want   bool
	}{
		{``, "/a", true},
		{`{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`, "/a/b", true},
		{`{"includedPaths":[],"excludedPaths":[{"path":"/*"}]}`, "/a", false},
		{`{"includedPaths":[],"excludedPaths":[{"path":"/*"}]}`, "/pk", false},
		{`{"includedPaths":[{"path":"/a/?"}],"excludedPaths":[{"path":"/*"}]}`, "/a", true},
		{`{"includedPaths":[{"path":"/a/?"}],"excludedPaths":[{"path":"/*"}]}`, "/a/b", false},
		{`{"includedPaths":[{"path":"/a/*"}],"excludedPaths":[{"path":"/*"}]}`, "/a/b", true},
		{`{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/a/*"}]}`, "/a", false},
		{`{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/a/*"}]}`, "/ab", true},
		{`{"includedPaths":[{"path":"/a/b/?"}],"excludedPaths":[{"path":"/a/*"}]}`, "/a/b", true},
		{`{"includedPaths":[{"path":"/a/*"}],"excludedPaths":[{"path":"/a/?"}]}`, "/a", false},
		{`{"includedPaths":[{"path":"/a/*"}],"excludedPaths":[{"path":"/a/?"}]}`, "/a/x", true},
		{`{"includedPaths":[{"path":"/tags/[]/?"}],"excludedPaths":[{"path":"/*"}]}`, "/tags/[]", true},
		{`{"includedPaths":[{"path":"/\"a/b\"/?"}],"excludedPaths":[{"path":"/*"}]}`, "/a~1b", true},
		{`{"indexingMode":"none"}`, "/a", false},
		{`{"automatic":false,"includedPaths":[{"path":"/*"}]}`, "/a", false},
	}
	for _, c := range cases {
		p, err := Parse([]byte(c.policy))
		if err != nil {
			t.Fatalf("%s: %v", c.policy, err)
		}
		if got := p.Indexes(c.path); got != c.want {
			t.Errorf("%s: Indexes(%q) = %v, want %v", c.policy, c.path, got, c.want)
		}
	}
}

func TestIndexesNothing(t *testing.T) {
	for policy, want := range map[string]bool{
		``: false,
		`{"includedPaths":[],"excludedPaths":[{"path":"/*"}]}`:                true,
		`{"includedPaths":[{"path":"/a/?"}],"excludedPaths":[{"path":"/*"}]}`: false,
		`{"indexingMode":"none"}`:                                             true,
		`{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/a/?"}]}`: false,
	} {
		p, err := Parse([]byte(policy))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.IndexesNothing(); got != want {
			t.Errorf("%s: IndexesNothing = %v, want %v", policy, got, want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, policy := range []string{
		`{"includedPaths":[{"path":"a/?"}]}`,
		`{"includedPaths":[{"path":"/a"}]}`,
		`{"includedPaths":[{"path":"/\"a/?"}]}`,
		`{"indexingMode":"sometimes"}`,
		`{"includedPaths":"x"}`,
		`{"excludedPaths":[{"path":"//?"}]}`,
	} {
		if _, err := Parse([]byte(policy)); err == nil {
			t.Errorf("%s: accepted", policy)
		}
	}
}

// Policies come from clients: parsing never panics, and a parsed policy answers for any path.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"includedPaths":[{"path":"/a/?"}],"excludedPaths":[{"path":"/*"}]}`))
	f.Add([]byte(`{"includedPaths":[{"path":"/\"x/y\"/[]/*"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := Parse(raw)
		if err != nil {
			return
		}
		p.Indexes("/a/b")
		p.Indexes("/tags/[]")
		p.IndexesNothing()
		if !p.Equal(p) {
			t.Fatal("a policy differs from itself")
		}
	})
}

// A replace that sends back the policy a container reads as (Cosmos's default) or lists the
// same paths in another order changes nothing.
func TestEqual(t *testing.T) {
	parse := func(s string) *Policy {
		p, err := Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	def := `{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{``, def, true},
		{def, `{"includedPaths":[{"path":"/*"}]}`, true},
		{`{"includedPaths":[{"path":"/a/?"},{"path":"/b/?"}],"excludedPaths":[{"path":"/*"}]}`,
			`{"excludedPaths":[{"path":"/*"}],"includedPaths":[{"path":"/b/?"},{"path":"/a/?"}]}`, true},
		{def, `{"includedPaths":[],"excludedPaths":[{"path":"/*"}]}`, false},
		{def, `{"indexingMode":"none"}`, false},
		{`{"includedPaths":[{"path":"/a/?"}]}`, `{"includedPaths":[{"path":"/a/*"}]}`, false},
	} {
		if got := parse(c.a).Equal(parse(c.b)); got != c.want {
			t.Errorf("%s vs %s: Equal %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
