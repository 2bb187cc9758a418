package cosmos

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/value"
)

// scriptPaths are the feed of each kind of script in container c, and the seeded script of
// that kind a replace addresses.
var scriptPaths = []struct {
	kind       engine.ScriptKind
	feed, item string
}{
	{engine.ProcedureScript, "/dbs/db/colls/c/sprocs", "/dbs/db/colls/c/sprocs/echo"},
	{engine.TriggerScript, "/dbs/db/colls/c/triggers", "/dbs/db/colls/c/triggers/pre"},
	{engine.FunctionScript, "/dbs/db/colls/c/udfs", "/dbs/db/colls/c/udfs/f"},
}

// FuzzScriptBody sends script registrations (stored procedures, triggers, UDFs) to create and
// replace. A refusal changes nothing; an accepted one answers the script as stored.
func FuzzScriptBody(f *testing.F) {
	s := newFuzzServer(f)
	bodies := []string{
		`{"id":"n","body":"function n() { return 1; }"}`, `{"id":"echo","body":"function () { getContext().getResponse().setBody(1); }"}`,
		`{"id":"pre","body":"function () {}","triggerType":"Pre","triggerOperation":"Create"}`,
		`{"id":"f","body":"function (x) { return x * 2; }"}`, `{"id":"n","body":"function n() {","triggerType":"Post","triggerOperation":"All"}`,
		`{"id":"n","body":"syntax error (("}`, `{"id":"n","body":""}`, `{"id":"n","body":1}`, `{"id":"n","body":null}`, `{"id":"n"}`,
		`{"id":"n","body":"` + strings.Repeat("x", 300000) + `"}`, `{"id":"n","body":"function () { while (true) {} }"}`,
		`{"id":"n","body":"\ud800"}`, "{\"id\":\"n\",\"body\":\"function () { return '\xff'; }\"}", `{"id":"n","body":{"f":1}}`,
		`{"id":"n","body":"function () {}","triggerType":"Sometimes","triggerOperation":"All"}`,
		`{"id":"n","body":"function () {}","triggerType":"pre","triggerOperation":"upsert"}`, `{"id":"n","body":"function () {}","triggerType":1}`,
		`{"id":"a/b","body":"function () {}"}`, `{"id":"","body":"function () {}"}`, `{"id":"` + strings.Repeat("n", 300) + `","body":"function () {}"}`,
		`{"id":"n","id":"m","body":"function () {}"}`, `{"id":"n","body":"function () {}","body":2}`,
		`{"id":"n","body":"function () {}","_rid":"forged","_etag":"forged","_ts":"x"}`,
	}
	for kind := range uint8(len(scriptPaths)) {
		for _, b := range append(append([]string{}, bodies...), hostileJSON...) {
			f.Add(kind, false, []byte(b))
			f.Add(kind, true, []byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, replace bool, body []byte) {
		sp := scriptPaths[int(kind)%len(scriptPaths)]
		method, path := http.MethodPost, sp.feed
		if replace {
			method, path = http.MethodPut, sp.item
		}
		what := method + " " + path + " " + string(truncate(body))
		w, _ := s.send(t, what, true, method, path, body, nil)
		if w.Code >= 300 {
			return
		}
		defer s.reset(t)
		var answered struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &answered); err != nil {
			t.Fatalf("%s answered %s: %v", what, w.Body, err)
		}
		ct, _ := s.e.Container("db", "c")
		sc, err := ct.ReadScript(sp.kind, answered.ID)
		if err != nil {
			t.Fatalf("%s answered %s, but it is not there: %v", what, w.Body, err)
		}
		if stored, _ := json.Marshal(scriptJSON(sc)); !bytes.Equal(stored, w.Body.Bytes()) || w.Header().Get("Etag") != quoted(sc.ETag) {
			t.Fatalf("%s answered\n%s\nbut stored\n%s", what, w.Body, stored)
		}
	})
}

// FuzzProcedureArgs sends argument arrays to stored procedures: "echo", which answers its
// arguments, and "write", which creates the item write(id) names and then fails when its
// second argument is true. A refusal, including a procedure that threw, changes nothing; echo
// answers what it was given.
func FuzzProcedureArgs(f *testing.F) {
	s := newFuzzServer(f)
	for _, b := range []string{
		`["a",1,true,null,{"x":[1,2]}]`, ` [ ] `, `[1.5e300,-0,0.1]`, `[9007199254740993]`, `["\u00e9\ud83d\ude00"]`,
		`[{"a":1,"a":2}]`, `[{"__proto__":{"x":1}}]`, `[{"constructor":1,"toString":2}]`, `[[[[[[]]]]]]`,
		`[` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `]`, `[` + strings.Repeat("1,", 100000) + `1]`,
		`["` + strings.Repeat("s", 1<<20) + `"]`, `[1e400]`, `[-1e400]`, `[` + strings.Repeat("9", 400) + `]`, `[1e-400]`,
		`["\ud800"]`, `["\udc00\ud800"]`, "[\"\xff\xfe\"]", "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]", "[\"\xf0\x9f\x98\"]",
		"\xef\xbb\xbf[1]", `[1,]`, `[1`, `{"0":1}`, `"x"`, `1`, `null`, ``,
	} {
		f.Add(false, []byte(b))
	}
	for _, b := range []string{`["w1"]`, `["w1",true]`, `["a"]`, `["w1",false,1]`, `[{"toString":"x"}]`, `[1e400]`, `[]`, `[null,true]`} {
		f.Add(true, []byte(b))
	}
	f.Fuzz(func(t *testing.T, write bool, args []byte) {
		path := "/dbs/db/colls/c/sprocs/echo"
		if write {
			path = "/dbs/db/colls/c/sprocs/write"
		}
		hdr := map[string]string{"x-ms-documentdb-partitionkey": `["p1"]`}
		what := "POST " + path + " " + string(truncate(args))
		w, _ := s.send(t, what, write, http.MethodPost, path, args, hdr)
		if write {
			if w.Code < 300 {
				s.reset(t)
			}
			return
		}
		sent, err := value.Parse(args)
		if w.Code >= 300 || err != nil || !finiteValue(sent) {
			return // JSON has no Infinity: a procedure sees 1e400 as one and answers null
		}
		got, err := value.Parse(w.Body.Bytes())
		if err != nil || !value.Equal(got, sent) {
			t.Fatalf("%s answered %s (%v)", what, truncate(w.Body.Bytes()), err)
		}
	})
}

// finiteValue reports whether every number in v is finite.
func finiteValue(v value.Value) bool {
	switch v.Kind() {
	case value.Number:
		return !math.IsInf(v.Num(), 0)
	case value.Array:
		for _, e := range v.Elems() {
			if !finiteValue(e) {
				return false
			}
		}
	case value.Object:
		for _, m := range v.Members() {
			if !finiteValue(m.Val) {
				return false
			}
		}
	}
	return true
}
