package engine

import (
	"context"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/ru"
)

// ReadFeedPage is one page of a container's items in item order: partitions in range order,
// each in creation order.
type ReadFeedPage struct {
	Docs   [][]byte
	Next   string // continuation token; empty on the last page
	Charge float64
	// Partitions are the ids of the partitions the page read from, with their LSNs.
	Partitions map[uint32]uint64
}

// DefaultPageSize is how many items a page holds when the client leaves it to the server.
const DefaultPageSize = 100

// KeyRange is the EPK range of the items under key: one logical partition for a full key, or
// every logical partition under a prefix of a hierarchical key.
func (c *Container) KeyRange(key epk.Key) (epk.Range, error) {
	if c.scheme == epk.SchemeMulti && len(key) > 0 && len(key) < len(c.paths) {
		if err := document.CheckPartitionKey(key); err != nil {
			return epk.Range{}, err
		}
		return epk.PrefixRange(epk.HashMulti(key)), nil
	}
	e, err := c.EPK(key)
	if err != nil {
		return epk.Range{}, err
	}
	return epk.Range{Min: e, Max: e + "\x00"}, nil
}

// ReadFeed returns up to max items of the range r after the position in token ("" for the
// start). Tokens name the partition range and the creation sequence they stopped at, so they
// stay valid when partitions split: the children resume after the same sequence.
func (c *Container) ReadFeed(r epk.Range, token string, max int) (ReadFeedPage, error) {
	return c.ReadFeedAt(context.Background(), ReadConsistency{}, r, token, max)
}

// ReadFeedAt is ReadFeed for a client's read at rc; ctx carries its priority (ru.WithPriority).
func (c *Container) ReadFeedAt(ctx context.Context, rc ReadConsistency, r epk.Range, token string, max int) (ReadFeedPage, error) {
	c.splitMu.RLock()
	defer c.splitMu.RUnlock()
	if max <= 0 {
		max = DefaultPageSize
	}
	var after *query.Resume
	if token != "" {
		var ok bool
		if after, ok = query.DecodeResume(token); !ok {
			return ReadFeedPage{Charge: ru.Miss()}, fault.New(fault.BadRequest, "The continuation token %q is not valid; pass back the token a previous page returned", token)
		}
	}
	page := ReadFeedPage{Partitions: map[uint32]uint64{}}
	bytes := 0
	var last query.Position
	ranges := []epk.Range{r}
	parts, _ := c.queryParts(ranges)
	if rc.Level == Session {
		parts, _ = c.sessionParts(parts, rc)
	}
	prioritize(parts, ru.PriorityOf(ctx))
	var used []*partition.Partition
	for _, p := range parts {
		pr := p.Range()
		start, ok := after.Start(string(pr.Min), string(pr.Max))
		if !ok {
			continue
		}
		f := func(d partition.Doc) bool {
			page.Docs = append(page.Docs, append([]byte(nil), d.JSON...))
			bytes += len(d.JSON)
			last = query.Position{Min: string(pr.Min), Max: string(pr.Max), Seq: d.Seq}
			return len(page.Docs) < max
		}
		var err error
		if p.local != nil {
			used = append(used, p.local)
			err = c.reader(p.local, rc).Scan(ranges, start, f)
		} else {
			err = p.remote.read(&nodecall.Read{All: true, Consistency: consistencyToWire(rc)}, ranges, start, f)
		}
		if err != nil {
			return ReadFeedPage{Charge: ru.Miss() * rc.readFactor()}, readFailed("items", err)
		}
		page.Partitions[p.ID()] = p.lsn() // after the read (a remote one's as its node read it)
		if len(page.Docs) == max {
			break
		}
	}
	if len(page.Docs) == max {
		page.Next = query.EncodeResume(after.After(last))
	}
	page.Charge = ru.Feed(len(page.Docs), bytes, len(page.Partitions)) * rc.readFactor()
	if len(used) > 0 {
		spend(page.Charge, ru.PriorityOf(ctx), used...) // a remote partition's budget is its own node's
	}
	return page, nil
}
