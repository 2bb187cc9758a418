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
		// Manual indexing: the rules say which paths an Include write indexes.
		{`{"automatic":false,"includedPaths":[{"path":"/*"}]}`, "/a", true},
		{`{"automatic":false,"includedPaths":[{"path":"/a/?"}],"excludedPaths":[{"path":"/*"}]}`, "/b", false},
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
		`{"includedPaths":[],"excludedPaths":[{"path":"/*"}]}`: false, // id and _ts

		`{"includedPaths":[{"path":"/a/?"}],"excludedPaths":[{"path":"/*"}]}`: false,
		`{"indexingMode":"none"}`: true,
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
		`{"excludedPaths":[{"path":"/?"}]}`,
		`{"compositeIndexes":[[{"path":"/a"}]]}`,
		`{"compositeIndexes":[[{"path":"/a"},{"path":"/b/?"}]]}`,
		`{"compositeIndexes":[[{"path":"/a"},{"path":"/b/*"}]]}`,
		`{"compositeIndexes":[[{"path":"/a"},{"path":"b"}]]}`,
		`{"compositeIndexes":[[{"path":"/a"},{"path":"/tags/[]"}]]}`,
		`{"compositeIndexes":[[{"path":"/a"},{"path":"/b","order":"sideways"}]]}`,
		`{"compositeIndexes":[[{"path":"/a"},{"path":"/b","order":1}]]}`,
		`{"compositeIndexes":[{"path":"/a"}]}`,
		`{"spatialIndexes":[{"path":"/loc/*","types":["Circle"]}]}`,
		`{"spatialIndexes":[{"path":"/loc","types":["Point"]}]}`,
		`{"spatialIndexes":[{"path":"/*","types":["Point"]}]}`,
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
	f.Add([]byte(`{"compositeIndexes":[[{"path":"/a","order":"ascending"},{"path":"/\"b c\"","order":"descending"}]],"spatialIndexes":[{"path":"/loc/*","types":["Point"]}]}`))
	f.Add([]byte(`{"automatic":false,"compositeIndexes":[[{"path":"/a"},{"path":"/b"}],[{"path":"/a"}]]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := Parse(raw)
		if err != nil {
			return
		}
		p.Indexes("/a/b")
		p.Indexes("/tags/[]")
		p.IndexesNothing()
		for _, c := range p.Composites() {
			if len(c) < 2 {
				t.Fatalf("a composite index of %d paths was accepted", len(c))
			}
			_ = c.String()
			if _, err := p.ServesOrderBy(c); err != nil {
				t.Fatalf("composite %v does not serve its own order: %v", c, err)
			}
		}
		p.ServesOrderBy([]CompositePath{{Path: "/a"}, {Path: "/b", Desc: true}})
		p.ServesOrderBy([]CompositePath{{Path: "/a"}})
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
		{def, `{"automatic":false,"includedPaths":[{"path":"/*"}]}`, false},
		{def, `{"compositeIndexes":[[{"path":"/a"},{"path":"/b"}]]}`, false},
		{`{"compositeIndexes":[[{"path":"/a"},{"path":"/b","order":"ascending"}]]}`, `{"compositeIndexes":[[{"path":"/a","order":"ascending"},{"path":"/b"}]]}`, true},
	} {
		if got := parse(c.a).Equal(parse(c.b)); got != c.want {
			t.Errorf("%s vs %s: Equal %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
