package advisor

import "github.com/partita-db/partita/internal/epk"

// Input is what the advisor judges a container by.
type Input struct {
	Database, Container string
	// Items is the sample: one JSON object per item. Items that are not objects are skipped.
	Items [][]byte
	// Current is the container's partition key definition; empty Paths when unknown (a file).
	Current KeyDef
	// Partitions is the container's number of physical partitions now (at least 1).
	Partitions int
	// SpreadPartitions is the P of predicted spreads: 0 means max(Partitions, MinSpread).
	SpreadPartitions int
	// TotalItems and TotalBytes are the whole container's size; 0 means the sample is all of it.
	TotalItems, TotalBytes int64
	// Growth is how many times its current size the container is expected to reach; 0 means 1.
	Growth float64
	// Rates are the request units recently charged to logical partitions of the current key,
	// by EPK (the engine's hottest logical partitions). Optional.
	Rates []LogicalRate
	// Queries are query texts with how often they ran. Optional.
	Queries []QueryCount
	// WriteRate is the write load in RU/s the random suffix is sized for; 0 means unknown.
	WriteRate float64
}

// KeyDef is a partition key definition as containers declare it.
type KeyDef struct {
	Paths   []string `json:"paths"`
	Kind    string   `json:"kind,omitempty"`    // "Hash" or "MultiHash"; empty: inferred from Paths
	Version int      `json:"version,omitempty"` // 1 or 2; empty: 2 (1 only matters for hashing rates)
}

// scheme is the hash the engine uses for d, inferred as the engine infers it.
func (d KeyDef) scheme() epk.Scheme {
	switch {
	case d.Kind == "MultiHash" || len(d.Paths) > 1:
		return epk.SchemeMulti
	case d.Version == 1:
		return epk.SchemeV1
	default:
		return epk.SchemeV2
	}
}

// LogicalRate is the request units charged to one logical partition, named by its EPK.
type LogicalRate struct {
	EPK epk.EPK
	RU  float64
}

// QueryCount is a query text and how many times it ran.
type QueryCount struct {
	Text  string `json:"text"`
	Count int64  `json:"count"`
}

// Limits of the service the advice is measured against (shared/notes/cosmos-partitioning.md).
const (
	LogicalCapBytes    = 20 << 30 // a logical partition holds at most 20 GB
	PhysicalBytes      = 50 << 30 // a physical partition holds up to 50 GB
	PhysicalRUPerSec   = 10000    // and serves up to 10,000 RU/s
	MinSpread          = 4        // predicted spreads show at least this many partitions
	MaxSpread          = 1024     // and at most this many
	maxPaths           = 48       // candidate single paths kept, by how many items have them
	maxDepth           = 4        // path segments explored (/a/b/c/d)
	hierarchyPool      = 4        // best single paths combined into hierarchical keys
	goodScore          = 70
	fairScore          = 40
	targetCardinality  = 1000 // distinct values for a full cardinality factor
	suffixShareOfLimit = 0.5  // a suffixed logical partition should take at most this share of 10,000 RU/s
	maxSuffixes        = 1000
	logicalPerPhysical = 25 // logical partitions per physical one a suffix aims for
	randomSeed         = 18 // the random-suffix prediction's generator seed
)
