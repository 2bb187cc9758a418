package advisor

import (
	"sort"

	"github.com/partita-db/partita/internal/epk"
)

// spread counts EPKs per physical partition of a container with p partitions laid out as
// the engine lays out a new one (epk.InitialRanges: p equal ranges of the hashed key space),
// which is also what throughput splits of equal partitions produce.
func spread(epks []epk.EPK, scheme epk.Scheme, p int) []Share {
	ranges := epk.InitialRanges(scheme, p)
	out := make([]Share, len(ranges))
	for i := range out {
		out[i].Partition = i
	}
	for _, e := range epks {
		i := sort.Search(len(ranges), func(i int) bool { return e < ranges[i].Max })
		out[i].Items++
	}
	for i := range out {
		if len(epks) > 0 {
			out[i].Share = float64(out[i].Items) / float64(len(epks))
		}
	}
	return out
}

// largestSpread is the largest share of a spread.
func largestSpread(s []Share) float64 {
	m := 0.0
	for _, x := range s {
		m = max(m, x.Share)
	}
	return m
}
