package cosmos

import (
	"encoding/json"
	"net/http"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/epk"
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
	// HashVersion is the version of the hash that places the container's keys (1 or 2).
	HashVersion int `json:"hashVersion"`
	// KeyDeletes are the deletions of partition keys' items in progress (delete by partition
	// key); each leaves the list once its items are deleted.
	KeyDeletes []KeyDeleteJSON `json:"partitionKeyDeletes,omitempty"`
}

// KeyDeleteJSON is a deletion of a partition key's items in progress, in PartitionsResponse.
type KeyDeleteJSON struct {
	PartitionKey json.RawMessage `json:"partitionKey"`
	Since        int64           `json:"since"`     // when it was asked, Unix time
	Partition    uint32          `json:"partition"` // the physical partition that holds the key
}

// PartitionJSON is one physical partition in PartitionsResponse.
type PartitionJSON struct {
	ID           uint32 `json:"id"`
	MinInclusive string `json:"minInclusive"`
	MaxExclusive string `json:"maxExclusive"`
	// HashStart and HashEnd are where the range begins and ends in the space of hashes, from
	// 0 to 1 (epk.Scheme.Position): drawn by them, each range is as wide as its share of the
	// keys. The EPKs themselves are no such scale (every version 1 EPK begins near 05C1).
	HashStart      float64       `json:"hashStart"`
	HashEnd        float64       `json:"hashEnd"`
	Parents        []uint32      `json:"parents"`
	Items          int64         `json:"items"`
	Bytes          int64         `json:"bytes"`
	LSN            uint64        `json:"lsn"`
	RUPerSecond    float64       `json:"ruPerSecond"`             // the partition's budget
	RULastSecond   float64       `json:"ruLastSecond"`            // spent in the last complete second
	NormalizedRU   float64       `json:"normalizedRUConsumption"` // highest share of the budget in a second of the last minute
	BurstBank      float64       `json:"burstRU,omitempty"`       // what burst capacity has banked (--burst-capacity)
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

// LogicalJSON is one logical partition, named by its EPK and by its partition key value (as
// JSON; absent when no item of it could be read).
type LogicalJSON struct {
	EPK   string          `json:"epk"`
	Key   json.RawMessage `json:"key,omitempty"`
	Items int64           `json:"items,omitempty"`
	Bytes int64           `json:"bytes,omitempty"`
	RU    float64         `json:"ru,omitempty"`
}

func logicalJSON(ls []engine.LogicalStat) []LogicalJSON {
	out := make([]LogicalJSON, len(ls))
	for i, l := range ls {
		out[i] = LogicalJSON{EPK: l.EPK.Hex(), Key: l.Key, Items: l.Items, Bytes: l.Bytes, RU: l.RU}
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
	scheme := info.PartitionKey.Scheme()
	resp := PartitionsResponse{Database: c.res.segs[1], Container: c.res.segs[3], HistoryStep: ru.TrendStep, NonPartitioned: info.PartitionKey.SystemKey,
		HashVersion: 2}
	if scheme == epk.SchemeV1 {
		resp.HashVersion = 1
	}
	for _, m := range ms {
		resp.Partitions = append(resp.Partitions, partitionJSON(m, scheme))
	}
	if ct, err := c.container(); err == nil {
		for _, k := range ct.KeyDeletes() {
			resp.KeyDeletes = append(resp.KeyDeletes, KeyDeleteJSON{PartitionKey: k.Key, Since: k.Since.Unix(), Partition: k.Partition})
		}
	}
	return c.replyJSON(http.StatusOK, resp)
}

func partitionJSON(m engine.PartitionMetrics, s epk.Scheme) PartitionJSON {
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
		HashStart: s.Position(m.Range.Min), HashEnd: s.Position(m.Range.Max),
		Items: m.Items, Bytes: m.Bytes, LSN: m.LSN, RUPerSecond: m.PerSecond, RULastSecond: m.LastSecond,
		NormalizedRU: m.NormalizedUse, BurstBank: m.Bank, RUTotal: m.Total, Throttled: m.Throttled,
		LargestLogical: logicalJSON(m.Largest), HottestLogical: logicalJSON(m.Hottest), History: history,
	}
}
