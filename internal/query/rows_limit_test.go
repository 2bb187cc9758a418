package query

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/fault"
)

// A cross product of a few large arrays of one item is refused once it passes MaxItemRows,
// through JOINs or a subquery, rather than run for hours; the rows of every item are counted
// afresh, so many items that each join within the bound are served.
func TestJoinRowsPerItemBounded(t *testing.T) {
	nums := make([]string, 200)
	for i := range nums {
		nums[i] = strconv.Itoa(i)
	}
	arr := "[" + strings.Join(nums, ",") + "]"
	docs := Slice{}
	for i := range 30 {
		docs = append(docs, []byte(`{"id":"`+strconv.Itoa(i)+`","a":`+arr+`}`))
	}
	run := func(sql string) (Page, error) {
		p, err := Prepare(sql)
		if err != nil {
			t.Fatal(err)
		}
		return p.Run(docs, Options{})
	}
	// 30 items of 200 x 200 = 40,000 rows each: 1.2 million rows in all, served.
	page, err := run(`SELECT VALUE COUNT(1) FROM c JOIN x IN c.a JOIN y IN c.a`)
	if err != nil || len(page.Results) != 1 || page.Results[0].Num() != 30*200*200 {
		t.Fatalf("two JOINs: %v, %v", page.Results, err)
	}
	for _, sql := range []string{
		`SELECT VALUE COUNT(1) FROM c JOIN x IN c.a JOIN y IN c.a JOIN z IN c.a`,
		`SELECT VALUE COUNT(1) FROM c WHERE EXISTS (SELECT VALUE 1 FROM x IN c.a JOIN y IN c.a JOIN z IN c.a WHERE x + y + z < 0)`,
	} {
		_, err := run(sql)
		var f *fault.Error
		if !errors.As(err, &f) || f.Kind != fault.BadRequest || !strings.Contains(f.Message, "rows for one item") {
			t.Fatalf("%s: %v; want it refused", sql, err)
		}
	}
}
