package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// The census's families of hostile requests (see census_test.go). Each case names the answer
// Cosmos gives; where Cosmos documents none, the answer a client can act on (400 for a request
// that is wrong, 404 for what does not exist, 412 for a failed condition).

const (
	census   = "/dbs/census"
	coll     = census + "/colls/c"
	docs     = coll + "/docs"
	keep     = docs + "/keep"
	sprocs   = coll + "/sprocs"
	staleTag = `"00000000-0000-0000-0000-000000000000"`
)

// censusIDs are the ids the cases need that the server hands out.
type censusIDs struct {
	offerC, offerShared string            // offers of container c and of database shared
	selfC, ridC         string            // container c's _self and _rid
	selfShared          string            // database shared's _self
	queryToken          string            // a continuation token of a query over c
	etags               map[string]string // the etag of each resource read by path
}

func censusIDsOf(t *testing.T, s *server) censusIDs {
	t.Helper()
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	var ids censusIDs
	_, _, b := c.do(t, "GET", "/offers", nil, nil)
	var offers struct {
		Offers []struct{ ID, Resource, OfferResourceID string }
	}
	if err := json.Unmarshal(b, &offers); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		path   string
		self   *string
		rid    *string
		offers *string
	}{{coll, &ids.selfC, &ids.ridC, &ids.offerC}, {"/dbs/shared", &ids.selfShared, new(string), &ids.offerShared}} {
		_, _, b := c.do(t, "GET", p.path, nil, nil)
		var m map[string]any
		json.Unmarshal(b, &m)
		*p.self, *p.rid = m["_self"].(string), m["_rid"].(string)
		for _, o := range offers.Offers {
			if o.Resource == *p.self {
				*p.offers = o.ID
			}
		}
		if *p.offers == "" {
			t.Fatalf("no offer for %s in %s", p.path, b)
		}
	}
	ids.etags = map[string]string{}
	for _, p := range []string{census, coll, sprocs + "/echo", census + "/users/alice", "/offers/" + ids.offerC + "/"} {
		code, hdr, b := c.do(t, "GET", p, nil, nil)
		if code != 200 || hdr.Get("etag") == "" {
			t.Fatalf("GET %s: %d, etag %q: %s", p, code, hdr.Get("etag"), b)
		}
		ids.etags[p] = hdr.Get("etag")
	}
	_, hdr, b := c.do(t, "POST", docs, []byte(`{"query":"SELECT * FROM c"}`), map[string]string{
		"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true",
		"x-ms-documentdb-query-enablecrosspartition": "true", "x-ms-max-item-count": "2",
	})
	if ids.queryToken = hdr.Get("x-ms-continuation"); ids.queryToken == "" {
		t.Fatalf("the query gave no continuation: %s", b)
	}
	return ids
}

// h builds a header list.
func h(kv ...string) [][2]string {
	var out [][2]string
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, [2]string{kv[i], kv[i+1]})
	}
	return out
}

var (
	pkP     = h("x-ms-documentdb-partitionkey", `["p"]`)
	queryH  = h("Content-Type", "application/query+json", "x-ms-documentdb-isquery", "true", "x-ms-documentdb-partitionkey", `["p"]`)
	batchH  = h("x-ms-cosmos-is-batch-request", "True", "x-ms-cosmos-batch-atomic", "True", "x-ms-documentdb-partitionkey", `["p"]`)
	upsertH = h("x-ms-documentdb-is-upsert", "true", "x-ms-documentdb-partitionkey", `["p"]`)
)

func with(a [][2]string, kv ...string) [][2]string {
	return append(append([][2]string{}, a...), h(kv...)...)
}

// badUTF8 are byte sequences that are not UTF-8.
var badUTF8 = []struct{ name, b string }{
	{"lone 0xff", "\xff"}, {"lone 0xfe", "\xfe"}, {"lone continuation byte", "\x80"},
	{"overlong slash", "\xc0\xaf"}, {"overlong 3-byte", "\xe0\x80\xaf"}, {"overlong 4-byte", "\xf0\x80\x80\xaf"},
	{"high surrogate", "\xed\xa0\x80"}, {"low surrogate", "\xed\xbf\xbf"}, {"past U+10FFFF", "\xf4\x90\x80\x80"},
	{"truncated 3-byte", "\xe2\x82x"}, {"truncated at the end of a string", "\xc3"}, {"5-byte form", "\xf8\x88\x80\x80\x80"},
}

// badNumbers are JSON numbers past the range of a double.
var badNumbers = []string{"1e400", "-1e400", "1e309", strings.Repeat("9", 400), "-" + strings.Repeat("9", 400), "1.5e99999"}

func censusCases(ids censusIDs) []censusCase {
	var cs []censusCase
	add := func(family, name, method, path, body string, status int, headers ...[2]string) *censusCase {
		cs = append(cs, censusCase{family: family, name: name, method: method, path: path, body: []byte(body), status: status, headers: headers})
		return &cs[len(cs)-1]
	}

	// auth: who may ask.
	read := func(name string, signer func(*http.Request, string, string), status int) {
		add("auth", name, "GET", keep, "", status, pkP...).signer = signer
	}
	read("no Authorization", signRaw(""), 401)
	read("wrong key", signWith("bm90IHRoZSBrZXk=", time.Now), 401)
	read("signature not base64", signRaw("type%3Dmaster%26ver%3D1.0%26sig%3D%21%21%21"), 401)
	read("signature too long", signRaw("type%3Dmaster%26ver%3D1.0%26sig%3D"+strings.Repeat("QUFB", 40)), 401)
	read("signature empty", signRaw("type%3Dmaster%26ver%3D1.0%26sig%3D"), 401)
	read("AAD token unchecked", signRaw("type=aad&ver=1.0&sig=eyJhbGciOiJub25lIn0.e30."), 401)
	read("resource token garbage", signRaw("type%3Dresource%26ver%3D1.0%26sig%3Dgarbage"), 401)
	read("unknown auth type", signRaw("type%3Dbasic%26ver%3D1.0%26sig%3DQUFB"), 401)
	read("malformed escapes", signRaw("%zz%zz"), 401)
	read("date 20 minutes ago", signWith(emulatorKey, func() time.Time { return time.Now().Add(-20 * time.Minute) }), 403)
	read("date 20 minutes ahead", signWith(emulatorKey, func() time.Time { return time.Now().Add(20 * time.Minute) }), 403)
	now := time.Now().UTC()
	read("RFC 850 date", signDated(now.Format(time.RFC850)), 401)
	read("asctime date", signDated(now.Format(time.ANSIC)), 401)
	read("ISO 8601 date", signDated(now.Format(time.RFC3339)), 401)
	read("RFC 1123 date in UTC rather than GMT", signDated(now.Format("Mon, 02 Jan 2006 15:04:05 UTC")), 401)
	read("empty date", signDated(""), 401)
	add("auth", "signed for another verb", "DELETE", keep, "", 401, pkP...).signer = func(r *http.Request, typ, link string) {
		r.Method = "GET"
		signWith(emulatorKey, time.Now)(r, typ, link)
		r.Method = "DELETE"
	}
	add("auth", "signed for another resource", "DELETE", keep, "", 401, pkP...).signer = func(r *http.Request, typ, _ string) {
		signWith(emulatorKey, time.Now)(r, typ, "dbs/census/colls/c/docs/item1")
	}
	ro := signWith(censusReadOnlyKey, time.Now)
	for _, w := range []struct{ name, method, path, body string }{
		{"create item", "POST", docs, `{"id":"ro","pk":"p"}`},
		{"replace item", "PUT", keep, `{"id":"keep","pk":"p"}`},
		{"delete item", "DELETE", keep, ""},
		{"patch item", "PATCH", keep, `{"operations":[{"op":"set","path":"/n","value":1}]}`},
		{"create database", "POST", "/dbs", `{"id":"ro"}`},
		{"delete database", "DELETE", census, ""},
		{"create container", "POST", census + "/colls", `{"id":"ro","partitionKey":{"paths":["/pk"]}}`},
		{"replace container", "PUT", coll, `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`},
		{"delete container", "DELETE", coll, ""},
		{"replace offer", "PUT", "/offers/" + ids.offerC + "/", `{"content":{"offerThroughput":500}}`},
		{"create procedure", "POST", sprocs, `{"id":"ro","body":"function(){}"}`},
		{"execute procedure", "POST", sprocs + "/echo", `[1]`},
		{"delete procedure", "DELETE", sprocs + "/echo", ""},
	} {
		add("auth", "read-only key: "+w.name, w.method, w.path, w.body, 401, pkP...).signer = ro
	}
	add("auth", "read-only key: upsert", "POST", docs, `{"id":"keep","pk":"p"}`, 401, upsertH...).signer = ro
	add("auth", "read-only key: batch", "POST", docs, `[{"operationType":"Create","resourceBody":{"id":"ro","pk":"p"}}]`, 401, batchH...).signer = ro

	// headers: the envelope.
	for _, v := range []string{"garbage", "2014-08-21", "2021-13-45", "", "1.0", "2020-07-15; DROP"} {
		add("headers", "x-ms-version "+fmt.Sprintf("%q", v), "GET", keep, "", 400, with(pkP, "x-ms-version", v)...)
	}
	add("headers", "two partition keys", "GET", keep, "", 400, h("x-ms-documentdb-partitionkey", `["q"]`, "x-ms-documentdb-partitionkey", `["p"]`)...)
	add("headers", "the same partition key twice", "GET", keep, "", 400, h("x-ms-documentdb-partitionkey", `["p"]`, "x-ms-documentdb-partitionkey", `["p"]`)...)
	add("headers", "two partition keys on a write", "DELETE", keep, "", 400, h("x-ms-documentdb-partitionkey", `["q"]`, "x-ms-documentdb-partitionkey", `["p"]`)...)
	add("headers", "two If-Match", "DELETE", keep, "", 400, with(pkP, "If-Match", staleTag, "If-Match", "*")...)
	add("headers", "two consistency levels", "GET", keep, "", 400, with(pkP, "x-ms-consistency-level", "Eventual", "x-ms-consistency-level", "Session")...)
	add("headers", "two continuations", "GET", docs, "", 400, h("x-ms-continuation", "a", "x-ms-continuation", "b")...)
	add("headers", "two upsert flags", "POST", docs, `{"id":"keep","pk":"p"}`, 400, with(upsertH, "x-ms-documentdb-is-upsert", "false")...)
	for _, level := range []string{"Strong", "BoundedStaleness", "garbage", "session,strong"} {
		add("headers", "consistency "+level, "GET", keep, "", 400, with(pkP, "x-ms-consistency-level", level)...)
	}
	for _, tok := range []string{"abc", "0:-1#", "0:x#1", ":", "0:-1#1#x", "-1:-1#5"} {
		add("headers", "session token "+tok, "GET", keep, "", 400, with(pkP, "x-ms-session-token", tok)...)
	}
	for _, n := range []string{"0", "-2", "abc", "1.5", "99999999999999999999"} {
		add("headers", "max item count "+n, "GET", docs, "", 400, h("x-ms-max-item-count", n)...)
	}
	for _, pk := range []string{`p`, `[`, `["p"`, `["p","q"]`, `[{"a":1}]`, `["p"]x`, `[1e400]`, `"p"`, `{}`, `[["p"]]`} {
		add("headers", "partition key "+pk, "GET", keep, "", 400, h("x-ms-documentdb-partitionkey", pk)...)
	}
	for _, v := range []string{"lots", "-400", "1.5", "0", "400x", "99999999999999999999"} {
		add("headers", "offer throughput "+v, "POST", "/dbs", `{"id":"hdr"}`, 400, h("x-ms-offer-throughput", v)...)
	}
	add("headers", "autoscale settings not JSON", "POST", "/dbs", `{"id":"hdr"}`, 400, h("x-ms-cosmos-offer-autopilot-settings", "{max")...)
	add("headers", "both throughput kinds", "POST", "/dbs", `{"id":"hdr"}`, 400, h("x-ms-offer-throughput", "400", "x-ms-cosmos-offer-autopilot-settings", `{"maxThroughput":4000}`)...)
	add("headers", "indexing directive garbage", "POST", docs, `{"id":"hdr","pk":"p"}`, 400, with(pkP, "x-ms-indexing-directive", "Sometimes")...)
	add("headers", "change feed mode garbage", "GET", docs, "", 400, h("A-IM", "Everything")...)
	add("headers", "change feed etag garbage", "GET", docs, "", 400, h("A-IM", "Incremental Feed", "If-None-Match", `"abc"`)...)
	add("headers", "change feed date garbage", "GET", docs, "", 400, h("A-IM", "Incremental Feed", "If-Modified-Since", "yesterday")...)
	add("headers", "two pre-triggers", "POST", docs, `{"id":"hdr","pk":"p"}`, 400, with(pkP, "x-ms-documentdb-pre-trigger-include", "a,b")...)

	// paths
	for _, p := range []string{"///dbs/census", "/dbs//census", "/dbs/census//colls", "/dbs/census/colls/c/docs//keep",
		"///", "/dbs/census/colls/c/docs/keep//"} {
		add("paths", "GET "+p, "GET", p, "", 400, pkP...)
	}
	for _, p := range []string{"/dbs/%zz", keep + "%2", docs + "/k%ZZ"} {
		add("paths", "GET "+p, "GET", p, "", 400, pkP...).byHTTP = true
	}
	for _, p := range []string{keep + "/extra", census + "/unknown", coll + "/unknown/x", "/./dbs", "/dbs/no-such-db",
		census + "/colls/nope/docs/keep", "/offers/AAAAAA==/", docs + "/missing", sprocs + "/missing"} {
		add("paths", "GET "+p, "GET", p, "", 404, pkP...)
	}
	add("paths", "POST to an item", "POST", keep, `{}`, 405, pkP...)
	add("paths", "PUT to the databases", "PUT", "/dbs", `{}`, 405)
	add("paths", "DELETE the items", "DELETE", docs, "", 405, pkP...)
	add("paths", "DELETE an offer", "DELETE", "/offers/"+ids.offerC+"/", "", 405)

	// preconditions: If-Match on every resource.
	for _, tag := range []string{staleTag, `"bogus"`, `W/"x"`} {
		pre := func(name, method, path, body string, headers ...[2]string) {
			add("preconditions", name+" If-Match "+tag, method, path, body, 412, with(headers, "If-Match", tag)...)
		}
		pre("delete database", "DELETE", census, "")
		pre("delete shared database", "DELETE", "/dbs/shared", "")
		pre("delete container", "DELETE", coll, "")
		pre("replace container", "PUT", coll, `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2},"defaultTtl":5,"uniqueKeyPolicy":{"uniqueKeys":[{"paths":["/email"]}]}}`)
		pre("replace offer", "PUT", "/offers/"+ids.offerC+"/", `{"content":{"offerThroughput":500}}`)
		pre("replace shared offer", "PUT", "/offers/"+ids.offerShared+"/", `{"content":{"offerThroughput":500}}`)
		pre("replace procedure", "PUT", sprocs+"/echo", `{"id":"echo","body":"function () {}"}`)
		pre("delete procedure", "DELETE", sprocs+"/echo", "")
		pre("delete trigger", "DELETE", coll+"/triggers/preThrow", "")
		pre("delete function", "DELETE", coll+"/udfs/double", "")
		pre("replace item", "PUT", keep, `{"id":"keep","pk":"p","n":0}`, pkP...)
		pre("delete item", "DELETE", keep, "", pkP...)
		pre("patch item", "PATCH", keep, `{"operations":[{"op":"set","path":"/n","value":0}]}`, pkP...)
		pre("upsert item", "POST", docs, `{"id":"keep","pk":"p","n":0}`, upsertH...)
		pre("replace user", "PUT", census+"/users/alice", `{"id":"alice"}`)
		pre("delete user", "DELETE", census+"/users/alice", "")
		pre("replace permission", "PUT", census+"/users/alice/permissions/onlyP", `{"id":"onlyP","permissionMode":"All","resource":"dbs/census/colls/c"}`)
		pre("delete permission", "DELETE", census+"/users/alice/permissions/onlyP", "")
	}
	for _, p := range slices.Sorted(maps.Keys(ids.etags)) {
		tag := ids.etags[p]
		add("preconditions", "read "+p+" If-None-Match its etag", "GET", p, "", 304, h("If-None-Match", tag)...)
		add("preconditions", "read "+p+" If-None-Match a stale etag", "GET", p, "", 200, h("If-None-Match", staleTag)...)
	}
	add("preconditions", "batch operation with a stale etag", "POST", docs,
		`[{"operationType":"Upsert","resourceBody":{"id":"new","pk":"p"}},{"operationType":"Replace","id":"keep","ifMatch":`+staleTag+`,"resourceBody":{"id":"keep","pk":"p"}}]`, 207, batchH...)

	// utf8: bodies that are not UTF-8.
	for _, b := range badUTF8 {
		add("utf8", "create, in a value: "+b.name, "POST", docs, `{"id":"u8","pk":"p","s":"a`+b.b+`"}`, 400, pkP...)
		add("utf8", "create, in a key: "+b.name, "POST", docs, `{"id":"u8","pk":"p","k`+b.b+`":1}`, 400, pkP...)
		add("utf8", "create, in the id: "+b.name, "POST", docs, `{"id":"u8`+b.b+`","pk":"p"}`, 400, pkP...)
		add("utf8", "upsert: "+b.name, "POST", docs, `{"id":"keep","pk":"p","s":"`+b.b+`"}`, 400, upsertH...)
		add("utf8", "replace: "+b.name, "PUT", keep, `{"id":"keep","pk":"p","s":"`+b.b+`"}`, 400, pkP...)
	}
	bad := "\xc0\xaf"
	for _, u := range []struct {
		name, method, path, body string
		headers                  [][2]string
	}{
		{"patch value", "PATCH", keep, `{"operations":[{"op":"set","path":"/s","value":"` + bad + `"}]}`, pkP},
		{"patch path", "PATCH", keep, `{"operations":[{"op":"set","path":"/s` + bad + `","value":1}]}`, pkP},
		{"batch", "POST", docs, `[{"operationType":"Read","id":"u8` + bad + `"}]`, batchH},
		{"query text", "POST", docs, `{"query":"SELECT * FROM c WHERE c.s = '` + bad + `'"}`, queryH},
		{"query parameter", "POST", docs, `{"query":"SELECT * FROM c WHERE c.s = @s","parameters":[{"name":"@s","value":"` + bad + `"}]}`, queryH},
		{"procedure argument", "POST", sprocs + "/echo", `["` + bad + `"]`, pkP},
		{"procedure body", "POST", sprocs, `{"id":"u8","body":"function () { return '` + bad + `'; }"}`, nil},
		{"trigger body", "POST", coll + "/triggers", `{"id":"u8","body":"function () { '` + bad + `'; }","triggerType":"Pre","triggerOperation":"All"}`, nil},
		{"container id", "POST", census + "/colls", `{"id":"u8` + bad + `","partitionKey":{"paths":["/pk"]}}`, nil},
		{"partition key path", "POST", census + "/colls", `{"id":"u8","partitionKey":{"paths":["/pk` + bad + `"]}}`, nil},
		{"database id", "POST", "/dbs", `{"id":"u8` + bad + `"}`, nil},
		{"offer", "PUT", "/offers/" + ids.offerC + "/", `{"resource":"` + bad + `","content":{"offerThroughput":500}}`, nil},
	} {
		add("utf8", u.name, u.method, u.path, u.body, 400, u.headers...)
	}

	// numbers past the range of a double.
	for _, n := range badNumbers {
		short := n
		if len(short) > 12 {
			short = short[:12] + "…"
		}
		add("numbers", "create "+short, "POST", docs, `{"id":"num","pk":"p","n":`+n+`}`, 400, pkP...)
		add("numbers", "create, nested "+short, "POST", docs, `{"id":"num","pk":"p","a":[1,{"b":[`+n+`]}]}`, 400, pkP...)
		add("numbers", "upsert "+short, "POST", docs, `{"id":"keep","pk":"p","n":`+n+`}`, 400, upsertH...)
		add("numbers", "replace "+short, "PUT", keep, `{"id":"keep","pk":"p","n":`+n+`}`, 400, pkP...)
		add("numbers", "patch "+short, "PATCH", keep, `{"operations":[{"op":"set","path":"/n","value":`+n+`}]}`, 400, pkP...)
		// An operation that cannot be applied fails the batch with 207, as a conflict would.
		add("numbers", "batch "+short, "POST", docs, `[{"operationType":"Create","resourceBody":{"id":"num","pk":"p","n":`+n+`}}]`, 207, batchH...)
		add("numbers", "procedure argument "+short, "POST", sprocs+"/echo", `[`+n+`]`, 400, pkP...)
		add("numbers", "query parameter "+short, "POST", docs, `{"query":"SELECT * FROM c WHERE c.n = @n","parameters":[{"name":"@n","value":`+n+`}]}`, 400, queryH...)
	}

	// json: bodies that are not JSON, or not the JSON asked for.
	for _, b := range []string{`{"id":"j","pk":"p",}`, `{'id':'j','pk':'p'}`, `{"id":"j","pk":"p","n":NaN}`, `Infinity`,
		`{"id":"j","pk":"p"} // comment`, "\xef\xbb\xbf{\"id\":\"j\",\"pk\":\"p\"}", ``, `null`, `42`, `{"id":"j","pk":"p"`,
		`{"id":"j","pk":"p","x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`, `["j"]`, `{"id":"j","pk":"p"}{}`} {
		add("json", "create "+fmt.Sprintf("%.30q", b), "POST", docs, b, 400, pkP...)
	}
	for _, b := range []string{``, `null`, `{"id":"j","partitionKey":`, `[]`, "\xef\xbb\xbf{}"} {
		add("json", "container "+fmt.Sprintf("%q", b), "POST", census+"/colls", b, 400)
	}
	for _, b := range []string{``, `[]`, `{"content":`} {
		add("json", "offer "+fmt.Sprintf("%q", b), "PUT", "/offers/"+ids.offerC+"/", b, 400)
	}
	for _, b := range []string{``, `[]`, `{"query":5}`, `{"query":"SELECT * FROM c","parameters":{}}`, `{"query":"SELECT * FROM c","parameters":[{"name":5}]}`} {
		add("json", "query "+fmt.Sprintf("%q", b), "POST", docs, b, 400, queryH...)
	}
	for _, b := range []string{`{}`, `[`, `null`, `[5]`} {
		add("json", "batch "+fmt.Sprintf("%q", b), "POST", docs, b, 400, batchH...)
	}
	for _, b := range []string{`{`, `{"operations":{}}`, `5`, `[{"op":"set"`} {
		add("json", "patch "+fmt.Sprintf("%q", b), "PATCH", keep, b, 400, pkP...)
	}
	for _, b := range []string{`{`, `{"a":1}`, `"x"`} {
		add("json", "procedure arguments "+fmt.Sprintf("%q", b), "POST", sprocs+"/echo", b, 400, pkP...)
	}

	// container definitions.
	createColl := func(name, body string, status int) {
		add("container", "create: "+name, "POST", census+"/colls", body, status)
	}
	pk := `"partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}`
	createColl("no id", `{`+pk+`}`, 400)
	createColl("empty id", `{"id":"",`+pk+`}`, 400)
	createColl("id with a slash", `{"id":"a/b",`+pk+`}`, 400)
	createColl("id with a hash", `{"id":"a#b",`+pk+`}`, 400)
	createColl("id of 256 characters", `{"id":"`+strings.Repeat("x", 256)+`",`+pk+`}`, 400)
	createColl("id a number", `{"id":5,`+pk+`}`, 400)
	createColl("existing id", `{"id":"c",`+pk+`}`, 409)
	for _, p := range []struct{ name, def string }{
		// No definition at all (null, or no paths) is a container without a partition key
		// (nokey_test.go); a system key is only ever the service's own.
		{"system key on another path", `{"paths":["/pk"],"systemKey":true}`},
		{"system key of version 2", `{"paths":["/_partitionKey"],"version":2,"systemKey":true}`}, {"paths not an array", `{"paths":"/pk"}`},
		{"path without a slash", `{"paths":["pk"]}`}, {"path a slash", `{"paths":["/"]}`}, {"path with a wildcard", `{"paths":["/a/*"]}`},
		{"four paths", `{"paths":["/a","/b","/c","/d"],"kind":"MultiHash","version":2}`},
		{"duplicate MultiHash paths", `{"paths":["/a","/a"],"kind":"MultiHash","version":2}`},
		{"duplicate MultiHash paths, three", `{"paths":["/a","/b","/a"],"kind":"MultiHash","version":2}`},
		{"kind Range", `{"paths":["/pk"],"kind":"Range"}`}, {"Hash with two paths", `{"paths":["/a","/b"],"kind":"Hash"}`},
		{"version 3", `{"paths":["/pk"],"version":3}`}, {"MultiHash version 1", `{"paths":["/a","/b"],"kind":"MultiHash","version":1}`},
		{"version a string", `{"paths":["/pk"],"version":"2"}`}, {"kind a number", `{"paths":["/pk"],"kind":1}`},
	} {
		createColl(p.name, `{"id":"bad","partitionKey":`+p.def+`}`, 400)
	}
	for _, ix := range []struct{ name, def string }{
		{"unknown indexing mode", `{"indexingMode":"sometimes"}`}, {"included paths not an array", `{"includedPaths":"/*"}`},
		{"excluded paths an object", `{"excludedPaths":{}}`}, {"path a number", `{"includedPaths":[{"path":5}]}`},
		{"composite index of one path", `{"compositeIndexes":[[{"path":"/a"}]]}`},
		{"composite index order up", `{"compositeIndexes":[[{"path":"/a","order":"up"},{"path":"/b"}]]}`},
		{"policy a string", `"consistent"`}, {"automatic a string", `{"automatic":"yes"}`},
		{"path without a slash", `{"includedPaths":[{"path":"a/*"}]}`},
	} {
		createColl("indexing: "+ix.name, `{"id":"bad",`+pk+`,"indexingPolicy":`+ix.def+`}`, 400)
	}
	for _, ttl := range []string{"0", "-2", "1.5", `"10"`, "true", "1e400", "2147483648", "[]"} {
		createColl("defaultTtl "+ttl, `{"id":"bad",`+pk+`,"defaultTtl":`+ttl+`}`, 400)
	}
	many := make([]string, 11)
	for i := range many {
		many[i] = fmt.Sprintf(`{"paths":["/u%d"]}`, i)
	}
	long := make([]string, 17)
	for i := range long {
		long[i] = fmt.Sprintf(`"/p%d"`, i)
	}
	for _, uk := range []struct{ name, def string }{
		{"path without a slash", `{"uniqueKeys":[{"paths":["email"]}]}`}, {"eleven keys", `{"uniqueKeys":[` + strings.Join(many, ",") + `]}`},
		{"keys not an array", `{"uniqueKeys":"x"}`}, {"a key without paths", `{"uniqueKeys":[{"paths":[]}]}`},
		{"a key of 17 paths", `{"uniqueKeys":[{"paths":[` + strings.Join(long, ",") + `]}]}`},
		{"a path with a wildcard", `{"uniqueKeys":[{"paths":["/a/*"]}]}`},
	} {
		createColl("unique keys: "+uk.name, `{"id":"bad",`+pk+`,"uniqueKeyPolicy":`+uk.def+`}`, 400)
	}
	replaceColl := func(name, body string, status int) {
		add("container", "replace: "+name, "PUT", coll, body, status)
	}
	uk := `"uniqueKeyPolicy":{"uniqueKeys":[{"paths":["/email"]}]}`
	replaceColl("without the partition key", `{"id":"c","defaultTtl":5}`, 400)
	replaceColl("with another path", `{"id":"c","partitionKey":{"paths":["/other"],"kind":"Hash","version":2}}`, 400)
	replaceColl("with another version", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":1}}`, 400)
	replaceColl("with another kind", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"MultiHash","version":2}}`, 400)
	replaceColl("with another id", `{"id":"d",`+pk+`}`, 400)
	replaceColl("with other unique keys", `{"id":"c",`+pk+`,"uniqueKeyPolicy":{"uniqueKeys":[{"paths":["/other"]}]}}`, 400)
	replaceColl("dropping the unique keys", `{"id":"c",`+pk+`,"uniqueKeyPolicy":{"uniqueKeys":[]}}`, 400)
	replaceColl("with defaultTtl 0", `{"id":"c",`+pk+`,`+uk+`,"defaultTtl":0}`, 400)
	replaceColl("with an invalid policy", `{"id":"c",`+pk+`,`+uk+`,"indexingPolicy":{"indexingMode":"sometimes"}}`, 400)
	add("container", "replace of a missing container", "PUT", census+"/colls/nope", `{"id":"nope",`+pk+`}`, 404)

	// offer definitions.
	replaceOffer := func(name, offer, body string, status int) {
		add("offer", name, "PUT", "/offers/"+offer+"/", body, status)
	}
	replaceOffer("another id", ids.offerC, `{"id":"`+ids.offerShared+`","content":{"offerThroughput":500}}`, 400)
	replaceOffer("another _rid", ids.offerC, `{"_rid":"`+ids.offerShared+`","content":{"offerThroughput":500}}`, 400)
	replaceOffer("the resource of another", ids.offerC, `{"resource":"`+ids.selfShared+`","content":{"offerThroughput":500}}`, 400)
	replaceOffer("the offerResourceId of another", ids.offerC, `{"offerResourceId":"xyz","content":{"offerThroughput":500}}`, 400)
	replaceOffer("the shared offer with the container's resource", ids.offerShared, `{"resource":"`+ids.selfC+`","content":{"offerThroughput":500}}`, 400)
	replaceOffer("no content", ids.offerC, `{"id":"`+ids.offerC+`"}`, 400)
	for _, content := range []string{`{"offerThroughput":100}`, `{"offerThroughput":450}`, `{"offerThroughput":-400}`, `{"offerThroughput":"400"}`,
		`{"offerThroughput":1.5}`, `{"offerThroughput":1e400}`, `{"offerAutopilotSettings":{"maxThroughput":999}}`,
		`{"offerAutopilotSettings":{"maxThroughput":1500}}`, `{"offerAutopilotSettings":{"maxThroughput":"4000"}}`, `"x"`, `{}`} {
		replaceOffer("content "+content, ids.offerC, `{"content":`+content+`}`, 400)
	}
	replaceOffer("an unknown offer", "AAAAAA==", `{"content":{"offerThroughput":500}}`, 404)

	// users and permissions
	perm := func(name, body string, status int, headers ...[2]string) {
		add("permissions", name, "POST", census+"/users/alice/permissions", body, status, headers...)
	}
	perm("an unknown mode", `{"id":"x","permissionMode":"Write","resource":"dbs/census/colls/c"}`, 400)
	perm("no resource", `{"id":"x","permissionMode":"Read"}`, 400)
	perm("a missing container", `{"id":"x","permissionMode":"Read","resource":"dbs/census/colls/nope"}`, 404)
	perm("a container of another database", `{"id":"x","permissionMode":"Read","resource":"dbs/shared/colls/s"}`, 400)
	perm("a partition key that is not one", `{"id":"x","permissionMode":"Read","resource":"dbs/census/colls/c","resourcePartitionKey":[{"a":1}]}`, 400)
	perm("an existing id", `{"id":"onlyP","permissionMode":"Read","resource":"dbs/census/colls/c"}`, 409)
	perm("an id with a slash", `{"id":"a/b","permissionMode":"Read","resource":"dbs/census/colls/c"}`, 400)
	for _, exp := range []string{"0", "9", "18001", "-5", "an hour"} {
		perm("expiry "+exp, `{"id":"x","permissionMode":"Read","resource":"dbs/census/colls/c"}`, 400, h("x-ms-documentdb-expiry-seconds", exp)...)
	}
	add("permissions", "a user with a slash", "POST", census+"/users", `{"id":"a/b"}`, 400)
	add("permissions", "an existing user", "POST", census+"/users", `{"id":"alice"}`, 409)
	add("permissions", "a user of a missing database", "POST", "/dbs/nope/users", `{"id":"bob"}`, 404)

	// limits
	big := strings.Repeat("x", 2<<20)
	add("limits", "item over 2 MB", "POST", docs, `{"id":"big","pk":"p","pad":"`+big+`"}`, 413, pkP...)
	add("limits", "container definition over 2 MB", "POST", census+"/colls", `{"id":"big",`+pk+`,"pad":"`+big+`"}`, 413)
	add("limits", "offer over 2 MB", "PUT", "/offers/"+ids.offerC+"/", `{"content":{"offerThroughput":500},"pad":"`+big+`"}`, 413)
	add("limits", "query body over 2 MB", "POST", docs, `{"query":"SELECT * FROM c","pad":"`+big+`"}`, 413, queryH...)
	add("limits", "database over 2 MB", "POST", "/dbs", `{"id":"big","pad":"`+big+`"}`, 413)
	add("limits", "procedure over 2 MB", "POST", sprocs, `{"id":"big","body":"function(){}","pad":"`+big+`"}`, 413)
	add("limits", "procedure arguments over 2 MB", "POST", sprocs+"/echo", `["`+big+`"]`, 413, pkP...)
	add("limits", "batch over 2 MB", "POST", docs, `[{"operationType":"Create","resourceBody":{"id":"big","pk":"p","pad":"`+big+`"}}]`, 413, batchH...)
	add("limits", "patch over 2 MB", "PATCH", keep, `{"operations":[{"op":"set","path":"/pad","value":"`+big+`"}]}`, 413, pkP...)
	add("limits", "procedure body over 256 KB", "POST", sprocs, `{"id":"big","body":"function(){ /*`+strings.Repeat("x", 300<<10)+`*/ }"}`, 400)
	add("limits", "query text over 512 KB", "POST", docs, `{"query":"SELECT * FROM c WHERE c.n IN (`+strings.Repeat("1,", 300<<10)+`1)"}`, 400, queryH...)
	// Ids up to 1,023 bytes are an item's right: written, read and deleted (in that order).
	longID := strings.Repeat("x", 1023)
	add("limits", "item id of 1,023 bytes: create", "POST", docs, `{"id":"`+longID+`","pk":"p"}`, 201, pkP...).mayChange = true
	add("limits", "item id of 1,023 bytes: read", "GET", docs+"/"+longID, "", 200, pkP...)
	add("limits", "item id of 1,023 bytes: delete", "DELETE", docs+"/"+longID, "", 204, pkP...).mayChange = true
	add("limits", "item id of 1,024 bytes", "POST", docs, `{"id":"`+strings.Repeat("x", 1024)+`","pk":"p"}`, 400, pkP...)
	add("limits", "partition key over 2 KB", "POST", docs, `{"id":"lk","pk":"`+strings.Repeat("k", 2100)+`"}`, 400, h("x-ms-documentdb-partitionkey", `["`+strings.Repeat("k", 2100)+`"]`)...)
	add("limits", "eleven patch operations", "PATCH", keep, `{"operations":[`+strings.TrimSuffix(strings.Repeat(`{"op":"set","path":"/n","value":1},`, 11), ",")+`]}`, 400, pkP...)
	add("limits", "101 batch operations", "POST", docs, `[`+strings.TrimSuffix(strings.Repeat(`{"operationType":"Read","id":"keep"},`, 101), ",")+`]`, 400, batchH...)
	for _, p := range []struct{ name, sql, params string }{
		{"TOP a string", "SELECT TOP @n * FROM c", `[{"name":"@n","value":"5"}]`},
		{"TOP a fraction", "SELECT TOP @n * FROM c", `[{"name":"@n","value":1.5}]`},
		{"TOP negative", "SELECT TOP @n * FROM c", `[{"name":"@n","value":-1}]`},
		{"TOP null", "SELECT TOP @n * FROM c", `[{"name":"@n","value":null}]`},
		{"TOP an array", "SELECT TOP @n * FROM c", `[{"name":"@n","value":[5]}]`},
		{"TOP without a value", "SELECT TOP @n * FROM c", `[]`},
		{"LIMIT a string", "SELECT * FROM c OFFSET @o LIMIT @l", `[{"name":"@o","value":0},{"name":"@l","value":"2"}]`},
		{"OFFSET negative", "SELECT * FROM c OFFSET @o LIMIT @l", `[{"name":"@o","value":-3},{"name":"@l","value":2}]`},
		{"OFFSET an object", "SELECT * FROM c OFFSET @o LIMIT @l", `[{"name":"@o","value":{}},{"name":"@l","value":2}]`},
	} {
		add("limits", p.name, "POST", docs, `{"query":"`+p.sql+`","parameters":`+p.params+`}`, 400, queryH...)
	}

	// batch
	batch := func(name, body string, status int, headers ...[2]string) {
		if headers == nil {
			headers = batchH
		}
		add("batch", name, "POST", docs, body, status, headers...)
	}
	batch("an object", `{}`, 400)
	batch("no operations", `[]`, 400)
	batch("unknown operation", `[{"operationType":"Explode","id":"keep"}]`, 400)
	batch("read without an id", `[{"operationType":"Read"}]`, 207)
	batch("create of a string", `[{"operationType":"Create","resourceBody":"x"}]`, 207)
	batch("create in another partition", `[{"operationType":"Create","resourceBody":{"id":"b","pk":"q"}}]`, 207)
	batch("create with a bad id", `[{"operationType":"Create","resourceBody":{"id":"a/b","pk":"p"}}]`, 207)
	batch("without a partition key", `[{"operationType":"Read","id":"keep"}]`, 400, h("x-ms-cosmos-is-batch-request", "True", "x-ms-cosmos-batch-atomic", "True")...)
	batch("create of an existing item after a write", `[{"operationType":"Upsert","resourceBody":{"id":"new","pk":"p"}},{"operationType":"Create","resourceBody":{"id":"keep","pk":"p"}}]`, 207)
	batch("replace of a missing item after a write", `[{"operationType":"Create","resourceBody":{"id":"new","pk":"p"}},{"operationType":"Replace","id":"gone","resourceBody":{"id":"gone","pk":"p"}}]`, 207)
	batch("delete of a missing item after a write", `[{"operationType":"Create","resourceBody":{"id":"new","pk":"p"}},{"operationType":"Delete","id":"gone"}]`, 207)
	batch("patch that fails after a write", `[{"operationType":"Create","resourceBody":{"id":"new","pk":"p"}},{"operationType":"Patch","id":"keep","resourceBody":{"operations":[{"op":"incr","path":"/email","value":1}]}}]`, 207)
	batch("unique key violation after a write", `[{"operationType":"Create","resourceBody":{"id":"new","pk":"p","email":"fresh@x"}},{"operationType":"Create","resourceBody":{"id":"new2","pk":"p","email":"keep@x"}}]`, 207)
	batch("two writes of one id", `[{"operationType":"Create","resourceBody":{"id":"twice","pk":"p"}},{"operationType":"Create","resourceBody":{"id":"twice","pk":"p"}}]`, 207)

	// patch
	patch := func(name, body string, status int) {
		add("patch", name, "PATCH", keep, body, status, pkP...)
	}
	patch("no operations", `{}`, 400)
	patch("empty operations", `{"operations":[]}`, 400)
	patch("unknown op", `{"operations":[{"op":"explode","path":"/n"}]}`, 400)
	patch("no path", `{"operations":[{"op":"set","value":1}]}`, 400)
	patch("empty path", `{"operations":[{"op":"set","path":"","value":1}]}`, 400)
	patch("path without a slash", `{"operations":[{"op":"set","path":"n","value":1}]}`, 400)
	patch("the id", `{"operations":[{"op":"set","path":"/id","value":"z"}]}`, 400)
	patch("the partition key", `{"operations":[{"op":"set","path":"/pk","value":"q"}]}`, 400)
	patch("remove the id", `{"operations":[{"op":"remove","path":"/id"}]}`, 400)
	patch("incr a string", `{"operations":[{"op":"incr","path":"/email","value":1}]}`, 400)
	patch("incr by a string", `{"operations":[{"op":"incr","path":"/counter","value":"1"}]}`, 400)
	patch("remove a missing property", `{"operations":[{"op":"remove","path":"/nope"}]}`, 400)
	patch("replace a missing property", `{"operations":[{"op":"replace","path":"/nope","value":1}]}`, 400)
	patch("move from a missing property", `{"operations":[{"op":"move","from":"/nope","path":"/n2"}]}`, 400)
	patch("add past the end of an array", `{"operations":[{"op":"add","path":"/tags/9","value":"x"}]}`, 400)
	patch("array index negative", `{"operations":[{"op":"add","path":"/tags/-1","value":"x"}]}`, 400)
	patch("set inside a missing parent", `{"operations":[{"op":"set","path":"/a/b/c","value":1}]}`, 400)
	patch("a condition that does not parse", `{"condition":"from c where","operations":[{"op":"set","path":"/n","value":1}]}`, 400)
	patch("a condition with a parameter", `{"condition":"from c where c.n = @n","operations":[{"op":"set","path":"/n","value":1}]}`, 400)
	patch("a condition that is false", `{"condition":"from c where c.n = 999","operations":[{"op":"set","path":"/n","value":1}]}`, 412)
	patch("a valid op after a failing one", `{"operations":[{"op":"set","path":"/n","value":5},{"op":"incr","path":"/email","value":1}]}`, 400)
	patch("a bare array with a bad op", `[{"op":"explode","path":"/n"}]`, 400)
	add("patch", "a missing item", "PATCH", docs+"/missing", `{"operations":[{"op":"set","path":"/n","value":1}]}`, 404, pkP...)

	// query
	query := func(name, body string, status int, headers ...[2]string) *censusCase {
		if headers == nil {
			headers = queryH
		}
		return add("query", name, "POST", docs, body, status, headers...)
	}
	query("incomplete WHERE", `{"query":"SELECT * FROM c WHERE"}`, 400)
	query("a misspelled keyword", `{"query":"SELEC * FROM c"}`, 400)
	query("an unknown function", `{"query":"SELECT NOPE(c.n) FROM c"}`, 400)
	query("an unknown user-defined function", `{"query":"SELECT udf.nope(c.n) FROM c"}`, 400)
	query("a user-defined function that throws", `{"query":"SELECT udf.boom(c.n) FROM c"}`, 400)
	query("ORDER BY two paths without a composite index", `{"query":"SELECT * FROM c ORDER BY c.n, c.id"}`, 400)
	query("a parameter name without @", `{"query":"SELECT * FROM c","parameters":[{"name":"x","value":1}]}`, 400)
	query("a parameter without a value", `{"query":"SELECT * FROM c WHERE c.n = @x"}`, 400)
	query("20,000 nested parentheses", `{"query":"SELECT * FROM c WHERE `+strings.Repeat("(", 20000)+"1"+strings.Repeat(")", 20000)+`"}`, 400)
	query("20,000 nested NOTs", `{"query":"SELECT * FROM c WHERE `+strings.Repeat("NOT ", 20000)+`true"}`, 400)
	query("an invalid escape", `{"query":"SELECT * FROM c WHERE c.s = '\\q'"}`, 400)
	query("no query", `{"parameters":[]}`, 400)
	query("TOP negative", `{"query":"SELECT TOP -1 * FROM c"}`, 400)
	query("OFFSET without LIMIT", `{"query":"SELECT * FROM c OFFSET 1"}`, 400)
	query("cross-partition without the header", `{"query":"SELECT * FROM c"}`, 400, h("Content-Type", "application/query+json", "x-ms-documentdb-isquery", "true")...)
	query("a gone partition key range", `{"query":"SELECT * FROM c"}`, 410, h("Content-Type", "application/query+json", "x-ms-documentdb-isquery", "true", "x-ms-documentdb-partitionkeyrangeid", "99")...).substatus = 1002
	query("a partition key range id that is not one", `{"query":"SELECT * FROM c"}`, 400, h("Content-Type", "application/query+json", "x-ms-documentdb-isquery", "true", "x-ms-documentdb-partitionkeyrangeid", "abc")...)
	query("an EPK range upside down", `{"query":"SELECT * FROM c"}`, 400, h("Content-Type", "application/query+json", "x-ms-documentdb-isquery", "true", "x-ms-start-epk", "FF", "x-ms-end-epk", "00")...)
	query("an EPK that is not hex", `{"query":"SELECT * FROM c"}`, 400, h("Content-Type", "application/query+json", "x-ms-documentdb-isquery", "true", "x-ms-start-epk", "zz", "x-ms-end-epk", "FF")...)

	// continuation tokens of every kind.
	for _, tok := range []string{"garbage!", "eyJ0b2tlbiI6MX0", `{"token":"x"}`, "%%%", strings.Repeat("A", 5000)} {
		add("continuation", "read feed "+fmt.Sprintf("%.20q", tok), "GET", docs, "", 400, h("x-ms-continuation", tok)...)
		query("continuation "+fmt.Sprintf("%.20q", tok), `{"query":"SELECT * FROM c"}`, 400,
			with(queryH, "x-ms-continuation", tok)...).family = "continuation"
	}
	query("another query's continuation", `{"query":"SELECT VALUE COUNT(1) FROM c"}`, 400,
		h("Content-Type", "application/query+json", "x-ms-documentdb-isquery", "true", "x-ms-documentdb-query-enablecrosspartition", "true", "x-ms-continuation", ids.queryToken)...).family = "continuation"
	add("continuation", "database list", "GET", "/dbs", "", 400, h("x-ms-continuation", "!!!")...)
	add("continuation", "container list", "GET", census+"/colls", "", 400, h("x-ms-continuation", "!!!")...)
	add("continuation", "procedure list", "GET", sprocs, "", 400, h("x-ms-continuation", "!!!")...)
	add("continuation", "change feed etag of another kind", "GET", docs, "", 400, h("A-IM", "Incremental Feed", "If-None-Match", ids.queryToken)...)

	// scripts
	script := func(name, method, path, body string, status int, headers ...[2]string) {
		add("scripts", name, method, path, body, status, headers...)
	}
	script("a procedure that does not compile", "POST", sprocs, `{"id":"bad","body":"function ( {"}`, 400)
	script("a body that is a number", "POST", sprocs, `{"id":"bad","body":5}`, 400)
	script("no id", "POST", sprocs, `{"body":"function () {}"}`, 400)
	script("an id with a slash", "POST", sprocs, `{"id":"a/b","body":"function () {}"}`, 400)
	script("an id of 256 characters", "POST", sprocs, `{"id":"`+strings.Repeat("x", 256)+`","body":"function () {}"}`, 400)
	script("an existing id", "POST", sprocs, `{"id":"echo","body":"function () {}"}`, 409)
	script("a trigger of no type", "POST", coll+"/triggers", `{"id":"bad","body":"function () {}","triggerType":"Middle","triggerOperation":"All"}`, 400)
	script("a trigger of no operation", "POST", coll+"/triggers", `{"id":"bad","body":"function () {}","triggerType":"Pre","triggerOperation":"Explode"}`, 400)
	script("a function that does not compile", "POST", coll+"/udfs", `{"id":"bad","body":"function (x) { return x +; }"}`, 400)
	script("replace with another id", "PUT", sprocs+"/echo", `{"id":"other","body":"function () {}"}`, 400)
	script("replace of a missing procedure", "PUT", sprocs+"/missing", `{"id":"missing","body":"function () {}"}`, 404)
	script("execute with arguments not an array", "POST", sprocs+"/echo", `{"a":1}`, 400, pkP...)
	script("execute without a partition key", "POST", sprocs+"/echo", `[1]`, 400)
	script("execute a missing procedure", "POST", sprocs+"/missing", `[1]`, 404, pkP...)
	script("a procedure that writes then throws", "POST", sprocs+"/writeThenThrow", `[true]`, 400, pkP...)
	script("a procedure that writes another partition key", "POST", sprocs+"/otherKey", `[]`, 400, pkP...)
	script("a pre-trigger that throws", "POST", docs, `{"id":"trig","pk":"p"}`, 400, with(pkP, "x-ms-documentdb-pre-trigger-include", "preThrow")...)
	script("a missing pre-trigger", "POST", docs, `{"id":"trig","pk":"p"}`, 404, with(pkP, "x-ms-documentdb-pre-trigger-include", "missing")...)
	script("a post-trigger for another operation", "POST", docs, `{"id":"trig","pk":"p"}`, 400, with(pkP, "x-ms-documentdb-post-trigger-include", "postOnDelete")...)
	script("a post-trigger named as a pre-trigger", "POST", docs, `{"id":"trig","pk":"p"}`, 400, with(pkP, "x-ms-documentdb-pre-trigger-include", "postOnDelete")...)
	script("a trigger on a patch", "PATCH", keep, `{"operations":[{"op":"set","path":"/n","value":1}]}`, 400, with(pkP, "x-ms-documentdb-pre-trigger-include", "preThrow")...)
	return cs
}
