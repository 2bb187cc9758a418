package engine

import (
	"encoding/base64"
	"encoding/json"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/ru"
)

// ReadFeedPage is one page of a container's items in (EPK, id) order.
type ReadFeedPage struct {
	Docs   [][]byte
	Next   string // continuation token; empty on the last page
	Charge float64
	// Partitions are the ids of the partitions the page read from, with their LSNs.
	Partitions map[uint32]uint64
}

// DefaultPageSize is how many items a page holds when the client leaves it to the server.
const DefaultPageSize = 100

type readFeedToken struct {
	EPK string `json:"e"` // hex
	ID  string `json:"i"`
}

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
// start). Tokens are positions in the container's key order, so they stay valid when
// partitions split.
func (c *Container) ReadFeed(r epk.Range, token string, max int) (ReadFeedPage, error) {
	c.splitMu.RLock()
	defer c.splitMu.RUnlock()
	if max <= 0 {
		max = DefaultPageSize
	}
	var after *partition.Cursor
	if token != "" {
		cur, err := decodeReadFeedToken(token)
		if err != nil {
			return ReadFeedPage{Charge: ru.Miss()}, err
		}
		after = &cur
	}
	page := ReadFeedPage{Partitions: map[uint32]uint64{}}
	bytes := 0
	var last partition.Cursor
	for _, p := range c.routes.Load().parts {
		pr := p.Range()
		if after != nil && pr.Max <= after.EPK || pr.Max <= r.Min || pr.Min >= r.Max {
			continue
		}
		page.Partitions[p.ID()] = p.Stats().LSN
		err := p.Scan(r, after, func(e epk.EPK, id string, d partition.Doc) bool {
			if len(page.Docs) == max {
				return false
			}
			page.Docs = append(page.Docs, append([]byte(nil), d.JSON...))
			bytes += len(d.JSON)
			last = partition.Cursor{EPK: e, ID: id}
			return true
		})
		if err != nil {
			return ReadFeedPage{Charge: ru.Miss()}, fault.New(fault.Internal, "reading items: %v", err)
		}
		if len(page.Docs) == max {
			break
		}
	}
	if len(page.Docs) == max {
		page.Next = encodeReadFeedToken(last)
	}
	page.Charge = ru.Feed(len(page.Docs), bytes, len(page.Partitions))
	var used []*partition.Partition
	for _, p := range c.routes.Load().parts {
		if _, ok := page.Partitions[p.ID()]; ok {
			used = append(used, p)
		}
	}
	if len(used) > 0 {
		spend(page.Charge, used...)
	}
	return page, nil
}

func encodeReadFeedToken(c partition.Cursor) string {
	b, _ := json.Marshal(readFeedToken{EPK: c.EPK.Hex(), ID: c.ID})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeReadFeedToken(s string) (partition.Cursor, error) {
	bad := fault.New(fault.BadRequest, "The continuation token %q is not valid; pass back the token a previous page returned", s)
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return partition.Cursor{}, bad
	}
	var t readFeedToken
	if err := json.Unmarshal(raw, &t); err != nil {
		return partition.Cursor{}, bad
	}
	e, err := epk.ParseHex(t.EPK)
	if err != nil {
		return partition.Cursor{}, bad
	}
	return partition.Cursor{EPK: e, ID: t.ID}, nil
}
