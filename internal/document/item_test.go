package document

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

func TestParseExtractsIDAndKeys(t *testing.T) {
	body := []byte(` {"a":{"b":[1,{"x":"}"}],"c":"deep"},"id":"it\u00e9m","n":-1.5e2,"_rid":"old","t":true, "z":null}`)
	// An array or object at a key path is filed under the undefined key, as a missing value.
	it, key, err := Parse(body, [][]string{{"a", "c"}, {"n"}, {"t"}, {"z"}, {"missing"}, {"a", "b"}, {"a"}})
	if err != nil {
		t.Fatal(err)
	}
	want := epk.Key{epk.String("deep"), epk.Number(-150), epk.Bool(true), epk.Null(), epk.Undefined(), epk.Undefined(), epk.Undefined()}
	for i := range want {
		if key[i] != want[i] {
			t.Errorf("key[%d] = %+v, want %+v", i, key[i], want[i])
		}
	}
	if it.ID != "itém" {
		t.Errorf("id %q", it.ID)
	}
	out := it.Stamp(nil, System{RID: "R", Self: "S", ETag: "E", TS: 7})
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("stamped item is not JSON: %v: %s", err, out)
	}
	if m["_rid"] != "R" || m["_etag"] != `"E"` || m["_ts"] != 7.0 || m["_attachments"] != "attachments/" || m["n"] != -150.0 {
		t.Errorf("stamped item: %s", out)
	}
	if strings.Count(string(out), "_rid") != 1 {
		t.Errorf("client's _rid kept: %s", out)
	}
	if len(out) > it.StampedSize(System{RID: "R", Self: "S", ETag: "E", TS: 7}) {
		t.Errorf("StampedSize underestimates: %d > %d", len(out), it.StampedSize(System{RID: "R", Self: "S", ETag: "E", TS: 7}))
	}
}

// Item ids may be up to 1,023 bytes, as in Cosmos; database and container ids 255 characters.
func TestItemIDLength(t *testing.T) {
	if _, _, err := Parse([]byte(`{"id":"`+strings.Repeat("é", 511)+`x"}`), nil); err != nil {
		t.Fatalf("a 1,023-byte id: %v", err)
	}
	if err := ValidateID(strings.Repeat("x", 256)); !errors.Is(err, fault.BadRequest) {
		t.Fatalf("a 256-character resource id: %v", err)
	}
}

func TestParseRefusals(t *testing.T) {
	for body, st := range map[string]fault.Kind{
		`{"id":"a"`:    fault.BadRequest,
		`"str"`:        fault.BadRequest,
		`{"id":7}`:     fault.BadRequest,
		`{"x":1}`:      fault.BadRequest,
		`{"id":""}`:    fault.BadRequest,
		`{"id":"a/b"}`: fault.BadRequest,
		`{"id":"` + strings.Repeat("x", 1024) + `"}`:          fault.BadRequest,
		`{"id":"a","pk":"` + strings.Repeat("k", 2100) + `"}`: fault.BadRequest,
		`{"id":"a","n":1e400}`:                                fault.BadRequest,
	} {
		_, _, err := Parse([]byte(body), [][]string{{"pk"}})
		if !errors.Is(err, st) {
			t.Errorf("%.40s: got %v, want %v", body, err, st)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"id":"a","pk":{"x":[1,"]"]},"_ts":1}`))
	f.Add([]byte(`{"id":"\u0000","pk":1e400}`))
	f.Add([]byte("{\"id\":\"\xff\",\"p\\u006b\":{\"\xffx\":1,\"x\":\"\\ud800\\u0041\"}}"))
	f.Fuzz(func(t *testing.T, body []byte) {
		it, key, err := Parse(body, [][]string{{"pk"}, {"pk", "x"}})
		if err != nil {
			return
		}
		// The scanner decodes strings as the parser did: id, names and values alike.
		if got := it.Value.Get("id").Str(); it.ID != got {
			t.Fatalf("%q: id %q, parsed %q", body, it.ID, got)
		}
		for i, v := range []value.Value{it.Value.Get("pk"), it.Value.Get("pk").Get("x")} {
			if v.Kind() == value.String && key[i] != epk.String(v.Str()) {
				t.Fatalf("%q: key[%d] = %+v, parsed %q", body, i, key[i], v.Str())
			}
		}
		out := it.Stamp(nil, System{RID: "r", Self: "s", ETag: "e", TS: 1})
		if !json.Valid(out) {
			t.Fatalf("stamping %q gave invalid JSON %q", body, out)
		}
	})
}

// Strings the scanner finds decode as value.Parse decodes them, invalid UTF-8 included; they
// were once kept as raw bytes when they had no escapes.
func TestParseDecodesStringsAsTheParser(t *testing.T) {
	body := []byte("{\"id\":\"a\xffb\",\"p\\u006b\":{\"\xffx\":\"\\ud800\\u0041\\udc00\\ud800\"}}")
	it, key, err := Parse(body, [][]string{{"pk", "\uFFFDx"}})
	if err != nil {
		t.Fatal(err)
	}
	if it.ID != "a\uFFFDb" || len(key) != 1 || key[0] != epk.String("\uFFFDA\uFFFD\uFFFD") {
		t.Errorf("id %q, key %+v", it.ID, key)
	}
}

// Valid JSON nested beyond what the index walks is refused as such, not as invalid JSON.
func TestParseRefusesDeepNesting(t *testing.T) {
	body := `{"id":"a","x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`
	_, _, err := Parse([]byte(body), [][]string{{"pk"}})
	if !errors.Is(err, fault.BadRequest) || !strings.Contains(err.Error(), "too deeply") {
		t.Fatalf("got %v, want a 400 saying the item nests too deeply", err)
	}
}

// What Stamp keeps of a body is its members exactly as sent, whatever white space surrounds
// them, without the system properties a client sent back.
func TestStampKeepsTheMembersAsSent(t *testing.T) {
	sys := System{RID: "R", Self: "S", ETag: "E", TS: 7}
	tail := `"_rid":"R","_self":"S","_etag":"\"E\"","_attachments":"attachments/","_ts":7}`
	for body, want := range map[string]string{
		`{"id":"a"}`: `{"id":"a",` + tail,
		" \n{ \"id\" : \"a\" ,\t\"n\":[1, 2] }\n ": `{"id" : "a" ,` + "\t" + `"n":[1, 2],` + tail,
		`{"_etag":"x","id":"a","_ts":1}`:           `{"id":"a",` + tail,
		`{"id":"a","_self":"x","n":1}`:             `{"id":"a","n":1,` + tail,
	} {
		it, _, err := Parse([]byte(body), nil)
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if got := string(it.Stamp(nil, sys)); got != want {
			t.Errorf("%q stamped as %s, want %s", body, got, want)
		}
	}
}
