package advisor

// Advice is the advisor's answer, the body of GET /dbs/{db}/colls/{c}/advice and of
// `partita advise --json`. The explorer reads exactly these names.
type Advice struct {
	Database   string      `json:"database"`
	Container  string      `json:"container"`
	Sampled    int         `json:"sampled"` // items judged
	Current    []string    `json:"current"` // the container's key paths, [] when unknown
	Candidates []Candidate `json:"candidates"`
	Synthetic  []Synthetic `json:"synthetic"`

	Partitions       int      `json:"partitions"`       // physical partitions now
	SpreadPartitions int      `json:"spreadPartitions"` // P of the predicted spreads
	TotalItems       int64    `json:"totalItems"`       // the container's size the sample stands for
	TotalBytes       int64    `json:"totalBytes"`
	Growth           float64  `json:"growth"`
	Queries          int64    `json:"queries"`   // query executions judged (sum of counts)
	WriteRate        float64  `json:"writeRate"` // RU/s the suffixes are sized for
	Notes            []string `json:"notes"`
}

// Candidate is one partition key judged on the sample.
type Candidate struct {
	Paths   []string `json:"paths"`
	Kind    string   `json:"kind"` // Hash or MultiHash
	Rank    int      `json:"rank"`
	Score   int      `json:"score"` // 0-100
	Verdict string   `json:"verdict"`
	// Cardinality is the estimated number of distinct values in the whole container.
	Cardinality    int64 `json:"cardinality"`
	SampleDistinct int   `json:"sampleDistinct"`
	// StorageSkew is the largest logical partition's item count over the mean (1 = even).
	StorageSkew  float64 `json:"storageSkew"`
	LargestShare float64 `json:"largestShare"` // share of items in the largest logical partition
	// RequestSkew is the hottest logical partition's RU over the mean; null when not known.
	RequestSkew *float64 `json:"requestSkew"`
	// FanOutShare is the share of query executions that would read every partition; null
	// without queries.
	FanOutShare  *float64 `json:"fanOutShare"`
	MissingShare float64  `json:"missingShare"` // items without a value at the path(s)
	CapRisk      string   `json:"capRisk"`      // none, low or high
	// ProjectedLargestBytes is the largest logical partition's projected size.
	ProjectedLargestBytes int64    `json:"projectedLargestBytes"`
	IsCurrent             bool     `json:"isCurrent"`
	Factors               Factors  `json:"factors"`
	Reasons               []string `json:"reasons"`
}

// Factors are the terms of the score, each in [0, 1].
type Factors struct {
	Cardinality float64 `json:"cardinality"`
	Storage     float64 `json:"storage"`
	Request     float64 `json:"request"`
	FanOut      float64 `json:"fanOut"`
	Presence    float64 `json:"presence"`
	Cap         float64 `json:"cap"`
}

// Synthetic is a proposed synthetic partition key: a property the application computes.
type Synthetic struct {
	Kind        string   `json:"kind"` // concat, random-suffix or hash-suffix
	Description string   `json:"description"`
	Paths       []string `json:"paths"`    // the properties it is built from
	Property    string   `json:"property"` // the new key path, e.g. /partitionKey
	Suffixes    int      `json:"suffixes,omitempty"`
	Example     string   `json:"example"` // the value the first sampled item would get
	// Cardinality is the distinct values the key takes over the sample.
	Cardinality     int      `json:"cardinality"`
	LargestShare    float64  `json:"largestShare"`
	PredictedSpread []Share  `json:"predictedSpread"`
	Reasons         []string `json:"reasons"`
}

// Share is one physical partition's part of the sampled items.
type Share struct {
	Partition int     `json:"partition"` // index in EPK order
	Items     int     `json:"items"`
	Share     float64 `json:"share"`
}
