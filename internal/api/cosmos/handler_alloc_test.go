//go:build !race

package cosmos

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/masterkey"
)

// The allocations of the two hottest requests, a point read and a create, each through the
// whole handler (signature, routing, engine, reply), are pinned: a change that adds to them
// fails here and must raise the bound on purpose. The request and recorder themselves are
// built outside what is counted.
func TestHotRequestAllocations(t *testing.T) {
	e, err := engine.Open(engine.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	h, err := NewHandler(e, Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := masterkey.Parse(testKey)
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("db", engine.ContainerSpec{ID: "c", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	pad := bytes.Repeat([]byte("x"), 900)
	n := 0
	request := func(method, path, typ, link string, body []byte) (*http.Request, *httptest.ResponseRecorder) {
		req := httptest.NewRequest(method, "http://partita"+path, bytes.NewReader(body))
		date := time.Now().UTC().Format(http.TimeFormat)
		req.Header.Set("x-ms-date", date)
		req.Header.Set("x-ms-version", "2020-07-15")
		req.Header.Set("x-ms-documentdb-partitionkey", `["p"]`)
		req.Header.Set("Authorization", key.Authorization(method, typ, link, date))
		return req, httptest.NewRecorder()
	}
	create := func() (*http.Request, *httptest.ResponseRecorder) {
		n++
		body := fmt.Appendf(nil, `{"id":"item-%d","pk":"p","n":%d,"pad":%q}`, n, n, pad)
		return request("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", body)
	}
	read := func() (*http.Request, *httptest.ResponseRecorder) {
		return request("GET", "/dbs/db/colls/c/docs/item-1", "docs", "dbs/db/colls/c/docs/item-1", nil)
	}
	for _, c := range []struct {
		name  string
		build func() (*http.Request, *httptest.ResponseRecorder)
		code  int
		max   float64
	}{
		{"create", create, http.StatusCreated, 106}, // three for the _ts entry the writer adds (partition.withTS)
		{"point read", read, http.StatusOK, 28},
	} {
		var reqs []*http.Request
		var recs []*httptest.ResponseRecorder
		for range 201 { // AllocsPerRun runs once more than asked, to warm up
			r, w := c.build()
			reqs, recs = append(reqs, r), append(recs, w)
		}
		i := 0
		got := testing.AllocsPerRun(200, func() {
			h.ServeHTTP(recs[i], reqs[i])
			if recs[i].Code != c.code {
				t.Fatalf("%s: %d %s", c.name, recs[i].Code, recs[i].Body)
			}
			i++
		})
		t.Logf("%s: %.1f allocations", c.name, got)
		if got > c.max {
			t.Errorf("a %s allocates %.1f times, more than the %.0f pinned", c.name, got, c.max)
		}
	}
}
