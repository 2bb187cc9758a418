package engine

import (
	"errors"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/ru"
)

// ItemOptions qualify an item operation.
type ItemOptions struct {
	// PartitionKey is the key the client named (the partition key header). For writes with a
	// body it is optional and, when given, must match the body's; reads and deletes need it.
	PartitionKey epk.Key
	// IfMatch, when not empty, is the etag (unquoted) the current version must have.
	IfMatch string
}

// ItemResult is the outcome of an item operation. Charge is set on failures too.
type ItemResult struct {
	Doc         []byte // the stored item; nil for deletes
	ETag        string // unquoted
	LSN         uint64
	PartitionID uint32
	Created     bool // the operation created the item
	Charge      float64
}

// RID is the container's resource id.
func (c *Container) RID() string { return c.rid.String() }

// Def returns the container's partition key definition.
func (c *Container) Def() PartitionKeyDef { return c.def }

// EPK hashes a full partition key value of this container.
func (c *Container) EPK(key epk.Key) (epk.EPK, error) {
	if len(key) != len(c.paths) {
		return "", fault.New(fault.BadRequest, "The partition key has %d value(s) but the container's definition has %d path(s) %v",
			len(key), len(c.paths), c.def.Paths)
	}
	if err := document.CheckPartitionKey(key); err != nil {
		return "", err
	}
	return c.hash(key)
}

// maxV1KeyBytes is the partition key size of hash version 1 containers: their EPKs keep only
// the first 100 characters of a string, so longer values could not be told apart (Cosmos
// calls version 2 "large partition keys" for this reason).
const maxV1KeyBytes = 100

// hash turns a key into its EPK, refusing what the container's hash cannot represent.
func (c *Container) hash(key epk.Key) (epk.EPK, error) {
	if c.scheme == epk.SchemeV1 {
		for _, v := range key {
			if v.Kind == epk.KindString && len(v.Str) > maxV1KeyBytes {
				return "", fault.New(fault.BadRequest, "The partition key value is %d bytes; containers with partition key version 1 accept at most %d. Create the container with version 2 for large partition keys", len(v.Str), maxV1KeyBytes)
			}
		}
	}
	return c.scheme.Hash(key), nil
}

// parse validates an item body and finds its EPK, checking it against the key the client named.
func (c *Container) parse(body []byte, named epk.Key) (*document.Item, epk.EPK, error) {
	item, key, err := document.Parse(body, c.paths)
	if err != nil {
		return nil, "", err
	}
	e, err := c.hash(key)
	if err != nil {
		return nil, "", err
	}
	if named != nil {
		ne, err := c.EPK(named)
		if err != nil {
			return nil, "", err
		}
		if ne != e {
			return nil, "", fault.New(fault.BadRequest, "PartitionKey extracted from document doesn't match the one specified in the header")
		}
	}
	return item, e, nil
}

// CreateItem creates an item; 409 if its (partition key, id) exists.
func (c *Container) CreateItem(body []byte, o ItemOptions) (ItemResult, error) {
	return c.write(partition.Create, "", body, o)
}

// UpsertItem creates or replaces an item.
func (c *Container) UpsertItem(body []byte, o ItemOptions) (ItemResult, error) {
	return c.write(partition.Upsert, "", body, o)
}

// ReplaceItem replaces the item id; the body's id must be id.
func (c *Container) ReplaceItem(id string, body []byte, o ItemOptions) (ItemResult, error) {
	return c.write(partition.Replace, id, body, o)
}

func (c *Container) write(kind partition.WriteKind, urlID string, body []byte, o ItemOptions) (ItemResult, error) {
	c.splitMu.RLock()
	defer c.splitMu.RUnlock()
	item, e, err := c.parse(body, o.PartitionKey)
	if err != nil {
		return ItemResult{Charge: ru.Miss()}, err
	}
	if kind == partition.Replace && item.ID != urlID {
		return ItemResult{Charge: ru.Miss()}, fault.New(fault.BadRequest, "The id %q in the body does not match the id %q in the request path", item.ID, urlID)
	}
	terms := partition.TermsOf(item.Value) // here, in parallel, rather than on the writer
	p := c.routes.Load().lookup(e)
	if err := c.admit(p); err != nil {
		return ItemResult{PartitionID: p.ID()}, err
	}
	res, err := p.Apply(partition.Write{Kind: kind, EPK: e, ID: item.ID, Item: item, IfMatch: o.IfMatch, Terms: terms})
	if err != nil {
		spendItem(ru.Miss(), p, e)
		return ItemResult{Charge: ru.Miss(), PartitionID: p.ID()}, err
	}
	r := res[0]
	out := ItemResult{Doc: r.Doc.JSON, ETag: r.Doc.ETag(), LSN: r.Doc.LSN, PartitionID: p.ID(), Created: r.Created}
	if r.Created {
		out.Charge = ru.Insert(len(r.Doc.JSON))
	} else {
		out.Charge = ru.Replace(r.PrevBytes, len(r.Doc.JSON))
	}
	spendItem(out.Charge, p, e)
	c.e.maybeSplit(c, p)
	return out, nil
}

// route finds the partition of a full partition key and admits the request to its budget.
func (c *Container) route(key epk.Key) (epk.EPK, *partition.Partition, error) {
	e, err := c.EPK(key)
	if err != nil {
		return "", nil, err
	}
	p := c.routes.Load().lookup(e)
	return e, p, c.admit(p)
}

// missCharge is what a request that did no work costs: nothing when it was throttled, the
// minimum otherwise.
func missCharge(err error) float64 {
	if errors.Is(err, fault.Throttled) {
		return 0
	}
	return ru.Miss()
}

// ReadItem reads the item (key, id).
func (c *Container) ReadItem(key epk.Key, id string) (ItemResult, error) {
	return c.ReadItemTo(nil, key, id)
}

// ReadItemTo is ReadItem appending the item's JSON to dst, for callers that reuse buffers.
func (c *Container) ReadItemTo(dst []byte, key epk.Key, id string) (ItemResult, error) {
	c.splitMu.RLock()
	defer c.splitMu.RUnlock()
	e, p, err := c.route(key)
	if err != nil {
		return ItemResult{Charge: missCharge(err)}, err
	}
	d, err := p.Read(e, id, dst)
	if err != nil {
		spendItem(ru.Miss(), p, e)
		return ItemResult{Charge: ru.Miss(), PartitionID: p.ID()}, err
	}
	charge := ru.PointRead(len(d.JSON))
	spendItem(charge, p, e)
	// The session token names the partition's LSN, which is at least the item version's.
	return ItemResult{Doc: d.JSON, ETag: d.ETag(), LSN: max(d.LSN, p.Stats().LSN), PartitionID: p.ID(), Charge: charge}, nil
}

// DeleteItem deletes the item (key, id).
func (c *Container) DeleteItem(key epk.Key, id string, o ItemOptions) (ItemResult, error) {
	c.splitMu.RLock()
	defer c.splitMu.RUnlock()
	e, p, err := c.route(key)
	if err != nil {
		return ItemResult{Charge: missCharge(err)}, err
	}
	res, err := p.Apply(partition.Write{Kind: partition.Delete, EPK: e, ID: id, IfMatch: o.IfMatch})
	if err != nil {
		spendItem(ru.Miss(), p, e)
		return ItemResult{Charge: ru.Miss(), PartitionID: p.ID()}, err
	}
	charge := ru.Delete(res[0].PrevBytes)
	spendItem(charge, p, e)
	return ItemResult{PartitionID: p.ID(), Charge: charge, LSN: res[0].Doc.LSN}, nil
}

// Partition returns the partition that owns e, for tests and tools that inspect placement.
func (c *Container) Partition(e epk.EPK) *partition.Partition { return c.routes.Load().lookup(e) }

// Partitions returns the container's partitions in EPK order.
func (c *Container) Partitions() []*partition.Partition {
	return append([]*partition.Partition(nil), c.routes.Load().parts...)
}

// Usage is what a container holds.
type Usage struct {
	Items int64
	Bytes int64
}

// Usage sums the statistics of the container's partitions.
func (c *Container) Usage() Usage {
	var u Usage
	for _, p := range c.routes.Load().parts {
		s := p.Stats()
		u.Items += s.Items
		u.Bytes += s.Bytes
	}
	return u
}

// Session is the session token position of the partition that owns key: its id and LSN.
func (c *Container) Session(key epk.Key) (partition uint32, lsn uint64) {
	e, err := c.EPK(key)
	if err != nil {
		return 0, 0
	}
	p := c.routes.Load().lookup(e)
	return p.ID(), p.Stats().LSN
}
