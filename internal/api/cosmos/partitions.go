package cosmos

import (
	"net/http"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/ru"
)

// PartitionsResponse is the body of GET /dbs/{db}/colls/{c}/partitions, Partita's own admin
// view of a container's physical partitions (not a Cosmos resource).
type PartitionsResponse struct {
	Database   string          `json:"database"`
	Container  string          `json:"container"`
	Partitions []PartitionJSON `json:"partitions"`
	// NonPartitioned says that the container was created without a partition key: it has the
	// system key, /_partitionKey.
	NonPartitioned bool `json:"nonPartitioned,omitempty"`
	// HistoryStep is the width in seconds of each point of the partitions'
	// normalizedRUHistory.
	HistoryStep int `json:"historyStepSeconds"`
}

// PartitionJSON is one physical partition in PartitionsResponse.
type PartitionJSON struct {
	ID             uint32        `json:"id"`
	MinInclusive   string        `json:"minInclusive"`
	MaxExclusive   string        `json:"maxExclusive"`
	Parents        []uint32      `json:"parents"`
	Items          int64         `json:"items"`
	Bytes          int64         `json:"bytes"`
	LSN            uint64        `json:"lsn"`
	RUPerSecond    float64       `json:"ruPerSecond"`             // the partition's budget
	RULastSecond   float64       `json:"ruLastSecond"`            // spent in the last complete second
	NormalizedRU   float64       `json:"normalizedRUConsumption"` // highest share of the budget in a second of the last minute
	RUTotal        float64       `json:"ruTotal"`
	Throttled      uint64        `json:"throttled"`
	LargestLogical []LogicalJSON `json:"largestLogicalPartitions"`
	HottestLogical []LogicalJSON `json:"hottestLogicalPartitions"`
	// History is the partition's busiest second in each window of the last five minutes in
	// which it spent anything, oldest first. A partition made by a split starts its own.
	History []TrendJSON `json:"normalizedRUHistory"`
}

// TrendJSON is one window of a partition's consumption history.
type TrendJSON struct {
	Time       int64   `json:"time"`       // the window's first second, Unix time
	Normalized float64 `json:"normalized"` // the highest share of the budget spent in one second; 0 when unlimited
	PeakRU     float64 `json:"peakRU"`     // the most RUs spent in one second
}

// LogicalJSON is one logical partition, named by its EPK.
type LogicalJSON struct {
	EPK   string  `json:"epk"`
	Items int64   `json:"items,omitempty"`
	Bytes int64   `json:"bytes,omitempty"`
	RU    float64 `json:"ru,omitempty"`
}

func logicalJSON(ls []engine.LogicalStat) []LogicalJSON {
	out := make([]LogicalJSON, len(ls))
	for i, l := range ls {
		out[i] = LogicalJSON{EPK: l.EPK.Hex(), Items: l.Items, Bytes: l.Bytes, RU: l.RU}
	}
	return out
}

// partitions answers the admin view of a container's partitions.
func (c *call) partitions() error {
	ms, err := c.h.engine.ContainerMetrics(c.res.segs[1], c.res.segs[3], 3)
	if err != nil {
		return err
	}
	info, err := c.h.engine.ContainerInfo(c.res.segs[1], c.res.segs[3]) // a CQL table's too
	if err != nil {
		return err
	}
	resp := PartitionsResponse{Database: c.res.segs[1], Container: c.res.segs[3], HistoryStep: ru.TrendStep, NonPartitioned: info.PartitionKey.SystemKey}
	for _, m := range ms {
		resp.Partitions = append(resp.Partitions, partitionJSON(m))
	}
	return c.replyJSON(http.StatusOK, resp)
}

func partitionJSON(m engine.PartitionMetrics) PartitionJSON {
	parents := m.Parents
	if parents == nil {
		parents = []uint32{}
	}
	history := make([]TrendJSON, len(m.Trend))
	for i, p := range m.Trend {
		history[i] = TrendJSON{Time: p.Start.Unix(), Normalized: p.Normalized, PeakRU: p.PeakRU}
	}
	return PartitionJSON{
		ID: m.ID, MinInclusive: m.Range.Min.Hex(), MaxExclusive: m.Range.Max.Hex(), Parents: parents,
		Items: m.Items, Bytes: m.Bytes, LSN: m.LSN, RUPerSecond: m.PerSecond, RULastSecond: m.LastSecond,
		NormalizedRU: m.NormalizedUse, RUTotal: m.Total, Throttled: m.Throttled,
		LargestLogical: logicalJSON(m.Largest), HottestLogical: logicalJSON(m.Hottest), History: history,
	}
}
