package cosmos

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/engine"
)

const benchKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

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
	h, err := NewHandler(e, Options{Key: benchKey})
	if err != nil {
		b.Fatal(err)
	}
	key, _ := base64.StdEncoding.DecodeString(benchKey)
	date := time.Now().UTC().Format(http.TimeFormat)
	m := hmac.New(sha256.New, key)
	m.Write([]byte("get\ndocs\ndbs/db/colls/c/docs/a\n" + strings.ToLower(date) + "\n\n"))
	auth := url.QueryEscape("type=master&ver=1.0&sig=" + base64.StdEncoding.EncodeToString(m.Sum(nil)))
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
