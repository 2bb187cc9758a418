package script

import (
	"encoding/json"
	"fmt"
	"testing"
)

// The query chain, as the service's documentation shows it (docs.microsoft.com, "JavaScript
// query API in Azure Cosmos DB": its SQL-to-JavaScript examples), over four documents.
func TestQueryChain(t *testing.T) {
	m := newMem()
	for i, d := range []string{
		`{"id":"a","pk":"a","n":3,"tags":[1,2],"message":"x"}`,
		`{"id":"b","pk":"a","n":1,"tags":[3,[4,5]],"message":"y"}`,
		`{"id":"c","pk":"a","n":2,"message":"z"}`,
		`{"id":"d","pk":"a","n":1,"tags":[]}`,
	} {
		if _, err := m.Create([]byte(d), WriteOptions{}); err != nil {
			t.Fatal(i, err)
		}
	}
	body := func(chain string) string {
		return fmt.Sprintf(`function () {
			var accepted = %s;
			if (!accepted.isAccepted) throw new Error("not accepted");
		}`, chain)
	}
	reply := `function (err, feed, options) {
		if (err) throw err;
		getContext().getResponse().setBody({feed: feed, next: options.continuation});
	}`
	for _, c := range []struct{ chain, want string }{
		{`__.filter(function (d) { return d.n == 1; }, ` + reply + `)`, `{"feed":[{"id":"b","pk":"a","n":1,"tags":[3,[4,5]],"message":"y"},{"id":"d","pk":"a","n":1,"tags":[]}]}`},
		{`__.map(function (d) { return {id: d.id, msg: d.message}; }, ` + reply + `)`,
			`{"feed":[{"id":"a","msg":"x"},{"id":"b","msg":"y"},{"id":"c","msg":"z"},{"id":"d"}]}`},
		{`__.pluck("n", ` + reply + `)`, `{"feed":[3,1,2,1]}`},
		{`__.chain().filter(function (d) { return d.n > 1; }).map(function (d) { return d.id; }).value(` + reply + `)`, `{"feed":["a","c"]}`},
		{`__.chain().sortBy(function (d) { return d.n; }).pluck("id").value(` + reply + `)`, `{"feed":["b","d","c","a"]}`},
		{`__.chain().sortByDescending(function (d) { return d.n; }).pluck("id").value(` + reply + `)`, `{"feed":["a","c","b","d"]}`},
		{`__.chain().filter(function (d) { return Array.isArray(d.tags); }).pluck("tags").flatten().value(` + reply + `)`, `{"feed":[1,2,3,4,5]}`},
		{`__.chain().filter(function (d) { return Array.isArray(d.tags); }).pluck("tags").flatten(true).value(` + reply + `)`, `{"feed":[1,2,3,[4,5]]}`},
		{`__.chain().pluck("id").value({pageSize: 3}, ` + reply + `)`, `{"feed":["a","b","c"],"next":"chain:3"}`},
		{`__.chain().pluck("id").value({pageSize: 3, continuation: "chain:3"}, ` + reply + `)`, `{"feed":["d"]}`},
		{`getContext().getCollection().filter(function (d) { return d.id == "c"; }, {}, ` + reply + `)`, `{"feed":[{"id":"c","pk":"a","n":2,"message":"z"}]}`},
	} {
		r := NewRunner(Limits{})
		out, err := r.Procedure(body(c.chain), []byte("[]"), m, ProcedureCall{})
		if err != nil {
			t.Errorf("%s: %v", c.chain, err)
			continue
		}
		var got, want any
		json.Unmarshal(out.Body, &got)
		json.Unmarshal([]byte(c.want), &want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %s\nwant %s", c.chain, out.Body, c.want)
		}
	}
	// Refusals: a step without its function, a continuation from elsewhere.
	for _, chain := range []string{
		`__.filter()`,
		`__.chain().map("id").value()`,
		`__.pluck()`,
		`__.chain().value({continuation: "12"}, ` + reply + `)`,
	} {
		if _, err := NewRunner(Limits{}).Procedure(body(chain), []byte("[]"), m, ProcedureCall{}); err == nil {
			t.Errorf("%s: accepted", chain)
		}
	}
	// Past the operation budget nothing runs and isAccepted is false.
	out, err := NewRunner(Limits{MaxOperations: 1}).Procedure(`function () {
		__.readDocuments(__.getSelfLink(), function () {});
		getContext().getResponse().setBody(__.filter(function () { return true; }).isAccepted);
	}`, []byte("[]"), m, ProcedureCall{})
	if err != nil || string(out.Body) != "false" {
		t.Fatalf("past the budget: %s, %v", out.Body, err)
	}
}
