package indexing

import (
	"strings"
	"testing"
)

func TestVectorAndFullTextIndexes(t *testing.T) {
	p, err := Parse([]byte(`{"vectorIndexes":[{"path":"/v","type":"DiskANN","quantizationByteSize":96,"indexingSearchListSize":100},{"path":"/w","type":"flat"}],"fullTextIndexes":[{"path":"/text"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	vs := p.VectorIndexes()
	if len(vs) != 2 || vs[0].Type != "diskANN" || vs[0].QuantizationBytes != 96 || vs[0].SearchListSize != 100 || vs[1].Type != "flat" {
		t.Errorf("vector indexes: %+v", vs)
	}
	if fs := p.FullTextIndexes(); len(fs) != 1 || fs[0].Path != "/text" {
		t.Errorf("full-text indexes: %+v", fs)
	}
	q, _ := Parse([]byte(`{"fullTextIndexes":[{"path":"/text"}],"vectorIndexes":[{"path":"/w","type":"flat"},{"path":"/v","type":"diskANN","quantizationByteSize":96,"indexingSearchListSize":100}]}`))
	if !p.Equal(q) {
		t.Error("the same indexes in another order are not equal")
	}
	r, _ := Parse([]byte(`{"vectorIndexes":[{"path":"/w","type":"quantizedFlat"},{"path":"/v","type":"diskANN","quantizationByteSize":96,"indexingSearchListSize":100}],"fullTextIndexes":[{"path":"/text"}]}`))
	if p.Equal(r) {
		t.Error("another index type is equal")
	}
	for _, c := range []struct{ raw, want string }{
		{`{"vectorIndexes":[{"path":"/v","type":"hnsw"}]}`, "not supported"},
		{`{"vectorIndexes":[{"path":"/v/*","type":"flat"}]}`, "not valid"},
		{`{"vectorIndexes":[{"path":"/v","type":"flat","quantizationByteSize":8}]}`, "not to the flat index"},
		{`{"vectorIndexes":[{"path":"/v","type":"quantizedFlat","indexingSearchListSize":50}]}`, "not to the quantizedFlat"},
		{`{"vectorIndexes":[{"path":"/v","type":"diskANN","indexingSearchListSize":10}]}`, "from 25 to 500"},
		{`{"vectorIndexes":[{"path":"/v","type":"diskANN","quantizationByteSize":513}]}`, "from 1 to 512"},
		{`{"vectorIndexes":[{"path":"/v","type":"flat"},{"path":"/v","type":"diskANN"}]}`, "two vector indexes"},
		{`{"fullTextIndexes":[{"path":"/t"},{"path":"/t"}]}`, "two full-text indexes"},
		{`{"fullTextIndexes":[{"path":"t"}]}`, "not valid"},
	} {
		if _, err := Parse([]byte(c.raw)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.raw, err, c.want)
		}
	}
}

// TestFullTextTermPaths checks that the full-text terms of a path count as indexed exactly
// where the policy has a full-text index on it, whatever its range rules say, and never as
// a JSON path.
func TestFullTextTermPaths(t *testing.T) {
	p, err := Parse([]byte(`{"excludedPaths":[{"path":"/*"}],"fullTextIndexes":[{"path":"/text"},{"path":"/a/\"b c\""}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ft := FullTextTermPath("/text")
	if !p.Indexes(ft) || !p.Indexes(FullTextTermPath(`/a/b c`)) || p.Indexes(FullTextTermPath("/other")) || p.Indexes("/text") {
		t.Errorf("Indexes: %v %v %v %v", p.Indexes(ft), p.Indexes(FullTextTermPath(`/a/b c`)), p.Indexes(FullTextTermPath("/other")), p.Indexes("/text"))
	}
	if p.IndexesNothing() {
		t.Error("a policy with a full-text index indexes nothing")
	}
	def, _ := Parse(nil)
	if def.Indexes(ft) || (*Policy)(nil).Indexes(ft) {
		t.Error("the default policy indexes full-text terms")
	}
	none, _ := Parse([]byte(`{"indexingMode":"none","fullTextIndexes":[{"path":"/text"}]}`))
	if none.Indexes(ft) || !none.IndexesNothing() {
		t.Error("indexing mode none indexes full-text terms")
	}
	without, err := p.WithoutFullText()
	if err != nil {
		t.Fatal(err)
	}
	if without.Indexes(ft) || without.Indexes("/text") || !without.Indexes("/_ts") || len(without.FullTextIndexes()) != 0 {
		t.Errorf("without full text: %s", without.JSON())
	}
	again, err := Parse(without.JSON())
	if err != nil || !again.Equal(without) || again.Equal(p) {
		t.Errorf("the JSON of the policy without full text parses to another policy: %s", without.JSON())
	}
	if n, ok := ParseFullTextLength(FullTextLength(7)); !ok || n != 7 {
		t.Errorf("length entry: %d %v", n, ok)
	}
	if _, ok := ParseFullTextLength(FullTextToken("cat")); ok {
		t.Error("a token entry reads as a length")
	}
}
