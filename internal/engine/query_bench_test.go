package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/value"
)

// loadForQueries fills a 4-partition container with n items of about 1 KB over 1,000
// logical partitions.
func loadForQueries(b *testing.B, n int) *Container {
	_, c := newContainer(b, Options{}, ContainerSpec{Throughput: &Throughput{Manual: 24000}})
	pad := strings.Repeat("x", 850)
	parallel(b, n, 32, func(i int) {
		body := fmt.Sprintf(`{"id":"%d","pk":"k%d","n":%d,"cat":"c%d","pad":"%s"}`, i, i%1000, i, i%10, pad)
		if _, err := c.CreateItem([]byte(body), ItemOptions{}); err != nil {
			b.Error(err)
		}
	})
	return c
}

func benchQuery(b *testing.B, c *Container, sql string, params map[string]value.Value) {
	benchQueryPage(b, c, sql, params, 1000)
}

// benchQueryPage runs the first page, of at most max items, of a query.
func benchQueryPage(b *testing.B, c *Container, sql string, params map[string]value.Value, max int) {
	p, err := query.Prepare(sql)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var loaded int
	for b.Loop() {
		res, err := c.Query(p, epk.All, query.Options{Params: params, MaxItems: max})
		if err != nil {
			b.Fatal(err)
		}
		loaded = res.Stats.ItemsLoaded
	}
	b.ReportMetric(float64(loaded), "items-read/op")
}

func BenchmarkQuery(b *testing.B) {
	uncheckedCounts(b)
	c := loadForQueries(b, 100000)
	b.Run("single-partition-equality", func(b *testing.B) {
		benchQuery(b, c, "SELECT * FROM c WHERE c.pk = @k", map[string]value.Value{"@k": value.Str("k42")})
	})
	// A page of an equality that 10,000 items match: its cost must follow the page.
	b.Run("equality-page-of-100", func(b *testing.B) {
		benchQueryPage(b, c, "SELECT * FROM c WHERE c.cat = @c", map[string]value.Value{"@c": value.Str("c3")}, 100)
	})
	b.Run("range-filter", func(b *testing.B) {
		benchQuery(b, c, "SELECT c.id FROM c WHERE c.n >= 5000 AND c.n < 5100", nil)
	})
	b.Run("cross-partition-order-by-top-10", func(b *testing.B) {
		benchQuery(b, c, "SELECT TOP 10 c.id, c.n FROM c ORDER BY c.n DESC", nil)
	})
	b.Run("count-100k", func(b *testing.B) {
		benchQuery(b, c, "SELECT VALUE COUNT(1) FROM c", nil)
	})
}
