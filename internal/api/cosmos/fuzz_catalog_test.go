package cosmos

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// containerBodySeeds are container definitions, valid and hostile, for database db; "r" is
// the container a replace addresses.
var containerBodySeeds = []string{
	`{"id":"n","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`,
	`{"id":"n","partitionKey":{"paths":["/a","/b"],"kind":"MultiHash","version":2},"defaultTtl":3600}`,
	`{"id":"n","partitionKey":{"paths":["/pk"]},"uniqueKeyPolicy":{"uniqueKeys":[{"paths":["/email"]}]},"defaultTtl":-1}`,
	`{"id":"n","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"indexingMode":"consistent","includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/x/?"}],"compositeIndexes":[[{"path":"/a"},{"path":"/b","order":"descending"}]]}}`,
	`{"id":"r","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2},"defaultTtl":10}`,
	`{"id":"r","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2},"indexingPolicy":{"indexingMode":"none","automatic":false}}`,
	`{"id":"r","partitionKey":{"paths":["/other"],"kind":"Hash","version":2}}`, `{"id":"r"}`, `{"id":"other"}`,
	`{"id":"r","partitionKey":{"paths":["/pk"]},"uniqueKeyPolicy":{"uniqueKeys":[{"paths":["/u"]}]}}`,
	`{"id":"c","partitionKey":{"paths":["/pk"]}}`, `{"partitionKey":{"paths":["/pk"]}}`, `{"id":"","partitionKey":{"paths":["/pk"]}}`,
	`{"id":"a/b","partitionKey":{"paths":["/pk"]}}`, `{"id":"` + strings.Repeat("n", 256) + `","partitionKey":{"paths":["/pk"]}}`,
	"{\"id\":\"n\xff\",\"partitionKey\":{\"paths\":[\"/pk\"]}}", `{"id":"n\ud800","partitionKey":{"paths":["/pk"]}}`,
	`{"id":"n","partitionKey":{"paths":["/a","/a"],"kind":"MultiHash","version":2}}`, `{"id":"n","partitionKey":{"paths":["pk"]}}`,
	`{"id":"n","partitionKey":{"paths":"/pk"}}`, `{"id":"n","partitionKey":{"paths":["/pk"],"version":3}}`, `{"id":"n","partitionKey":null}`,
	`{"id":"n","partitionKey":{"paths":["/pk"]},"defaultTtl":0}`, `{"id":"n","partitionKey":{"paths":["/pk"]},"defaultTtl":-2}`,
	`{"id":"n","partitionKey":{"paths":["/pk"]},"defaultTtl":1.5}`, `{"id":"n","partitionKey":{"paths":["/pk"]},"defaultTtl":"10"}`,
	`{"id":"n","partitionKey":{"paths":["/pk"]},"defaultTtl":1e400}`, `{"id":"n","partitionKey":{"paths":["/pk"]},"defaultTtl":` + strings.Repeat("9", 400) + `}`,
	`{"id":"n","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"indexingMode":"sometimes"}}`,
	`{"id":"n","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"includedPaths":"/*"}}`, `{"id":"n","partitionKey":{"paths":["/pk"]},"indexingPolicy":[]}`,
	`{"id":"n","partitionKey":{"paths":["/pk"]},"uniqueKeyPolicy":{"uniqueKeys":[{"paths":["u"]}]}}`,
	`{"id":"n","partitionKey":{"paths":["/pk"]},"uniqueKeyPolicy":{"uniqueKeys":[` + strings.Repeat(`{"paths":["/u"]},`, 10) + `{"paths":["/v"]}]}}`,
	`{"id":"n","id":"m","partitionKey":{"paths":["/pk"]}}`, `{"id":1,"partitionKey":{"paths":["/pk"]}}`,
}

// FuzzContainerBody sends container definitions to create (with throughput headers) and to
// replace. A refusal changes nothing; an accepted one answers the container as stored.
func FuzzContainerBody(f *testing.F) {
	s := newFuzzServer(f)
	for _, b := range append(append([]string{}, containerBodySeeds...), hostileJSON...) {
		f.Add(false, []byte(b), "", "")
		f.Add(true, []byte(b), "", "")
	}
	for _, h := range [][2]string{{"400", ""}, {"1000", ""}, {"100", ""}, {"450", ""}, {"0", ""}, {"-1", ""}, {"1e3", ""},
		{strings.Repeat("9", 30), ""}, {"", `{"maxThroughput":1000}`}, {"", `{"maxThroughput":1500}`}, {"", `{"maxThroughput":1e400}`},
		{"400", `{"maxThroughput":4000}`}, {"", `{"maxThroughput":"x"}`}, {"", "\xff"}} {
		f.Add(false, []byte(containerBodySeeds[0]), h[0], h[1])
	}
	f.Fuzz(func(t *testing.T, replace bool, body []byte, manual, auto string) {
		if !validHeader(manual) || !validHeader(auto) {
			return
		}
		method, path := http.MethodPost, "/dbs/db/colls"
		if replace {
			method, path = http.MethodPut, "/dbs/db/colls/r"
		}
		hdr := map[string]string{"x-ms-offer-throughput": manual, "x-ms-cosmos-offer-autopilot-settings": auto}
		what := method + " " + path + " " + string(truncate(body)) + " throughput " + manual + " " + auto
		w, _ := s.send(t, what, true, method, path, body, hdr)
		if w.Code >= 300 {
			return
		}
		defer s.reset(t)
		var answered struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &answered); err != nil || replace && answered.ID != "r" {
			t.Fatalf("%s answered %s: %v", what, w.Body, err)
		}
		info, err := s.e.ContainerInfo("db", answered.ID)
		if err != nil {
			t.Fatalf("%s answered %s, but the container is not there: %v", what, w.Body, err)
		}
		if stored, _ := json.Marshal(containerJSON(info)); !bytes.Equal(stored, w.Body.Bytes()) {
			t.Fatalf("%s answered\n%s\nbut stored\n%s", what, w.Body, stored)
		}
	})
}

// FuzzOfferBody sends offer bodies to replace a container's offer and a database's. A
// refusal changes nothing; an accepted one answers the offer as stored.
func FuzzOfferBody(f *testing.F) {
	s := newFuzzServer(f)
	for _, b := range []string{
		`{"content":{"offerThroughput":500}}`, `{"content":{"offerThroughput":1000,"offerIsRUPerMinuteThroughputEnabled":false}}`,
		`{"content":{"offerAutopilotSettings":{"maxThroughput":4000}}}`, `{"content":{"offerThroughput":400,"offerAutopilotSettings":{"maxThroughput":1000}}}`,
		`{"content":{"offerThroughput":20000}}`, `{"content":{"offerAutopilotSettings":{"maxThroughput":30000}}}`,
		`{"content":{"offerThroughput":1000000000}}`, `{"content":{"offerAutopilotSettings":{"maxThroughput":2000000000}}}`,
		`{"content":{"offerThroughput":0}}`, `{"content":{"offerThroughput":-400}}`, `{"content":{"offerThroughput":450}}`,
		`{"content":{"offerThroughput":300}}`, `{"content":{"offerThroughput":400.5}}`, `{"content":{"offerThroughput":"400"}}`,
		`{"content":{"offerThroughput":1e400}}`, `{"content":{"offerThroughput":` + strings.Repeat("9", 400) + `}}`,
		`{"content":{"offerThroughput":9223372036854775807}}`, `{"content":{"offerAutopilotSettings":{"maxThroughput":-1000}}}`,
		`{"content":{"offerAutopilotSettings":null,"offerThroughput":600}}`, `{"content":{"offerAutopilotSettings":{"maxThroughput":1500}}}`,
		`{"content":null}`, `{"content":[]}`, `{"content":{}}`, `{"id":"other","content":{"offerThroughput":500}}`,
		`{"resource":"dbs/x/colls/y/","offerResourceId":"x","content":{"offerThroughput":500}}`,
		`{"content":{"offerThroughput":500},"content":{"offerThroughput":600}}`,
	} {
		f.Add(false, []byte(b))
		f.Add(true, []byte(b))
	}
	for _, b := range hostileJSON {
		f.Add(false, []byte(b))
	}
	f.Fuzz(func(t *testing.T, database bool, body []byte) {
		id := s.offerID(t, database)
		path := "/offers/" + id
		what := "PUT " + path + " " + string(truncate(body))
		w, _ := s.send(t, what, true, http.MethodPut, path, body, nil)
		if w.Code >= 300 {
			return
		}
		defer s.reset(t)
		o, err := s.e.Offer(id)
		if err != nil {
			t.Fatal(err)
		}
		if stored, _ := json.Marshal(offerJSON(o)); !bytes.Equal(stored, w.Body.Bytes()) {
			t.Fatalf("%s answered\n%s\nbut stored\n%s", what, w.Body, stored)
		}
	})
}

// offerID is the id of database shared's offer, or of container o's.
func (s *fuzzServer) offerID(t *testing.T, database bool) string {
	var rid string
	if database {
		d, err := s.e.Database("shared")
		if err != nil {
			t.Fatal(err)
		}
		rid = d.RID
	} else {
		info, err := s.e.ContainerInfo("db", "o")
		if err != nil {
			t.Fatal(err)
		}
		rid = info.RID
	}
	for _, o := range s.e.Offers() {
		if o.ResourceRID == rid {
			return o.ID
		}
	}
	t.Fatalf("no offer for %s", rid)
	return ""
}
