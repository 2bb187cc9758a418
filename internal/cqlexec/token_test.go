package cqlexec

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"github.com/partita-db/partita/internal/conformance"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/engine"
)

// TestTokenConformance checks that SELECT token(k) answers Cassandra's token for every vector
// of the conformance file, through the whole statement path: the key bound as its type,
// serialized, hashed, stored, read back.
func TestTokenConformance(t *testing.T) {
	raw, err := os.ReadFile(conformance.Path(t, "murmur3-token-vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
			Token int64           `json:"token"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, engine.Options{})
	h.exec("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", 0)
	tables := map[string]bool{}
	for _, c := range file.Cases {
		table := "t_" + c.Type
		if !tables[table] {
			tables[table] = true
			if out := h.exec("CREATE TABLE ks."+table+" (k "+c.Type+" PRIMARY KEY, v int)", 0); out != "created table ks."+table+"\n" {
				t.Fatalf("create table for %s: %s", c.Type, out)
			}
		}
		// The value as a CQL literal: JSON strings are quoted the CQL way, numbers as written.
		lit := string(c.Value)
		var s string
		if json.Unmarshal(c.Value, &s) == nil {
			lit = "'" + s + "'"
		}
		if out := h.exec("INSERT INTO ks."+table+" (k, v) VALUES ("+lit+", 1)", 0); out != "ok\n" {
			t.Fatalf("insert %s: %s", lit, out)
		}
		p, err := h.x.Prepare(h.sess, "SELECT token(k) FROM ks."+table+" WHERE k = "+lit)
		if err != nil {
			t.Fatal(err)
		}
		res, err := h.x.Execute(h.sess, p, Options{})
		if err != nil || len(res.Rows) != 1 {
			t.Fatalf("token of %s: %v %v", lit, res, err)
		}
		got, _ := cqlvalue.Int64(cqlvalue.Native(cqlvalue.Bigint), res.Rows[0][0])
		if got != c.Token {
			t.Errorf("token(%s %s) = %d, Cassandra's is %d", c.Type, lit, got, c.Token)
		}
		// The same row found by a token() restriction on exactly its token.
		p, _ = h.x.Prepare(h.sess, "SELECT v FROM ks."+table+" WHERE token(k) = "+strconv.FormatInt(c.Token, 10))
		if res, err := h.x.Execute(h.sess, p, Options{}); err != nil || len(res.Rows) != 1 {
			t.Errorf("token(k) = %d found %v rows, %v", c.Token, res, err)
		}
	}
	if len(file.Cases) == 0 {
		t.Fatal("the conformance file has no cases")
	}
}
