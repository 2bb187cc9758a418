package engine

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/value"
)

// A query whose WHERE pins the partition key reads one partition only.
func TestQueryRoutesByPartitionKey(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{Throughput: &Throughput{Manual: 30000}})
	for i := range 200 {
		mustCreate(t, c, item(fmt.Sprint(i), fmt.Sprintf("k%d", i%10), fmt.Sprintf(`,"n":%d`, i)))
	}
	for _, tc := range []struct {
		sql        string
		params     map[string]value.Value
		partitions int
		results    int
	}{
		{"SELECT * FROM c WHERE c.pk = 'k3'", nil, 1, 20},
		{"SELECT * FROM c WHERE c.n >= 0 AND c.pk = @k", map[string]value.Value{"@k": value.Str("k4")}, 1, 20},
		{"SELECT * FROM c WHERE c['pk'] IN ('k1', 'k2')", nil, 2, 40},
		{"SELECT * FROM c WHERE c.pk = 'nobody'", nil, 1, 0},
		{"SELECT * FROM c WHERE c.pk = 'k3' OR c.n = 1", nil, 5, 21},
		{"SELECT VALUE COUNT(1) FROM c", nil, 5, 1},
	} {
		p, err := query.Prepare(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Query(p, epk.All, query.Options{Params: tc.params, MaxItems: 1000})
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if len(res.Results) != tc.results || len(res.Partitions) > tc.partitions {
			t.Errorf("%s: %d results from %d partitions, want %d from at most %d", tc.sql, len(res.Results), len(res.Partitions), tc.results, tc.partitions)
		}
	}
	// Counting without reading any property still counts every item.
	for sql, want := range map[string]string{
		"SELECT VALUE COUNT(1) FROM c":             "[200]",
		"SELECT COUNT(1) AS n FROM c":              `[{"n":200}]`,
		"SELECT VALUE 1 FROM c OFFSET 198 LIMIT 5": "[1,1]",
	} {
		p, _ := query.Prepare(sql)
		res, err := c.Query(p, epk.All, query.Options{MaxItems: 1000})
		if err != nil || value.Arr(res.Results).String() != want {
			t.Errorf("%s: %v %v, want %s", sql, value.Arr(res.Results), err, want)
		}
	}
}

// TestQueryDifferential runs generated queries over generated data both through the engine
// (routing, paging, several partitions) and over a plain in-memory list of the same items, and
// expects the same results for every page size.
func TestQueryDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	docs := make([]string, 300)
	long := strings.Repeat("l", 150)
	for i := range docs {
		n := fmt.Sprint(r.IntN(50))
		switch r.IntN(10) { // the same path holds other types too
		case 0:
			n = `"` + n + `"`
		case 1:
			n = "null"
		case 2:
			n = "true"
		}
		docs[i] = fmt.Sprintf(`{"id":"d%03d","pk":"k%d","n":%s,"s":%q,"tags":["t%d","t%d"],"o":{"x":%d},"long":"%s%d"}`,
			i, r.IntN(15), n, []string{"alpha", "beta", "gamma", "Delta"}[r.IntN(4)], r.IntN(5), r.IntN(5), r.IntN(3), long, r.IntN(4))
	}
	templates := []string{
		"SELECT * FROM c WHERE c.pk = 'k%d'",
		"SELECT c.id, c.n FROM c WHERE c.n > %d ORDER BY c.n DESC, c.id",
		"SELECT VALUE c.id FROM c WHERE c.pk IN ('k%d', 'k1', 'k2') AND c.n < 30",
		"SELECT c.s, COUNT(1) AS n, SUM(c.n) AS total FROM c WHERE c.n >= %d GROUP BY c.s",
		"SELECT DISTINCT VALUE c.o.x FROM c WHERE c.n > %d ORDER BY c.o.x",
		"SELECT TOP 17 c.id FROM c WHERE c.n != %d ORDER BY c.id",
		"SELECT c.id, t AS tag FROM c JOIN t IN c.tags WHERE t = 't%d'",
		"SELECT VALUE MAX(c.n) FROM c WHERE c.pk != 'k%d'",
		"SELECT c.id FROM c WHERE STARTSWITH(c.s, 'a') OR c.n = %d ORDER BY c.id OFFSET 3 LIMIT 10",
		"SELECT * FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 't%d')",
		"SELECT c.id FROM c WHERE c.s = 'beta' AND c.n BETWEEN %d AND 40",
		"SELECT VALUE c.id FROM c WHERE c.o.x >= 1 AND c.n < %d",
		"SELECT * FROM c WHERE c.s > 'b' AND c.s <= 'gamma' AND c.n > %d ORDER BY c.id",
		"SELECT VALUE c.id FROM c WHERE c['long'] = '" + long + "%d'",
		"SELECT VALUE c.id FROM c WHERE c.long < '" + long + "%d'",
		"SELECT VALUE COUNT(1) FROM c WHERE c.n = %d",
		"SELECT VALUE c.id FROM c WHERE c.n = '%d' OR c.n = null",
	}
	for _, partitions := range []int{1, 5} {
		// The ORDER BY over two keys needs its composite index, as on Cosmos.
		_, c := newContainer(t, Options{}, ContainerSpec{Throughput: &Throughput{Manual: 6000 * partitions},
			Indexing: []byte(`{"compositeIndexes":[[{"path":"/n","order":"descending"},{"path":"/id"}]]}`)})
		var plain query.Slice
		for _, d := range docs {
			res := mustCreate(t, c, []byte(d))
			plain = append(plain, res.Doc)
		}
		for _, tmpl := range templates {
			for range 3 {
				sql := fmt.Sprintf(tmpl, r.IntN(15))
				p, err := query.Prepare(sql)
				if err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
				want, err := drain(func(tok string, size int) (query.Page, error) {
					return p.Run(plain, query.Options{Continuation: tok, MaxItems: size})
				}, 0)
				if err != nil {
					t.Fatalf("%s over a list: %v", sql, err)
				}
				for _, run := range []struct {
					size    int
					noIndex bool
				}{{1, false}, {7, false}, {0, false}, {3, true}} {
					size := run.size
					got, err := drain(func(tok string, size int) (query.Page, error) {
						res, err := c.Query(p, epk.All, query.Options{Continuation: tok, MaxItems: size, NoIndex: run.noIndex})
						return res.Page, err
					}, size)
					if err != nil {
						t.Fatalf("%s: %v", sql, err)
					}
					if !p.Ordered() {
						got, want = sortedValues(got), sortedValues(want)
					}
					if !value.Equal(value.Arr(got), value.Arr(want)) {
						t.Fatalf("%d partitions, page size %d: %s\nengine %s\nlist   %s", partitions, size, sql, value.Arr(got), value.Arr(want))
					}
				}
			}
		}
	}
}

func drain(page func(tok string, size int) (query.Page, error), size int) ([]value.Value, error) {
	var all []value.Value
	tok := ""
	for range 100000 {
		p, err := page(tok, size)
		if err != nil {
			return nil, err
		}
		all = append(all, p.Results...)
		if tok = p.Next; tok == "" {
			return all, nil
		}
	}
	return nil, fmt.Errorf("paging never ended")
}

func TestQueryBadContinuation(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	for _, sql := range []string{"SELECT * FROM c", "SELECT * FROM c ORDER BY c.id"} {
		p, _ := query.Prepare(sql)
		for _, tok := range []string{"garbage", "eyJvIjotNX0", "eyJzIjp0cnVlLCJlIjoienoifQ"} {
			if _, err := c.Query(p, epk.All, query.Options{Continuation: tok}); err == nil {
				t.Errorf("%s with token %q: no error", sql, tok)
			}
		}
	}
}

// Equality and range filters on any path read only the items the index points to.
func TestQueryUsesIndex(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{Throughput: &Throughput{Manual: 12000}})
	for i := range 300 {
		mustCreate(t, c, item(fmt.Sprint(i), fmt.Sprintf("k%d", i%10), fmt.Sprintf(`,"n":%d,"tags":["t%d"]`, i, i%7)))
	}
	// Replaces and deletes must keep the index exact: move item 5 out of the range, delete 6.
	if _, err := c.ReplaceItem("5", item("5", "k5", `,"n":1000`), ItemOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteItem(key("k6"), "6", ItemOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sql     string
		results int
	}{
		{"SELECT * FROM c WHERE c.n = 42", 1},
		{"SELECT * FROM c WHERE c.n >= 0 AND c.n < 10", 8},
		{"SELECT * FROM c WHERE c.n BETWEEN 100 AND 119 ORDER BY c.n", 20},
		{"SELECT VALUE COUNT(1) FROM c WHERE c.n > 289", 1},
		{"SELECT * FROM c WHERE c.n = 1000", 1},
	} {
		p, err := query.Prepare(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Query(p, epk.All, query.Options{MaxItems: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Results) != tc.results || res.Stats.ItemsLoaded > 25 {
			t.Errorf("%s: %d results after loading %d items; want %d results from the index", tc.sql, len(res.Results), res.Stats.ItemsLoaded, tc.results)
		}
	}
}

// System properties are not indexed; filters on them must still find the items.
func TestQueryOnSystemProperties(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	r := mustCreate(t, c, item("a", "p", ""))
	etag := r.ETag
	for sql, want := range map[string]int{
		"SELECT * FROM c WHERE c._ts > 0":                    1,
		"SELECT * FROM c WHERE c._ts >= 0 AND c._ts < 1e12":  1,
		"SELECT * FROM c WHERE c._etag = '\"" + etag + "\"'": 1,
		"SELECT * FROM c WHERE c._rid != ''":                 1,
	} {
		p, err := query.Prepare(sql)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Query(p, epk.All, query.Options{})
		if err != nil || len(res.Results) != want {
			t.Errorf("%s: %d results (%v), want %d", sql, len(res.Results), err, want)
		}
	}
}

// ORDER BY read from the range index, merged across partitions, gives exactly what reading
// everything and sorting gives: the same order (ties included) on every page, across types,
// long strings and nested paths; and it falls back where the index cannot order.
func TestOrderByFromIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	long := strings.Repeat("m", 140)
	_, c := newContainer(t, Options{}, ContainerSpec{Throughput: &Throughput{Manual: 30000}})
	for i := range 400 {
		n := fmt.Sprint(r.IntN(40))
		switch r.IntN(12) {
		case 0:
			n = `"s` + n + `"`
		case 1:
			n = "null"
		case 2:
			n = "false"
		}
		mustCreate(t, c, []byte(fmt.Sprintf(`{"id":"d%03d","pk":"k%d","n":%s,"s":%q,"o":{"x":%d},"long":"%s%d","tags":[%d]}`,
			i, r.IntN(50), n, []string{"a", "b", "c"}[r.IntN(3)], r.IntN(5), long, r.IntN(6), r.IntN(3))))
	}
	for _, tc := range []struct {
		sql       string
		fromIndex bool
		deep      int // when not 0, the most items a page of 7 may read, wherever it starts
	}{
		// A page resumes where the last one stopped: it reads its own items and the ties of
		// the value it starts at (about 60 here), not every result before it (up to 400).
		{"SELECT c.id, c.n FROM c ORDER BY c.n", true, 100},
		{"SELECT c.id, c.n FROM c ORDER BY c.n DESC", true, 100},
		{"SELECT VALUE c.id FROM c ORDER BY c.s DESC", true, 0},
		{"SELECT VALUE c.id FROM c ORDER BY c.o.x", true, 0},
		// Every value shares its first 128 bytes, which is all the index keeps of a string: one
		// run of equal entries that must be read whole and sorted by the full value.
		{"SELECT VALUE c.id FROM c ORDER BY c.long DESC", false, 0},
		{"SELECT TOP 7 c.id FROM c WHERE c.n > 30 ORDER BY c.n DESC", true, 0},
		{"SELECT c.id FROM c WHERE c.s = 'b' ORDER BY c.n OFFSET 5 LIMIT 9", true, 0},
		{"SELECT c.id FROM c ORDER BY c.missing", false, 0},
		{"SELECT c.id FROM c ORDER BY c.tags", false, 0},
	} {
		p, err := query.Prepare(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		pagesLikeSort(t, c, tc.sql, p, epk.All)
		res, _ := c.Query(p, epk.All, query.Options{MaxItems: 3})
		if read := res.Stats.ItemsLoaded; (read < 400) != tc.fromIndex {
			t.Errorf("%s: read %d items for a first page of 3 (from the index: %v)", tc.sql, read, tc.fromIndex)
		}
		for tok := res.Next; tc.deep > 0 && tok != ""; tok = res.Next {
			if res, err = c.Query(p, epk.All, query.Options{Continuation: tok, MaxItems: 7}); err != nil {
				t.Fatal(err)
			}
			if res.Stats.ItemsLoaded > tc.deep {
				t.Fatalf("%s: a page of 7 read %d items", tc.sql, res.Stats.ItemsLoaded)
			}
		}
	}
}

// A page of an ORDER BY read from the index resumes after the last item the previous page
// returned, by its value: deleting items already returned and adding one before that point
// neither skip nor repeat an item on the next page (an offset into the results would skip one).
func TestOrderByResumesAfterLastItem(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{Throughput: &Throughput{Manual: 12000}})
	for i := range 20 {
		mustCreate(t, c, []byte(fmt.Sprintf(`{"id":"i%02d","pk":"k%d","n":%d}`, i, i%7, i*10)))
	}
	p, err := query.Prepare("SELECT VALUE c.id FROM c ORDER BY c.n")
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Query(p, epk.All, query.Options{MaxItems: 5})
	if err != nil || first.Stats.Index.Order != "/n" {
		t.Fatalf("first page: %v, order from %q", err, first.Stats.Index.Order)
	}
	for _, id := range []string{"i00", "i01"} {
		if _, err := c.DeleteItem(key(fmt.Sprint("k", id[2]-'0')), id, ItemOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mustCreate(t, c, []byte(`{"id":"early","pk":"k1","n":-1}`))
	next, err := c.Query(p, epk.All, query.Options{MaxItems: 5, Continuation: first.Next})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := value.Arr(append(first.Results, next.Results...)).String(), `["i00","i01","i02","i03","i04","i05","i06","i07","i08","i09"]`; got != want {
		t.Fatalf("two pages: %s, want %s", got, want)
	}
	// Forged positions: a value of another type, an array, a count past any limit, a partition
	// that does not exist. Each gives a page of the query's items or a 400, never a failure.
	for _, raw := range []string{
		`{"o":3,"b":{"v":"zz","m":"","q":1}}`, `{"b":{"v":[1],"m":"","q":0}}`, `{"o":2147483647,"b":{"v":null,"m":"","q":0}}`,
		`{"o":1,"b":{"v":50,"m":"/w==","q":18446744073709551615}}`, `{"b":{"v":nul,"m":"","q":0}}`, `{"o":-1,"b":{"v":1,"m":"","q":0}}`,
	} {
		res, err := c.Query(p, epk.All, query.Options{MaxItems: 5, Continuation: base64.RawURLEncoding.EncodeToString([]byte(raw))})
		var f *fault.Error
		if err != nil && (!errors.As(err, &f) || f.Kind != fault.BadRequest) {
			t.Errorf("token %s: %v, want a page or a 400", raw, err)
		}
		for _, v := range res.Results {
			if id := v.Str(); !strings.HasPrefix(id, "i") && id != "early" {
				t.Errorf("token %s: result %s is no item", raw, v)
			}
		}
	}
}

// pagesLikeSort checks that p over r, read page by page (pages of 1, of 7 and of the default
// size), returns what it returns read without the index, which reads everything and sorts.
func pagesLikeSort(t *testing.T, c *Container, sql string, p *query.Prepared, r epk.Range) {
	t.Helper()
	want, err := drain(func(tok string, size int) (query.Page, error) {
		res, err := c.Query(p, r, query.Options{Continuation: tok, MaxItems: size, NoIndex: true})
		return res.Page, err
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1, 7, 0} {
		got, err := drain(func(tok string, size int) (query.Page, error) {
			res, err := c.Query(p, r, query.Options{Continuation: tok, MaxItems: size})
			return res.Page, err
		}, size)
		if err != nil {
			t.Fatal(err)
		}
		if !value.Equal(value.Arr(got), value.Arr(want)) {
			t.Fatalf("%s over %v, page size %d:\nindex %s\nsort  %s", sql, r, size, value.Arr(got), value.Arr(want))
		}
	}
}

// ORDER BY within one logical partition reads the partition's index in order when the logical
// partition holds enough of its items, and its own items otherwise; both give what reading and
// sorting gives, page by page, and an item of another logical partition without the ORDER BY
// value makes the index unusable for all of them.
func TestOrderByInLogicalPartition(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	for i := range 150 {
		mustCreate(t, c, []byte(fmt.Sprintf(`{"id":"b%d","pk":"big","n":%d}`, i, (i*37)%50)))
	}
	for i := range 60 {
		mustCreate(t, c, []byte(fmt.Sprintf(`{"id":"s%d","pk":"k%d","n":%d}`, i, i%30, i%7)))
	}
	check := func(when, pk, sql string, fromIndex bool) {
		t.Helper()
		p, err := query.Prepare(sql)
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.KeyRange(key(pk))
		if err != nil {
			t.Fatal(err)
		}
		pagesLikeSort(t, c, sql, p, r)
		res, err := c.Query(p, r, query.Options{MaxItems: 3})
		if err != nil {
			t.Fatal(err)
		}
		if read := res.Stats.ItemsLoaded; (res.Stats.Index.Order != "") != fromIndex || (fromIndex && read >= 10) {
			t.Errorf("%s: %s in %s: read %d items for a first page of 3, order from %q (want from the index: %v)",
				when, sql, pk, read, res.Stats.Index.Order, fromIndex)
		}
	}
	for _, sql := range []string{"SELECT c.id, c.n FROM c ORDER BY c.n", "SELECT VALUE c.id FROM c ORDER BY c.n DESC"} {
		check("complete", "big", sql, true)
		check("complete", "k3", sql, false) // 2 items: sorting them costs less than the index
	}
	mustCreate(t, c, item("none", "k4", ""))
	check("an item without n", "big", "SELECT c.id, c.n FROM c ORDER BY c.n", false)
}

// A continuation does not carry an ORDER BY value too long for a header: past maxOrderKey,
// the next page counts the results before it instead, and still returns the same results.
func TestOrderByLongKeysKeepTokensShort(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{Throughput: &Throughput{Manual: 12000}})
	long := strings.Repeat("t", 3000)
	for i := range 30 {
		mustCreate(t, c, []byte(fmt.Sprintf(`{"id":"i%02d","pk":"k%d","t":"%s%02d"}`, i, i%7, long, i)))
	}
	sql := "SELECT VALUE c.id FROM c ORDER BY c.t DESC"
	p, err := query.Prepare(sql)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Query(p, epk.All, query.Options{MaxItems: 4})
	if err != nil || res.Next == "" || len(res.Next) > 200 {
		t.Fatalf("first page: %v, a token of %d bytes", err, len(res.Next))
	}
	pagesLikeSort(t, c, sql, p, epk.All)
}

// An ORDER BY whose partitions split between its pages returns every item once: the split
// reorders the ties of the partition the last page stopped in, and the next page passes over
// exactly those the pages before returned.
func TestOrderByResumesAcrossSplits(t *testing.T) {
	e, c := newContainer(t, Options{}, ContainerSpec{Throughput: &Throughput{Manual: 10000}})
	const n = 600
	for i := range n {
		mustCreate(t, c, []byte(fmt.Sprintf(`{"id":"%d","pk":"k%d","n":%d}`, i, i%97, i%5)))
	}
	for _, sql := range []string{"SELECT VALUE c.id FROM c ORDER BY c.n", "SELECT VALUE c.id FROM c ORDER BY c.n DESC"} {
		p, err := query.Prepare(sql)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		tok := ""
		for page := 0; page == 0 || tok != ""; page++ {
			res, err := c.Query(p, epk.All, query.Options{MaxItems: 50, Continuation: tok})
			if err != nil {
				t.Fatal(err)
			}
			if page == 0 && res.Stats.Index.Order != "/n" {
				t.Fatalf("%s: not read from the index", sql)
			}
			for _, v := range res.Results {
				seen[v.Str()]++
			}
			tok = res.Next
			if page == 1 { // in the middle of the ties of 1 (or 3)
				before := len(c.partitions())
				if _, err := e.ReplaceOffer(e.Offers()[0].ID, OfferReplace{Throughput: Throughput{Manual: 10000 * (before + 1)}}); err != nil {
					t.Fatal(err)
				}
				if len(c.partitions()) <= before {
					t.Fatalf("no split: %d partitions", before)
				}
			}
		}
		if len(seen) != n {
			t.Fatalf("%s: %d distinct items, want %d", sql, len(seen), n)
		}
		for id, k := range seen {
			if k != 1 {
				t.Fatalf("%s: item %s returned %d times", sql, id, k)
			}
		}
	}
}

// A page that starts among items of equal ORDER BY value reads from the last item returned
// on, not the items of that value before it, ascending and descending, whether the value is
// spread over several partitions or not; and gives what reading and sorting gives.
func TestOrderByTiesReadWhatPagesReturn(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{Throughput: &Throughput{Manual: 12000}})
	const n, page = 300, 10
	// s: a string the index records whole but shares with longer ones (it records their first
	// 128 bytes), which must still be sorted among them.
	s := strings.Repeat("s", value.MaxIndexedString)
	for i := range n { // runs longer than descRunMax in each partition
		mustCreate(t, c, []byte(fmt.Sprintf(`{"id":"%d","pk":"k%d","n":%d,"s":"%s"}`, i, i%97, i/150, s+strings.Repeat("t", i%3))))
	}
	parts := len(c.partitions())
	if parts < 2 {
		t.Fatalf("%d partitions", parts)
	}
	for _, sql := range []string{"SELECT VALUE c.id FROM c ORDER BY c.n", "SELECT VALUE c.id FROM c ORDER BY c.n DESC",
		"SELECT VALUE c.id FROM c WHERE c.n >= 1 ORDER BY c.n DESC", "SELECT VALUE c.id FROM c WHERE c.n < 1 ORDER BY c.n",
		"SELECT VALUE c.id FROM c WHERE c.n > 0 ORDER BY c.n DESC",
		"SELECT VALUE c.id FROM c ORDER BY c.s", "SELECT VALUE c.id FROM c ORDER BY c.s DESC",
		"SELECT VALUE c.id FROM c WHERE c.s > '" + s + "' ORDER BY c.s DESC", "SELECT VALUE c.id FROM c WHERE c.s < '" + s + "t' ORDER BY c.s"} {
		p, err := query.Prepare(sql)
		if err != nil {
			t.Fatal(err)
		}
		want, err := drain(func(tok string, size int) (query.Page, error) {
			res, err := c.Query(p, epk.All, query.Options{Continuation: tok, MaxItems: size, NoIndex: true})
			return res.Page, err
		}, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []value.Value
		tok, most := "", 0
		for k := 0; k == 0 || tok != ""; k++ {
			res, err := c.Query(p, epk.All, query.Options{MaxItems: page, Continuation: tok})
			if err != nil {
				t.Fatal(err)
			}
			if k > 0 {
				most = max(most, res.Stats.ItemsLoaded)
			}
			got = append(got, res.Results...)
			tok = res.Next
		}
		if !value.Equal(value.Arr(got), value.Arr(want)) {
			t.Fatalf("%s:\nindex %s\nsort  %s", sql, value.Arr(got), value.Arr(want))
		}
		// Each partition loads the items the page takes from it (one more than it returns,
		// which tells whether there is a next page), and one more at most; but for strings the
		// index records by their first 128 bytes, whose ties it sorts again.
		if most > page+1+parts && !strings.Contains(sql, "c.s") {
			t.Errorf("%s: a page loaded up to %d items (pages of %d, %d partitions)", sql, most, page, parts)
		}
	}
}

// COUNT of a whole container is answered from each partition's item count, kept with every
// commit; it must equal what a scan of the items counts, after deletes, upserts, a split and a
// restart, and over a range that covers only part of a partition (which must scan).
func TestCountFromPartitionStatistics(t *testing.T) {
	e, c := newContainer(t, Options{}, ContainerSpec{Throughput: &Throughput{Manual: 12000}})
	for i := range 300 {
		mustCreate(t, c, item(fmt.Sprint(i), fmt.Sprintf("k%d", i%37), ""))
	}
	for i := range 40 {
		if _, err := c.DeleteItem(key(fmt.Sprintf("k%d", i%37)), fmt.Sprint(i), ItemOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 280; i < 320; i++ { // 20 replaced, 20 new
		if _, err := c.UpsertItem(item(fmt.Sprint(i), fmt.Sprintf("k%d", i%37), `,"v":2`), ItemOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	counted, _ := query.Prepare("SELECT VALUE COUNT(1) FROM c")
	scanned, _ := query.Prepare("SELECT VALUE COUNT(1) FROM c WHERE IS_DEFINED(c.id)")
	count := func(c *Container, p *query.Prepared, r epk.Range) string {
		t.Helper()
		res, err := c.Query(p, r, query.Options{MaxItems: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return value.Arr(res.Results).String()
	}
	check := func(c *Container, want string) {
		t.Helper()
		if got := count(c, counted, epk.All); got != want {
			t.Fatalf("COUNT(1): %s, want %s", got, want)
		}
		if got := count(c, scanned, epk.All); got != want {
			t.Fatalf("COUNT(1) by scan: %s, want %s", got, want)
		}
		for _, p := range c.partitions() { // half a partition: counted by scanning
			r := p.Range()
			mid := epk.Range{Min: r.Min, Max: epk.EPK(string(r.Min) + "8")}
			if a, b := count(c, counted, mid), count(c, scanned, mid); a != b {
				t.Fatalf("COUNT(1) over %v: %s, by scan %s", mid, a, b)
			}
		}
	}
	check(c, "[280]")
	if _, err := e.ReplaceOffer(e.Offers()[0].ID, OfferReplace{Throughput: Throughput{Manual: 40000}}); err != nil {
		t.Fatal(err)
	}
	check(c, "[280]")
	dir := e.opts.Dir
	e.Close()
	e2 := openEngine(t, dir, Options{})
	defer e2.Close()
	c2, _ := e2.Container("db", "c")
	check(c2, "[280]")
}

// A subquery that reads the container and needs all of it (DISTINCT, TOP, GROUP BY, ORDER BY,
// OFFSET) is a table the outer query reads, over a logical partition and across partitions:
// counting distinct values counts values, not items.
func TestQueryOverDerivedTable(t *testing.T) {
	_, c := newContainer(t, Options{MinPartitions: 4}, ContainerSpec{})
	for i := range 200 {
		mustCreate(t, c, item(fmt.Sprint(i), fmt.Sprintf("k%d", i%10), fmt.Sprintf(`,"n":%d,"color":"c%d"`, i, i%7)))
	}
	for _, tc := range []struct {
		sql  string
		key  string // the partition key the query is scoped to; "" for all
		want string
	}{
		{"SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.color FROM c)", "", "[7]"},
		{"SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.color FROM c) x", "k3", "[7]"},
		{"SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.pk FROM c) x", "", "[10]"},
		{"SELECT VALUE COUNT(1) FROM (SELECT TOP 4 * FROM c) x", "", "[4]"},
		{"SELECT VALUE SUM(x.n) FROM (SELECT TOP 3 c.n FROM c ORDER BY c.n DESC) x", "", "[594]"},
		{"SELECT VALUE x.pk FROM (SELECT c.pk FROM c GROUP BY c.pk) x", "k3", `["k3"]`},
		{"SELECT VALUE x FROM (SELECT VALUE c.n FROM c ORDER BY c.n OFFSET 2 LIMIT 2) x", "", "[2,3]"},
		{"SELECT VALUE y FROM (SELECT DISTINCT VALUE x FROM (SELECT VALUE c.color FROM c) x) y WHERE y > 'c4'", "", `["c5","c6"]`},
		// A subquery that needs one item at a time is read item by item, as before.
		{"SELECT VALUE COUNT(1) FROM (SELECT c.color FROM c WHERE c.n < 50) x", "", "[50]"},
	} {
		p, err := query.Prepare(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		r := epk.All
		if tc.key != "" {
			if r, err = c.KeyRange(epk.Key{epk.String(tc.key)}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := c.Query(p, r, query.Options{MaxItems: 1000})
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if got := value.Arr(res.Results).String(); got != tc.want {
			t.Errorf("%s (key %q): %s, want %s", tc.sql, tc.key, got, tc.want)
		}
	}
}
