package cosmos

import (
	"net/http"
	"testing"

	"github.com/partita-db/partita/internal/engine"
)

// A container's operations: partitionkeydelete is served to POST signed either way the SDKs
// sign it; another method is a 405 and another operation a 404, both Cosmos error bodies.
func TestContainerOperations(t *testing.T) {
	e, err := engine.Open(engine.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	e.CreateDatabase("db", nil)
	if _, err := e.CreateContainer("db", engine.ContainerSpec{ID: "c", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	do := signedRequests(t, e)
	pk := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}
	for _, typ := range []string{"partitionkey", "colls"} {
		if w := do("POST", "/dbs/db/colls/c/operations/partitionkeydelete", typ, "dbs/db/colls/c", "", pk); w.Code != http.StatusOK {
			t.Fatalf("signed as %s: %d %s", typ, w.Code, w.Body)
		}
	}
	for _, c := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/dbs/db/colls/c/operations/partitionkeydelete", http.StatusMethodNotAllowed},
		{"POST", "/dbs/db/colls/c/operations/merge", http.StatusNotFound},
	} {
		w := do(c.method, c.path, "partitionkey", "dbs/db/colls/c", "", pk)
		if w.Code != c.code || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s %s: %d (%s) %s", c.method, c.path, w.Code, w.Header().Get("Content-Type"), w.Body)
		}
	}
}
