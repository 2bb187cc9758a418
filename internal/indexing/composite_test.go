package indexing

import (
	"errors"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/fault"
)

func TestParseComposites(t *testing.T) {
	p, err := Parse([]byte(`{"compositeIndexes":[[{"path":"/name","order":"ascending"},{"path":"/age","order":"descending"}],[{"path":"/\"first name\""},{"path":"/a/b"}]]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, c := range p.Composites() {
		got = append(got, c.String())
	}
	want := "/name ASC, /age DESC | /first name ASC, /a/b ASC"
	if strings.Join(got, " | ") != want {
		t.Errorf("composites %q, want %q", strings.Join(got, " | "), want)
	}
}

func TestServesOrderBy(t *testing.T) {
	policy := `{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/secret/?"},{"path":"/id/?"}],
		"compositeIndexes":[[{"path":"/name"},{"path":"/age","order":"descending"}]]}`
	p, err := Parse([]byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	asc := func(path string) CompositePath { return CompositePath{Path: path} }
	desc := func(path string) CompositePath { return CompositePath{Path: path, Desc: true} }
	for _, c := range []struct {
		keys []CompositePath
		want string // "" or the start of the error
	}{
		{[]CompositePath{asc("/name")}, ""},
		{[]CompositePath{desc("/age")}, ""},
		{[]CompositePath{asc("/secret")}, "The index path corresponding"},
		{[]CompositePath{desc("/id")}, ""},
		{[]CompositePath{asc("/name"), desc("/age")}, ""},
		{[]CompositePath{desc("/name"), asc("/age")}, ""}, // all reversed
		{[]CompositePath{asc("/name"), asc("/age")}, "The order by query does not have"},
		{[]CompositePath{desc("/age"), asc("/name")}, "The order by query does not have"},
		{[]CompositePath{asc("/name"), desc("/age"), asc("/id")}, "The order by query does not have"},
	} {
		_, err := p.ServesOrderBy(c.keys)
		var fe *fault.Error
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.keys, err)
		case c.want != "" && (err == nil || !errors.As(err, &fe) || fe.Kind != fault.BadRequest || !strings.HasPrefix(fe.Message, c.want)):
			t.Errorf("%v: got %v, want a bad request starting %q", c.keys, err, c.want)
		}
	}
	none, _ := Parse([]byte(`{"indexingMode":"none"}`))
	if _, err := none.ServesOrderBy([]CompositePath{asc("/a"), asc("/b")}); err != nil {
		t.Errorf("indexing mode none checks ORDER BY: %v", err)
	}
}

func TestSpatialKept(t *testing.T) {
	p, err := Parse([]byte(`{"spatialIndexes":[{"path":"/loc/*","types":["point","Polygon"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Spatial(); len(s) != 1 || s[0].Path != "/loc/*" || strings.Join(s[0].Types, ",") != "Point,Polygon" {
		t.Errorf("spatial %+v", s)
	}
}
