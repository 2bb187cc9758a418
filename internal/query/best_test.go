package query

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// parts is a Splitter over in-memory parts, as the engine's physical partitions are.
type parts []Slice

func (ps parts) Parts() []Reader {
	out := make([]Reader, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}

func (ps parts) Scan(from *Resume, fn func(Position, []byte) (bool, error)) error {
	for _, p := range ps {
		if err := p.Scan(nil, fn); err != nil {
			return err
		}
	}
	return nil
}

// TestBestMatchesFullSort checks that keeping each part's first n results gives what sorting
// them all and taking n gives, ties (many equal keys) and undefined scores included.
func TestBestMatchesFullSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make(parts, 3)
	for i := range 300 {
		doc := fmt.Sprintf(`{"id":"%d","k":%d,"v":[%d,%d]}`, i, rng.IntN(7), rng.IntN(5), rng.IntN(5))
		if i%10 == 0 {
			doc = fmt.Sprintf(`{"id":"%d","k":%d}`, i, rng.IntN(7))
		}
		src[i%3] = append(src[i%3], []byte(doc))
	}
	for _, order := range []string{"c.k", "c.k DESC", "c.k, c.id DESC", "VectorDistance(c.v, [1, 2])", "VectorDistance(c.v, [1, 2], false, {\"distanceFunction\": \"euclidean\"})", "RANK VectorDistance(c.v, [3, 1])"} {
		all := runParts(t, src, "SELECT VALUE c.id FROM c ORDER BY "+order)
		for _, n := range []int{0, 1, 5, 37, 299, 400} {
			want := all[:min(n, len(all))]
			if got := runParts(t, src, fmt.Sprintf("SELECT TOP %d VALUE c.id FROM c ORDER BY %s", n, order)); !slices.Equal(got, want) {
				t.Fatalf("ORDER BY %s, TOP %d: %v\nwant %v", order, n, got, want)
			}
			if got := runParts(t, src, fmt.Sprintf("SELECT VALUE c.id FROM c ORDER BY %s OFFSET 3 LIMIT %d", order, n)); !slices.Equal(got, all[min(3, len(all)):min(3+n, len(all))]) {
				t.Fatalf("ORDER BY %s, OFFSET 3 LIMIT %d: %v", order, n, got)
			}
		}
	}
}

func runParts(t *testing.T, src parts, sql string) []string {
	t.Helper()
	p, err := Prepare(sql)
	if err != nil {
		t.Fatal(err)
	}
	page, err := p.Run(src, Options{MaxItems: 1000})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out []string
	for _, v := range page.Results {
		out = append(out, v.Str())
	}
	return out
}
