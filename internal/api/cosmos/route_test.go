package cosmos

import (
	"reflect"
	"testing"
)

func TestParseResource(t *testing.T) {
	for _, tc := range []struct {
		path, typ, link, shape string
		segs                   []string
	}{
		{"/", "", "", "", nil},
		{"/dbs", "dbs", "", "dbs", []string{"dbs"}},
		{"/dbs/d1/", "dbs", "dbs/d1", "dbs/*", []string{"dbs", "d1"}},
		{"/dbs/d1/colls/c1/docs", "docs", "dbs/d1/colls/c1", "dbs/*/colls/*/docs", []string{"dbs", "d1", "colls", "c1", "docs"}},
		{"/dbs/d1/colls/c1/docs/item-1", "docs", "dbs/d1/colls/c1/docs/item-1", "dbs/*/colls/*/docs/*", []string{"dbs", "d1", "colls", "c1", "docs", "item-1"}},
		{"/dbs/my%20db/colls/c%2F1/docs", "docs", "dbs/my db/colls/c/1", "dbs/*/colls/*/docs", []string{"dbs", "my db", "colls", "c/1", "docs"}},
		{"/dbs/d/colls/c/docs/a%25b", "docs", "dbs/d/colls/c/docs/a%b", "dbs/*/colls/*/docs/*", []string{"dbs", "d", "colls", "c", "docs", "a%b"}},
		{"/offers/AbC=", "offers", "abc=", "offers/*", []string{"offers", "AbC="}},
		// The advertised endpoint ends in "/", and clients that join it with "/dbs/..." send this.
		{"//dbs/d1", "dbs", "dbs/d1", "dbs/*", []string{"dbs", "d1"}},
		{"//", "", "", "", nil},
	} {
		res, err := parseResource(tc.path)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if res.typ != tc.typ || res.link != tc.link || res.shape() != tc.shape || !reflect.DeepEqual(res.segs, tc.segs) {
			t.Errorf("%s: got typ %q link %q shape %q segs %q", tc.path, res.typ, res.link, res.shape(), res.segs)
		}
	}
	for _, bad := range []string{"/dbs//colls", "/dbs/%zz", "/dbs/%2", "///dbs/d1", "/dbs/d1//", "///", "/dbs/d1/colls//"} {
		if _, err := parseResource(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
