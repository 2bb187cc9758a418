package engine

import (
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/status"
)

// QueryResult is a page of query results with what it cost.
type QueryResult struct {
	query.Page
	Charge float64
	// Partitions are the partitions the query read, with their LSNs, for session tokens.
	Partitions map[uint32]uint64
}

// Query runs a prepared query over the items whose EPK lies in r.
func (c *Container) Query(p *query.Prepared, r epk.Range, opts query.Options) (QueryResult, error) {
	src := &partitionSource{r: r}
	for _, part := range c.routes.Load().parts {
		if pr := part.Range(); pr.Max > r.Min && pr.Min < r.Max {
			src.parts = append(src.parts, part)
		}
	}
	page, err := p.Run(src, opts)
	res := QueryResult{Page: page, Partitions: map[uint32]uint64{}}
	for _, part := range src.parts {
		res.Partitions[part.ID()] = part.Stats().LSN
	}
	res.Charge = ru.Query(page.Stats.ItemsLoaded, page.Stats.BytesLoaded, page.Stats.Results, len(src.parts))
	return res, err
}

// PartitionRange returns the EPK range of the partition with the given id, or 410/1002 when
// no such partition exists any more (it was split): the client must re-read the ranges.
func (c *Container) PartitionRange(id uint32) (epk.Range, error) {
	for _, p := range c.routes.Load().parts {
		if p.ID() == id {
			return p.Range(), nil
		}
	}
	return epk.Range{}, &status.Error{Status: 410, Substatus: status.SubPartitionKeyRangeGone,
		Message: "The partition key range is gone (it was split); re-read the partition key ranges"}
}

// partitionSource reads a range of EPKs across the partitions that hold it, in key order.
type partitionSource struct {
	r     epk.Range
	parts []*partition.Partition
}

func (s *partitionSource) Scan(from *query.Position, inclusive bool, fn func(query.Position, []byte) (bool, error)) error {
	var cur *partition.Cursor
	if from != nil {
		cur = &partition.Cursor{EPK: epk.EPK(from.EPK), ID: from.ID, Inclusive: inclusive}
	}
	var ferr error
	for _, p := range s.parts {
		if cur != nil && p.Range().Max <= cur.EPK {
			continue
		}
		stopped := false
		err := p.Scan(s.r, cur, func(e epk.EPK, id string, d partition.Doc) bool {
			more, err := fn(query.Position{EPK: string(e), ID: id, Created: d.Created}, d.JSON)
			if err != nil || !more {
				ferr, stopped = err, true
				return false
			}
			return true
		})
		if err != nil {
			return status.Internal("reading items: %v", err)
		}
		if stopped {
			return ferr
		}
	}
	return nil
}
