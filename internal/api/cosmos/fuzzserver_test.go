package cosmos

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/masterkey"
	"github.com/partita-db/partita/internal/value"
)

// The handler-level fuzz targets send each input as the body or a header of a real request,
// signed with the account key so that it reaches the parser it is aimed at, through the whole
// gateway to a real engine. Whatever the input, every answer must be one a client can act on
// (checkAnswer), a refused request must leave the stored state byte for byte as it was, and an
// accepted one must have stored what it answered.

// fuzzServer is a gateway over an engine in a temporary directory, built once per fuzz process
// (the coordinator and each worker run the Fuzz function, and so this, once each).
//
// The seeded account: database "db" holding container "c" (partition key /pk, unique key /u,
// time to live on without a default) with fuzzItems and fuzzScripts; container "r" (empty, for
// replaces); container "o" with its own manual throughput (its offer is fuzzed); and database
// "shared" with shared throughput (a database offer).
type fuzzServer struct {
	e   *engine.Engine
	h   *Handler
	key *masterkey.Key
}

// fuzzItems are container c's items, by id.
var fuzzItems = []string{
	`{"id":"a","pk":"p1","n":1,"tags":["x","y"],"o":{"f":1.5},"u":"ua"}`,
	`{"id":"b","pk":"p1","n":2,"s":"hello","u":"ub"}`,
	`{"id":"c","pk":"p2","n":3,"arr":[1,[2],{"x":null}],"u":"uc"}`,
	`{"id":"d","pk":7,"n":-1,"u":"ud"}`,
	`{"id":"e","pk":"p2","n":1e300,"s":"ünï","u":"ue"}`,
}

// fuzzScripts are container c's scripts. "echo" answers its arguments as an array; "write"
// creates an item and, asked to, fails after it.
var fuzzScripts = []engine.Script{
	{Kind: engine.ProcedureScript, ID: "echo", Body: `function echo() { getContext().getResponse().setBody(Array.prototype.slice.call(arguments)); }`},
	{Kind: engine.ProcedureScript, ID: "write", Body: `function write(id, fail) {
		var c = getContext().getCollection();
		c.createDocument(c.getSelfLink(), {id: String(id), pk: "p1"}, function (err) {
			if (err) throw err;
			if (fail === true) throw new Error("asked to fail after writing");
		});
	}`},
	{Kind: engine.TriggerScript, ID: "pre", Body: `function pre() { var r = getContext().getRequest(); r.setBody(r.getBody()); }`, TriggerType: "Pre", TriggerOperation: "All"},
	{Kind: engine.FunctionScript, ID: "f", Body: `function f(x) { return x; }`},
}

// fuzzContainers are the containers of database db as created.
var fuzzContainers = []engine.ContainerSpec{
	{ID: "c", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}, DefaultTTL: ptr(int64(-1)),
		UniqueKeys: json.RawMessage(`{"uniqueKeys":[{"paths":["/u"]}]}`)},
	{ID: "r", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}},
	{ID: "o", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}, Throughput: &engine.Throughput{Manual: 400}},
}

func ptr[T any](v T) *T { return &v }

func newFuzzServer(f *testing.F) *fuzzServer {
	e, err := engine.Open(engine.Options{Dir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { e.Close() })
	h, err := NewHandler(e, Options{Key: testKey})
	if err != nil {
		f.Fatal(err)
	}
	key, _ := masterkey.Parse(testKey)
	s := &fuzzServer{e: e, h: h, key: key}
	s.reset(f)
	return s
}

// do sends a request signed as an SDK signs it. A header "x-ms-date" in hdr is signed as it
// is; without one the request carries the current date.
func (s *fuzzServer) do(method, path string, body []byte, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "http://partita"+path, bytes.NewReader(body))
	date := time.Now().UTC().Format(http.TimeFormat)
	if d, ok := hdr["x-ms-date"]; ok {
		date = d
	}
	req.Header.Set("x-ms-date", date)
	res, _ := parseResource(req.URL.EscapedPath()) // an unparsable path is refused before the signature matters
	req.Header.Set("Authorization", s.key.Authorization(strings.ToLower(method), res.typ, res.link, date))
	for k, v := range hdr {
		if k != "x-ms-date" && v != "" {
			req.Header.Set(k, v)
		}
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, req)
	return received(w)
}

// checkAnswer fails t unless w is an answer a client can act on: never a 5xx; a refusal
// carries Cosmos's error body, a JSON object with a string code and message; any other body
// is JSON.
func checkAnswer(t *testing.T, what string, w *httptest.ResponseRecorder) {
	t.Helper()
	if w.Code >= 500 {
		t.Fatalf("%s: %d %s", what, w.Code, w.Body)
	}
	if w.Code >= 400 {
		var e struct {
			Code    *string `json:"code"`
			Message *string `json:"message"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Code == nil || e.Message == nil || *e.Code == "" {
			t.Fatalf("%s: %d with a body that is not Cosmos's error shape (%v): %q", what, w.Code, err, w.Body)
		}
		return
	}
	if w.Body.Len() > 0 && !json.Valid(w.Body.Bytes()) {
		t.Fatalf("%s: %d with a body that is not JSON: %q", what, w.Code, w.Body)
	}
}

// validHeader reports whether v can be a header value on the wire: net/http refuses control
// characters other than tab before a handler sees them.
func validHeader(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// state is everything a request could change, as clients see it, etags included: databases,
// containers and their partitions, offers, and the items and scripts of every container.
func (s *fuzzServer) state(t testing.TB) string {
	t.Helper()
	var b bytes.Buffer
	add := func(v any) {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	add(s.e.Offers())
	for _, d := range s.e.Databases() {
		add(d)
		cs, err := s.e.Containers(d.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range cs {
			add(containerJSON(info))
			for _, p := range info.Partitions {
				add(p.Range)
			}
			ct, err := s.e.Container(d.ID, info.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range scriptKinds {
				add(ct.Scripts(k))
			}
			for _, doc := range s.items(t, ct) {
				b.Write(doc)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// items reads every item of ct.
func (s *fuzzServer) items(t testing.TB, ct *engine.Container) [][]byte {
	var out [][]byte
	tok := ""
	for {
		page, err := ct.ReadFeed(epk.All, tok, 1000)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Docs...)
		if tok = page.Next; tok == "" {
			return out
		}
	}
}

// send sends one request, described by what in failures, and checks its answer: shaped as
// checkAnswer wants and, for a write that is refused, with the state exactly as it was
// before, which it returns (empty for a read, whose state is not read: that would slow the
// fuzzing for nothing).
func (s *fuzzServer) send(t *testing.T, what string, write bool, method, path string, body []byte, hdr map[string]string) (*httptest.ResponseRecorder, string) {
	t.Helper()
	var before string
	if write {
		before = s.state(t)
	}
	w := s.do(method, path, body, hdr)
	checkAnswer(t, what, w)
	if write && w.Code >= 400 {
		if after := s.state(t); after != before {
			t.Fatalf("%s: refused with %d %s, but the state changed from\n%s\nto\n%s", what, w.Code, w.Body, before, after)
		}
	}
	return w, before
}

// reset brings the account back to the seeded one, changing only what differs from it.
func (s *fuzzServer) reset(t testing.TB) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	seededDBs := map[string]*engine.Throughput{"db": nil, "shared": {Manual: 400}}
	for _, d := range s.e.Databases() {
		if want, ok := seededDBs[d.ID]; !ok || !sameThroughput(want, d.Throughput) {
			must(s.e.DeleteDatabase(d.ID, ""))
		}
	}
	for id, tp := range seededDBs {
		if _, err := s.e.Database(id); err != nil {
			_, err := s.e.CreateDatabase(id, tp)
			must(err)
		}
	}
	cs, err := s.e.Containers("db")
	must(err)
	seeded := map[string]engine.ContainerSpec{}
	for _, spec := range fuzzContainers {
		seeded[spec.ID] = spec
	}
	for _, info := range cs {
		if spec, ok := seeded[info.ID]; !ok || !asCreated(info, spec) {
			must(s.e.DeleteContainer("db", info.ID, ""))
		}
	}
	for _, spec := range fuzzContainers {
		if _, err := s.e.ContainerInfo("db", spec.ID); err != nil {
			_, err := s.e.CreateContainer("db", spec)
			must(err)
		}
	}
	ct, err := s.e.Container("db", "c")
	must(err)
	s.resetItems(t, ct)
	for _, want := range fuzzScripts {
		if got, err := ct.ReadScript(want.Kind, want.ID); err != nil {
			_, err := ct.CreateScript(want)
			must(err)
		} else if got.Body != want.Body || got.TriggerType != want.TriggerType || got.TriggerOperation != want.TriggerOperation {
			_, err := ct.ReplaceScript(want, "")
			must(err)
		}
	}
	for _, k := range scriptKinds {
		for _, sc := range ct.Scripts(k) {
			if !seededScript(sc) {
				must(ct.DeleteScript(k, sc.ID, ""))
			}
		}
	}
}

// resetItems leaves container c with fuzzItems as their bodies say.
func (s *fuzzServer) resetItems(t testing.TB, ct *engine.Container) {
	t.Helper()
	want := map[string]value.Value{}
	for _, it := range fuzzItems {
		v, _ := value.Parse([]byte(it))
		want[v.Get("id").Str()] = v
	}
	kept := map[string]bool{}
	for _, doc := range s.items(t, ct) {
		it, key, err := document.Parse(doc, [][]string{{"pk"}})
		if err != nil {
			t.Fatalf("stored item %q: %v", doc, err)
		}
		if w, ok := want[it.ID]; ok && !kept[it.ID] && value.Equal(userProperties(it.Value), w) {
			kept[it.ID] = true
			continue
		}
		if _, err := ct.DeleteItem(key, it.ID, engine.ItemOptions{}); err != nil {
			t.Fatalf("deleting %q: %v", doc, err)
		}
	}
	for _, it := range fuzzItems {
		if v, _ := value.Parse([]byte(it)); !kept[v.Get("id").Str()] {
			if _, err := ct.CreateItem([]byte(it), engine.ItemOptions{}); err != nil {
				t.Fatalf("seeding %s: %v", it, err)
			}
		}
	}
}

// userProperties is an item without the properties the server writes.
func userProperties(v value.Value) value.Value {
	var ms []value.Member
	for _, m := range v.Members() {
		if !document.IsSystemProperty(m.Key) {
			ms = append(ms, m)
		}
	}
	return value.Obj(ms)
}

func sameThroughput(a, b *engine.Throughput) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// asCreated reports whether a container is still as spec created it: same definition and
// throughput, and one partition.
func asCreated(info engine.ContainerInfo, spec engine.ContainerSpec) bool {
	tp := spec.Throughput
	if tp == nil {
		tp = &engine.Throughput{Manual: engine.DefaultThroughput}
	}
	return len(info.Partitions) == 1 && len(info.Indexing) == 0 && sameThroughput(info.Throughput, tp) &&
		(info.DefaultTTL == nil) == (spec.DefaultTTL == nil) && (info.DefaultTTL == nil || *info.DefaultTTL == *spec.DefaultTTL) &&
		strings.Join(info.PartitionKey.Paths, ",") == strings.Join(spec.PartitionKey.Paths, ",") &&
		info.PartitionKey.Version == spec.PartitionKey.Version
}

func seededScript(sc engine.Script) bool {
	for _, want := range fuzzScripts {
		if sc.Kind == want.Kind && sc.ID == want.ID {
			return true
		}
	}
	return false
}

// keyHeader writes a partition key as the x-ms-documentdb-partitionkey header does.
func keyHeader(key epk.Key) string { return string(partitionKeyJSON(key)) }
