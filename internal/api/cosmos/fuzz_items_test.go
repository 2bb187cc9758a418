package cosmos

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/value"
)

// hostileJSON are bodies every JSON-reading target is seeded with: invalid UTF-8 (overlong,
// surrogates, truncated), numbers outside the double range, deep nesting, duplicate keys, a
// byte order mark, and what is not an object at all.
var hostileJSON = []string{
	``, `null`, `true`, `1`, `"x"`, `[]`, `{}`, `[{}]`, ` `, "\xef\xbb\xbf{}", `{`, `{"id":`, `}`,
	"{\"id\":\"\xc0\xaf\",\"pk\":\"p1\"}", "{\"id\":\"x\",\"pk\":\"\xed\xa0\x80\"}", "{\"id\":\"x\",\"pk\":\"p1\",\"\xf0\x9f\x98\":1}",
	"{\"id\":\"x\",\"pk\":\"p1\",\"s\":\"\xff\xfe\"}", `{"id":"x","pk":"p1","s":"\ud800"}`, `{"id":"x","pk":"\udc00\ud800"}`,
	`{"id":"x","pk":"p1","n":1e400}`, `{"id":"x","pk":"p1","n":-1e400}`, `{"id":"x","pk":1e400}`,
	`{"id":"x","pk":"p1","n":` + strings.Repeat("9", 400) + `}`, `{"id":"x","pk":"p1","n":1e-400}`,
	`{"id":"x","pk":"p1","d":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`,
	`{"id":"x","pk":"p1","d":` + strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat("}", 200) + `}`,
	`{"id":"x","pk":"p1","big":[` + strings.Repeat("0,", 50000) + `0]}`,
	`{"id":"x","id":"y","pk":"p1"}`, `{"id":"x","pk":"p1","pk":"p2"}`, `{"id":"x","pk":"p1","n":1,"n":"s"}`,
	`{"id":1,"pk":"p1"}`, `{"id":null,"pk":"p1"}`, `{"id":["x"],"pk":"p1"}`, `{"id":"x","pk":{}}`, `{"id":"x","pk":[1]}`,
	`{"id":"","pk":"p1"}`, `{"id":"a/b","pk":"p1"}`, `{"id":"` + strings.Repeat("i", 1024) + `","pk":"p1"}`,
	`{"id":"x","pk":"p1","ttl":0}`, `{"id":"x","pk":"p1","ttl":"10"}`, `{"id":"x","pk":"p1","ttl":1.5}`,
	`{"id":"x","pk":"p1","_rid":"forged","_etag":"forged","_ts":"x","_self":1}`, `{"id":"x","pk":"p1","u":"ua"}`,
	`{"id":"x","pk":"p1"} trailing`, `{"id":"x","pk":"p1"}{}`, `{"id":"x","pk":"p1",}`, `{'id':'x'}`,
}

// FuzzItemWrite sends item bodies to create, upsert and replace, with the partition key
// header an SDK derives from the body. A refusal changes nothing; an accepted write answers
// the item as stored, and stores what was sent (system properties aside).
func FuzzItemWrite(f *testing.F) {
	s := newFuzzServer(f)
	for op := range uint8(3) {
		for _, b := range append([]string{`{"id":"x","pk":"p1","n":1}`, `{"id":"a","pk":"p1","n":5}`, `{"id":"y","pk":["nested",{"k":1}]}`}, hostileJSON...) {
			f.Add(op, []byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, op uint8, body []byte) {
		hdr := map[string]string{"x-ms-documentdb-partitionkey": `["p1"]`}
		if _, key, err := document.Parse(body, [][]string{{"pk"}}); err == nil {
			hdr["x-ms-documentdb-partitionkey"] = keyHeader(key)
		}
		method, path := http.MethodPost, "/dbs/db/colls/c/docs"
		switch op % 3 {
		case 1:
			hdr["x-ms-documentdb-is-upsert"] = "true"
		case 2:
			method, path = http.MethodPut, "/dbs/db/colls/c/docs/a"
		}
		what := method + " " + path + " " + string(truncate(body))
		w, _ := s.send(t, what, true, method, path, body, hdr)
		if w.Code >= 300 {
			return
		}
		defer s.reset(t)
		ct, _ := s.e.Container("db", "c")
		it, key, err := document.Parse(w.Body.Bytes(), [][]string{{"pk"}})
		if err != nil {
			t.Fatalf("%s answered %q: %v", what, w.Body, err)
		}
		stored, err := ct.ReadItem(key, it.ID)
		if err != nil || !bytes.Equal(stored.Doc, w.Body.Bytes()) || quoted(stored.ETag) != w.Header().Get("Etag") {
			t.Fatalf("%s answered %s (etag %s), but %s (etag %s) is stored: %v", what, w.Body, w.Header().Get("Etag"), stored.Doc, stored.ETag, err)
		}
		sent, _ := value.Parse(body)
		got, _ := value.Parse(stored.Doc)
		if !value.Equal(userProperties(sent), userProperties(got)) {
			t.Fatalf("%s stored %s", what, stored.Doc)
		}
	})
}

// FuzzPatchItem sends patch documents, of both shapes, to an item. A refusal (including a
// condition that does not hold) changes nothing; an accepted patch answers the item as stored,
// with a new etag and the same id and partition key.
func FuzzPatchItem(f *testing.F) {
	s := newFuzzServer(f)
	for _, b := range append(append([]string{}, patchBodySeeds...), hostileJSON...) {
		f.Add([]byte(b))
	}
	for _, b := range []string{
		`[{"op":"set","path":"/pk","value":"p2"}]`, `[{"op":"remove","path":"/pk"}]`, `[{"op":"move","from":"/pk","path":"/q"}]`,
		`[{"op":"set","path":"/u","value":"ub"}]`, `[{"op":"set","path":"/ttl","value":0}]`, `[{"op":"set","path":"/ttl","value":5}]`,
		`[{"op":"set","path":"/id","value":"z"}]`, `[{"op":"move","from":"/id","path":"/z"}]`, `[{"op":"remove","path":"/_ts"}]`,
		`{"condition":"FROM c WHERE c.n = 99","operations":[{"op":"set","path":"/n","value":1}]}`,
		`{"condition":"FROM c WHERE udf.f(c.n) = 1","operations":[{"op":"set","path":"/m","value":1}]}`,
		`[{"op":"add","path":"/tags/1","value":"z"},{"op":"incr","path":"/o/f","value":1e308},{"op":"incr","path":"/o/f","value":1e308}]`,
	} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ct, _ := s.e.Container("db", "c")
		hdr := map[string]string{"x-ms-documentdb-partitionkey": `["p1"]`}
		old, err := ct.ReadItem(mustKey(t, `["p1"]`), "a")
		if err != nil {
			t.Fatal(err)
		}
		what := "PATCH " + string(truncate(body))
		w, _ := s.send(t, what, true, http.MethodPatch, "/dbs/db/colls/c/docs/a", body, hdr)
		if w.Code >= 300 {
			return
		}
		defer s.reset(t)
		stored, err := ct.ReadItem(mustKey(t, `["p1"]`), "a")
		if err != nil || !bytes.Equal(stored.Doc, w.Body.Bytes()) || stored.ETag == old.ETag {
			t.Fatalf("%s answered %s, but %s (etag %s, was %s) is stored: %v", what, w.Body, stored.Doc, stored.ETag, old.ETag, err)
		}
		v, _ := value.Parse(stored.Doc)
		if v.Get("id").Str() != "a" || v.Get("pk").Str() != "p1" {
			t.Fatalf("%s stored %s", what, stored.Doc)
		}
	})
}

// FuzzBatch sends batch bodies, transactional (one partition key, all or nothing) and bulk
// (each operation alone). A refused request, and a transactional batch that failed (207),
// change nothing; an accepted one answers one result per operation, none of them a 5xx, and
// a transactional batch that succeeded succeeded in every operation.
func FuzzBatch(f *testing.F) {
	s := newFuzzServer(f)
	for _, b := range []string{
		`[{"operationType":"Create","resourceBody":{"id":"n1","pk":"p1"}},{"operationType":"Read","id":"b"}]`,
		`[{"operationType":"Upsert","resourceBody":{"id":"a","pk":"p1","n":9}},{"operationType":"Delete","id":"b"}]`,
		`[{"operationType":"Replace","id":"a","resourceBody":{"id":"a","pk":"p1"},"ifMatch":"\"stale\""}]`,
		`[{"operationType":"Patch","id":"a","resourceBody":{"operations":[{"op":"incr","path":"/n","value":1}]}}]`,
		`[{"operationType":"Patch","id":"a","resourceBody":[{"op":"set","path":"/id","value":"z"}]}]`,
		`[{"operationType":"Patch","id":"a","resourceBody":{"condition":"FROM c WHERE c.n = 0","operations":[{"op":"set","path":"/n","value":1}]}}]`,
		`[{"operationType":"Create","resourceBody":{"id":"n1","pk":"p1"}},{"operationType":"Create","resourceBody":{"id":"n1","pk":"p1"}}]`,
		`[{"operationType":"Create","resourceBody":{"id":"n1","pk":"p2"}}]`, `[{"operationType":"Create","resourceBody":{"id":"n1","pk":"p1","u":"ua"}}]`,
		`[{"operationType":"Create","partitionKey":"[\"p2\"]","resourceBody":{"id":"n2","pk":"p2"}},{"operationType":"Read","id":"c","partitionKey":"[\"p2\"]"}]`,
		`[{"operationType":"Delete","id":"d","partitionKey":"[7]"},{"operationType":"Read","id":"d","partitionKey":"[\"bad"}]`,
		`[{"operationType":"Create","resourceBody":"not an item"}]`, `[{"operationType":"Create","resourceBody":null}]`,
		`[{"operationType":"Create","resourceBody":[1]}]`, `[{"operationType":"Create"}]`, `[{"operationType":"Unknown","id":"a"}]`,
		`[{"operationType":"Read"}]`, `[{"operationType":1}]`, `[1]`, `[null]`, `{"operationType":"Read","id":"a"}`,
		`[` + strings.Repeat(`{"operationType":"Read","id":"a"},`, 100) + `{"operationType":"Read","id":"a"}]`,
	} {
		f.Add(true, []byte(b))
		f.Add(false, []byte(b))
	}
	for _, b := range hostileJSON {
		f.Add(true, []byte(`[{"operationType":"Upsert","resourceBody":`+b+`}]`))
		f.Add(false, []byte(`[{"operationType":"Create","partitionKey":"[\"p1\"]","resourceBody":`+b+`}]`))
	}
	f.Fuzz(func(t *testing.T, atomic bool, body []byte) {
		hdr := map[string]string{"x-ms-cosmos-is-batch-request": "true", "x-ms-documentdb-partitionkey": `["p1"]`}
		if atomic {
			hdr["x-ms-cosmos-batch-atomic"] = "true"
		}
		what := "batch " + string(truncate(body))
		w, before := s.send(t, what, true, http.MethodPost, "/dbs/db/colls/c/docs", body, hdr)
		if w.Code >= 300 {
			return
		}
		if atomic && w.Code == http.StatusMultiStatus {
			if after := s.state(t); after != before {
				t.Fatalf("%s: the batch failed (%s), but the state changed from\n%s\nto\n%s", what, w.Body, before, after)
			}
		}
		defer s.reset(t)
		var ops []json.RawMessage
		var results []struct {
			StatusCode *int `json:"statusCode"`
		}
		if err := json.Unmarshal(body, &ops); err != nil {
			t.Fatalf("%s accepted, but it is not an array: %v", what, err)
		}
		if err := json.Unmarshal(w.Body.Bytes(), &results); err != nil || len(results) != len(ops) {
			t.Fatalf("%s: %d operations answered %s (%v)", what, len(ops), w.Body, err)
		}
		for i, r := range results {
			if r.StatusCode == nil || *r.StatusCode >= 500 || *r.StatusCode < 200 ||
				atomic && w.Code == http.StatusOK && *r.StatusCode >= 400 {
				t.Fatalf("%s: operation %d answered %s", what, i, w.Body)
			}
		}
	})
}

func mustKey(t *testing.T, h string) epk.Key {
	k, err := parsePartitionKey(h)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// truncate shortens an input for messages.
func truncate(b []byte) []byte {
	if len(b) > 300 {
		return append(b[:300:300], "..."...)
	}
	return b
}
