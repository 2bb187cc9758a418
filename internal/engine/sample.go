package engine

import "math/rand/v2"

// Sample returns up to n of the container's items (JSON) for the partition key advisor, at
// random: a reservoir over the items read. It reads at most scan items, an equal share from
// each physical partition (from the start of each), so that a large container costs a bounded
// read; the sample is uniform over the container when scan covers all of it. The generator is
// seeded with a constant, so the same data gives the same sample.
func (c *Container) Sample(n, scan int) ([][]byte, error) {
	parts := c.partitions()
	if n <= 0 || len(parts) == 0 {
		return nil, nil
	}
	per := max(scan/len(parts), 1)
	rng := rand.New(rand.NewPCG(18, 18))
	var out [][]byte
	seen := 0
	for _, p := range parts {
		read, token := 0, ""
		for read < per {
			page, err := c.ReadFeed(p.Range(), token, min(1000, per-read))
			if err != nil {
				return nil, err
			}
			for _, d := range page.Docs {
				seen++
				if len(out) < n {
					out = append(out, d)
				} else if k := rng.IntN(seen); k < n {
					out[k] = d
				}
			}
			read += len(page.Docs)
			if page.Next == "" || len(page.Docs) == 0 {
				break
			}
			token = page.Next
		}
	}
	return out, nil
}
