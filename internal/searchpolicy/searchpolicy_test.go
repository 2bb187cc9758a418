package searchpolicy

import (
	"errors"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/fault"
)

func TestParseVector(t *testing.T) {
	p, err := ParseVector([]byte(`{"vectorEmbeddings":[
		{"path":"/embedding","dataType":"Float32","dimensions":3,"distanceFunction":"Cosine"},
		{"path":"/\"text vec\"/v","dimensions":1536}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := p.Lookup([]string{"text vec", "v"}); !ok || e.DataType != "float32" || e.Distance != "cosine" || e.Dimensions != 1536 {
		t.Errorf("defaults: %+v %v", e, ok)
	}
	// An index names a path as a policy does, quoted or not.
	for _, path := range []string{`/"text vec"/v`, `/"text vec"/"v"`} {
		if e, ok := p.LookupPath(path); !ok || e.Dimensions != 1536 {
			t.Errorf("LookupPath(%s): %+v %v", path, e, ok)
		}
	}
	if _, ok := p.LookupPath("/text vec"); ok {
		t.Error("LookupPath found a path that is not declared")
	}
	want := `{"vectorEmbeddings":[{"path":"/embedding","dataType":"float32","distanceFunction":"cosine","dimensions":3},{"path":"/\"text vec\"/v","dataType":"float32","distanceFunction":"cosine","dimensions":1536}]}`
	if got := string(p.JSON()); got != want {
		t.Errorf("JSON = %s\nwant   %s", got, want)
	}
	q, err := ParseVector(p.JSON())
	if err != nil || !q.Equal(p) {
		t.Errorf("round trip: %v, equal %v", err, q.Equal(p))
	}
	for _, raw := range []string{``, `null`, `{}`, `{"vectorEmbeddings":[]}`} {
		if p, err := ParseVector([]byte(raw)); p != nil || err != nil {
			t.Errorf("%q: %v, %v; want no policy", raw, p, err)
		}
	}
}

func TestParseVectorRefuses(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`[]`, "not valid"},
		{`{"vectorEmbeddings":[{"path":"embedding","dimensions":3}]}`, "must start with /"},
		{`{"vectorEmbeddings":[{"path":"/a/*","dimensions":3}]}`, "must start with /"},
		{`{"vectorEmbeddings":[{"path":"/a","dimensions":0}]}`, "from 1 to 4096"},
		{`{"vectorEmbeddings":[{"path":"/a","dimensions":4097}]}`, "from 1 to 4096"},
		{`{"vectorEmbeddings":[{"path":"/a","dimensions":2.5}]}`, "from 1 to 4096"},
		{`{"vectorEmbeddings":[{"path":"/a","dimensions":"3"}]}`, "from 1 to 4096"},
		{`{"vectorEmbeddings":[{"path":"/a"}]}`, "from 1 to 4096"},
		{`{"vectorEmbeddings":[{"path":"/a","dimensions":3,"dataType":"float64"}]}`, "data type"},
		{`{"vectorEmbeddings":[{"path":"/a","dimensions":3,"distanceFunction":"manhattan"}]}`, "distance function"},
		{`{"vectorEmbeddings":[{"path":"/a","dimensions":3},{"path":"/a","dimensions":4}]}`, "twice"},
		{`{"vectorEmbeddings":[{"path":"/a","dimensions":3},{"path":"/a/b","dimensions":4}]}`, "overlap"},
	} {
		_, err := ParseVector([]byte(c.raw))
		var f *fault.Error
		if !errors.As(err, &f) || f.Kind != fault.BadRequest || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want a 400 saying %q", c.raw, err, c.want)
		}
	}
}

func TestParseFullText(t *testing.T) {
	p, err := ParseFullText([]byte(`{"defaultLanguage":"de-de","fullTextPaths":[{"path":"/title","language":"EN-us"},{"path":"/body"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"defaultLanguage":"de-DE","fullTextPaths":[{"path":"/title","language":"en-US"},{"path":"/body","language":"de-DE"}]}`
	if got := string(p.JSON()); got != want {
		t.Errorf("JSON = %s\nwant   %s", got, want)
	}
	if p.Language([]string{"title"}) != "en-US" || p.Language([]string{"other"}) != "de-DE" || (*FullTextPolicy)(nil).Language(nil) != "en-US" {
		t.Error("languages by path")
	}
	for _, c := range []struct{ raw, want string }{
		{`{"defaultLanguage":"xx-YY"}`, "not supported"},
		{`{"fullTextPaths":[{"path":"/a","language":"klingon"}]}`, "not supported"},
		{`{"fullTextPaths":[{"path":"a"}]}`, "must start with /"},
		{`{"fullTextPaths":[{"path":"/a"},{"path":"/a"}]}`, "twice"},
		{`{"fullTextPaths":{}}`, "not valid"},
	} {
		_, err := ParseFullText([]byte(c.raw))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.raw, err, c.want)
		}
	}
}

// FuzzParse feeds both parsers arbitrary JSON: each either refuses it with a 400 or returns a
// policy whose JSON parses back to the same policy.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"vectorEmbeddings":[{"path":"/v","dataType":"int8","dimensions":3,"distanceFunction":"euclidean"}]}`))
	f.Add([]byte(`{"defaultLanguage":"fr-FR","fullTextPaths":[{"path":"/\"a b\"/c","language":"de-DE"}]}`))
	f.Add([]byte(`{"vectorEmbeddings":[{"path":"/a","dimensions":1e400}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var f *fault.Error
		if v, err := ParseVector(raw); err != nil {
			if !errors.As(err, &f) || f.Kind != fault.BadRequest {
				t.Fatalf("vector: %v is not a 400", err)
			}
		} else if w, err := ParseVector(v.JSON()); err != nil || !w.Equal(v) {
			t.Fatalf("vector %s does not round-trip: %v", v.JSON(), err)
		}
		if p, err := ParseFullText(raw); err != nil {
			if !errors.As(err, &f) || f.Kind != fault.BadRequest {
				t.Fatalf("full text: %v is not a 400", err)
			}
		} else if q, err := ParseFullText(p.JSON()); err != nil || string(q.JSON()) != string(p.JSON()) {
			t.Fatalf("full text %s does not round-trip: %v", p.JSON(), err)
		}
	})
}
