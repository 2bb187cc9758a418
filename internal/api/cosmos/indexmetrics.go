package cosmos

import (
	"encoding/base64"
	"encoding/json"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/query"
)

// singleIndexJSON and compositeIndexJSON are the entries of x-ms-cosmos-index-utilization, in
// the shape Cosmos sends and the SDKs read (the .NET, Java and JavaScript SDKs decode the
// header from base64 and parse these names; the Go SDK hands the header over as it is).
type singleIndexJSON struct {
	FilterExpression string `json:"FilterExpression"`
	IndexSpec        string `json:"IndexSpec"`
	FilterPreciseSet bool   `json:"FilterPreciseSet"`
	IndexPreciseSet  bool   `json:"IndexPreciseSet"`
	IndexImpactScore string `json:"IndexImpactScore"`
}

type compositeIndexJSON struct {
	IndexSpecs       []string `json:"IndexSpecs"`
	IndexPreciseSet  bool     `json:"IndexPreciseSet"`
	IndexImpactScore string   `json:"IndexImpactScore"`
}

type indexUtilizationJSON struct {
	UtilizedSingleIndexes     []singleIndexJSON    `json:"UtilizedSingleIndexes"`
	PotentialSingleIndexes    []singleIndexJSON    `json:"PotentialSingleIndexes"`
	UtilizedCompositeIndexes  []compositeIndexJSON `json:"UtilizedCompositeIndexes"`
	PotentialCompositeIndexes []compositeIndexJSON `json:"PotentialCompositeIndexes"`
}

// indexUtilization renders index metrics as the header's value: base64 of the JSON object.
// Partita's index answers filters exactly, so every entry is precise; the impact score is
// High, as Cosmos gives a path that decides which items a query reads.
func indexUtilization(m engine.IndexMetrics) string {
	singles := func(specs []string) []singleIndexJSON {
		out := make([]singleIndexJSON, 0, len(specs))
		for _, s := range specs {
			out = append(out, singleIndexJSON{IndexSpec: s, FilterPreciseSet: true, IndexPreciseSet: true, IndexImpactScore: "High"})
		}
		return out
	}
	composites := func(specs [][]string) []compositeIndexJSON {
		out := make([]compositeIndexJSON, 0, len(specs))
		for _, s := range specs {
			out = append(out, compositeIndexJSON{IndexSpecs: s, IndexPreciseSet: true, IndexImpactScore: "High"})
		}
		return out
	}
	b, _ := json.Marshal(indexUtilizationJSON{
		UtilizedSingleIndexes:     singles(m.UtilizedSingle),
		PotentialSingleIndexes:    singles(m.PotentialSingle),
		UtilizedCompositeIndexes:  composites(m.UtilizedComposite),
		PotentialCompositeIndexes: composites(m.PotentialComposite),
	})
	return base64.StdEncoding.EncodeToString(b)
}

// indexHitRatio is the share of the loaded items that the index led to and the query
// returned: results over items loaded when a filter was read from the index or an ORDER BY
// from its order, 0 when a filter had to be evaluated on every item, 1 when the query has no
// filter (every item read is wanted).
func indexHitRatio(s query.Stats, p *query.Prepared) float64 {
	switch {
	case s.ItemsLoaded == 0:
		return 1
	case s.Index.Filter != "" || s.Index.Order != "":
		return min(1, float64(s.Results)/float64(s.ItemsLoaded))
	case p.HasFilter():
		return 0
	}
	return 1
}
