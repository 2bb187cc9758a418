package advisor

import (
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/value"
)

// preparedQuery is a recorded query text, parsed once for every candidate.
type preparedQuery struct {
	p      *query.Prepared
	params map[string]value.Value // a placeholder for each parameter it uses
	count  int64
}

// prepareQueries parses the texts; those that do not parse are counted apart.
func prepareQueries(qs []QueryCount) (out []preparedQuery, total, unparsed int64) {
	for _, q := range qs {
		if q.Count <= 0 {
			continue
		}
		p, err := query.Prepare(q.Text)
		if err != nil {
			unparsed += q.Count
			continue
		}
		// A recorded text has no parameter values, but a parameter compared to the key pins
		// one value whatever it is: a placeholder string stands for it.
		params := map[string]value.Value{}
		for _, name := range p.Parameters() {
			params[name] = value.Str("?")
		}
		out = append(out, preparedQuery{p: p, params: params, count: q.Count})
		total += q.Count
	}
	return out, total, unparsed
}

// fanOut is the share of query executions that a key of paths would send to every
// partition: those whose WHERE does not pin one value (equality, or IN with one value) of
// the key's first path, and of each following path it pins, ANDed at the top level. For a
// hierarchical key, pinning a prefix routes the query to that prefix's partitions, which
// counts as staying (usually one partition; a prefix past 20 GB spans a few).
func fanOut(qs []preparedQuery, total int64, paths []path) (share float64, fanned int64) {
	if total == 0 {
		return 0, 0
	}
	segs := make([][]string, len(paths))
	for i, p := range paths {
		segs[i] = p.segs
	}
	for _, q := range qs {
		keys, ok := q.p.PartitionKeys(segs, q.params)
		if !ok || len(keys) != 1 {
			fanned += q.count
		}
	}
	return float64(fanned) / float64(total), fanned
}
