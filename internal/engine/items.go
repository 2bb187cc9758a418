package engine

import (
	"context"
	"strconv"

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
	// IndexingDirective is the write's x-ms-indexing-directive: "" (the policy's default),
	// "Include" or "Exclude" (see indexpolicy.go).
	IndexingDirective string
	// PreTriggers and PostTriggers name the container's triggers to run around a write
	// (x-ms-documentdb-pre-trigger-include / post-trigger-include); at most one of each.
	PreTriggers, PostTriggers []string
	// Headers are the client's request headers, by lower-case name, which the triggers read
	// (getContext().getRequest().getValue); set only with triggers.
	Headers map[string]string
	// Context is the request's: its trace and activity id go with a write this node forwards
	// to its partition's leaseholder (nil: none).
	Context context.Context
}

// ctx is o's Context, or the background one.
func (o *ItemOptions) ctx() context.Context {
	if o.Context == nil {
		return context.Background()
	}
	return o.Context
}

// ItemResult is the outcome of an item operation. Charge is set on failures too.
type ItemResult struct {
	Doc  []byte // the stored item; nil for deletes
	ETag string // unquoted
	// LSN is the partition's as the operation saw it: the write's own, or at least the read
	// version's; ItemLSN the item version's (0 for deletes).
	LSN, ItemLSN uint64
	PartitionID  uint32
	Created      bool // the operation created the item
	Charge       float64
}

// RID is the container's resource id.
func (c *Container) RID() string { return c.rid.String() }

// Def returns the container's partition key definition.
func (c *Container) Def() PartitionKeyDef { return c.def }

// EPK hashes a full partition key value of this container.
func (c *Container) EPK(key epk.Key) (epk.EPK, error) {
	if c.def.SystemKey {
		key = epk.SystemNone(key) // however its clients name none, or name no key at all
	}
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

// parse validates an item and finds its EPK, checking it against the key the client named.
func (c *Container) parse(src document.Source, named epk.Key) (*document.Item, epk.EPK, error) {
	item, key, err := src.Parse(c.paths)
	if err != nil {
		return nil, "", err
	}
	e, err := c.hash(c.undefinedIfNone(key))
	if err != nil {
		return nil, "", err
	}
	if named != nil {
		ne, err := c.EPK(c.undefinedIfNone(named))
		if err != nil {
			return nil, "", err
		}
		if ne != e {
			return nil, "", fault.New(fault.BadRequest, "The partition key extracted from the item does not match the partition key the request names")
		}
	}
	return item, e, nil
}

// undefinedIfNone reads a key with no values at all ([], the SDKs' PartitionKey.None, which
// the JavaScript SDK names for an item whose key path holds an object or array) as the
// undefined key; in a container with the system key, a null value too (epk.SystemNone).
func (c *Container) undefinedIfNone(key epk.Key) epk.Key {
	if c.def.SystemKey {
		return epk.SystemNone(key)
	}
	if key == nil || len(key) > 0 {
		return key
	}
	key = make(epk.Key, len(c.paths))
	for i := range key {
		key[i] = epk.Undefined()
	}
	return key
}

// CreateItem creates an item given as JSON; Conflict if its (partition key, id) exists.
func (c *Container) CreateItem(body []byte, o ItemOptions) (ItemResult, error) {
	return c.WriteItem(OpCreate, "", document.FromJSON(body), o)
}

// UpsertItem creates or replaces an item given as JSON.
func (c *Container) UpsertItem(body []byte, o ItemOptions) (ItemResult, error) {
	return c.WriteItem(OpUpsert, "", document.FromJSON(body), o)
}

// ReplaceItem replaces the item id with one given as JSON; a body with another id renames it.
func (c *Container) ReplaceItem(id string, body []byte, o ItemOptions) (ItemResult, error) {
	return c.WriteItem(OpReplace, id, document.FromJSON(body), o)
}

// WriteItem creates (OpCreate), upserts (OpUpsert) or replaces (OpReplace, of the item id) an
// item given in either form: JSON bytes, or a value a front end already holds.
func (c *Container) WriteItem(kind OpKind, id string, src document.Source, o ItemOptions) (ItemResult, error) {
	// A plain write goes to the partition's leader, wherever it is (applyLed); one with
	// triggers runs, as a transaction, on a node that holds the partition.
	item, e, err := c.parse(src, o.PartitionKey)
	if err != nil {
		return ItemResult{Charge: ru.Miss()}, err
	}
	if len(o.PreTriggers)+len(o.PostTriggers) > 0 {
		return c.callsAt(e).writeTriggered(kind, id, src, o)
	}
	op, err := c.writeOp(kind, id, e, item, o.IfMatch)
	if err == nil {
		err = c.direct(&op, item, o.IndexingDirective)
	}
	if err != nil {
		return ItemResult{Charge: ru.Miss()}, err
	}
	return c.executeOne(o.ctx(), e, nil, op)
}

// writeOp is the partition operation that writes item; id, when given, must be the item's.
func (c *Container) writeOp(kind OpKind, id string, e epk.EPK, item *document.Item, ifMatch string) (partition.Operation, error) {
	if err := c.checkItemTTL(item.Value); err != nil {
		return partition.Operation{}, err
	}
	pol := c.policy()
	op := partition.Operation{EPK: e, ID: item.ID, Item: item, IfMatch: ifMatch,
		Terms: partition.TermsOf(item.Value, pol, c.search.fullText), TermsPolicy: pol, // here, in parallel, rather than on the writer
		Unique: c.unique.Entries(item.Value)}
	switch kind {
	case OpCreate:
		op.Kind = partition.Create
	case OpUpsert:
		op.Kind = partition.Upsert
	case OpReplace:
		op.Kind = partition.Replace
		if id != "" {
			op.ID = id // a body with another id renames the item, as the service allows
		}
	default:
		return op, fault.New(fault.BadRequest, "Operation %q does not write an item", kind)
	}
	return op, nil
}

// executeOne runs one operation through the pipeline and describes its outcome.
func (c *Container) executeOne(ctx context.Context, e epk.EPK, dst []byte, op partition.Operation) (ItemResult, error) {
	x, err := c.execute(ctx, e, dst, op)
	out := ItemResult{Charge: x.charge}
	if x.p != nil {
		out.PartitionID = x.p.ID()
	} else {
		out.PartitionID = c.PartitionID(e) // written on another node
	}
	if err != nil {
		return out, err
	}
	r := x.result(0)
	out.LSN, out.Created = r.Doc.LSN, r.Created
	if op.Kind == partition.Read {
		// The session token names the partition's LSN, which is at least the item version's.
		out.LSN = max(out.LSN, x.p.Stats().LSN)
	}
	if op.Kind != partition.Delete {
		out.Doc, out.ETag, out.ItemLSN = r.Doc.JSON, r.Doc.ETag(), r.Doc.LSN
	}
	return out, nil
}

// ReadItem reads the item (key, id).
func (c *Container) ReadItem(key epk.Key, id string) (ItemResult, error) {
	return c.ReadItemTo(nil, key, id)
}

// ReadItemTo is ReadItem appending the item's JSON to dst, for callers that reuse buffers.
func (c *Container) ReadItemTo(dst []byte, key epk.Key, id string) (ItemResult, error) {
	return c.ReadItemAt(context.Background(), dst, key, id, ReadConsistency{})
}

// ReadItemAt is ReadItemTo for a client's read at rc; ctx carries its priority (ru.WithPriority).
func (c *Container) ReadItemAt(ctx context.Context, dst []byte, key epk.Key, id string, rc ReadConsistency) (ItemResult, error) {
	return c.readItem(ctx, dst, key, id, rc, true)
}

// readItem is ReadItemAt; elsewhere says whether a session read this replica cannot serve may
// be served by another (not for a read another node delegated here, which would go back).
func (c *Container) readItem(ctx context.Context, dst []byte, key epk.Key, id string, rc ReadConsistency, elsewhere bool) (ItemResult, error) {
	e, err := c.EPK(key)
	if err != nil {
		return ItemResult{Charge: ru.Miss() * rc.readFactor()}, err
	}
	for attempt := 0; ; attempt++ {
		calls := c.callsAt(e)
		r, err := calls.read(ctx, dst, e, key, id, rc, elsewhere)
		// This node's replica was removed while the read ran (discarded, so it refused): the
		// range is read where it is held now.
		if l, ok := calls.(localCalls); ok && l.p != nil && partition.Closed(err) && c.routes.Load().lookup(e) != l.p && attempt < 2 {
			continue
		}
		return r, err
	}
}

// DeleteItem deletes the item (key, id).
func (c *Container) DeleteItem(key epk.Key, id string, o ItemOptions) (ItemResult, error) {
	e, err := c.EPK(key)
	if err != nil {
		return ItemResult{Charge: ru.Miss()}, err
	}
	if len(o.PreTriggers)+len(o.PostTriggers) > 0 {
		return c.callsAt(e).deleteTriggered(e, key, id, o)
	}
	return c.executeOne(o.ctx(), e, nil, partition.Operation{Kind: partition.Delete, EPK: e, ID: id, IfMatch: o.IfMatch})
}

// PartitionID is the id of the partition that owns e, for tests and tools that inspect placement.
func (c *Container) PartitionID(e epk.EPK) uint32 {
	rt := c.routes.Load()
	if rr, ok := rt.remoteAt(e); ok {
		return rr.id
	}
	return rt.lookup(e).ID()
}

// partitions returns the container's partitions in EPK order.
func (c *Container) partitions() []*partition.Partition {
	return append([]*partition.Partition(nil), c.routes.Load().parts...)
}

// Usage is what a container holds.
type Usage struct {
	Items int64
	Bytes int64
}

// ResourceQuota is a container's quota as Cosmos DB reports it (x-ms-resource-quota, and a
// script's getMaxResourceQuota): documents of 2 MB, no other limit.
const ResourceQuota = "documentSize=2048;documentsSize=-1;documentsCount=-1;collectionSize=-1;"

// AppendUsage appends u as Cosmos DB reports a container's usage (x-ms-resource-usage, and a
// script's getResourceQuotaCurrentUsage): sizes in KB, and the item count.
func AppendUsage(b []byte, u Usage) []byte {
	kb := (u.Bytes + 1023) / 1024
	b = strconv.AppendInt(append(b, "documentSize="...), kb, 10)
	b = strconv.AppendInt(append(b, ";documentsSize="...), kb, 10)
	b = strconv.AppendInt(append(b, ";documentsCount="...), u.Items, 10)
	b = strconv.AppendInt(append(b, ";collectionSize="...), kb, 10)
	return append(b, ';')
}

// Usage sums the statistics of the container's partitions: of every one by the figures
// gathered from the cluster once its version shares budgets (figures.go), else of those this
// node holds.
func (c *Container) Usage() Usage {
	var u Usage
	if f := c.e.clusterFigures(); f != nil {
		// Every item response says it: no allocation here.
		rt := c.routes.Load()
		for _, p := range rt.parts {
			s := f.stats(c, p.ID(), p)
			u.Items, u.Bytes = u.Items+s.Items, u.Bytes+s.Bytes
		}
		for _, rr := range rt.remote {
			s := f.stats(c, rr.id, nil)
			u.Items, u.Bytes = u.Items+s.Items, u.Bytes+s.Bytes
		}
		return u
	}
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
	if p == nil {
		return c.PartitionID(e), 0 // held elsewhere: the delegated call's answer said its LSN
	}
	return p.ID(), p.Stats().LSN
}
