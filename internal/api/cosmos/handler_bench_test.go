package cosmos

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/masterkey"
)

// BenchmarkPointReadHandler measures the gateway's work for a signed 1 KB point read, without
// the network: authentication, routing, the engine read and the response headers.
func BenchmarkPointReadHandler(b *testing.B) {
	e, err := engine.Open(engine.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	e.CreateDatabase("db", nil)
	e.CreateContainer("db", engine.ContainerSpec{ID: "c", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}})
	c, _ := e.Container("db", "c")
	if _, err := c.CreateItem([]byte(`{"id":"a","pk":"p","pad":"`+strings.Repeat("x", 950)+`"}`), engine.ItemOptions{}); err != nil {
		b.Fatal(err)
	}
	h, err := NewHandler(e, Options{Key: testKey})
	if err != nil {
		b.Fatal(err)
	}
	key, _ := masterkey.Parse(testKey)
	date := time.Now().UTC().Format(http.TimeFormat)
	auth := key.Authorization("get", "docs", "dbs/db/colls/c/docs/a", date)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest(http.MethodGet, "/dbs/db/colls/c/docs/a", nil)
			req.Header.Set("x-ms-date", date)
			req.Header.Set("Authorization", auth)
			req.Header.Set("x-ms-documentdb-partitionkey", `["p"]`)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	})
}
