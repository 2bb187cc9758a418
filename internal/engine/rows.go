package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/value"
)

// Rows: the engine's side of CQL tables. A table is a container whose partition key kind is
// TableKind; the CQL engine places each row itself, at the EPK of its partition key's token
// (epk.TokenEPK), under an id it encodes so that the item order (EPK, id) is the table's
// order: tokens, then partition keys, then clustering columns. The engine keeps the table's
// schema (Meta) without reading it, and serves rows by position rather than by Cosmos
// partition key: MutateRows writes one logical partition through the request pipeline,
// ScanRows reads spans of the item order, partition by partition.

// MaxTablePartitionBytes is where a table's physical partition splits at the latest: 30 GB,
// Cosmos DB's limit for the Cassandra API (a logical partition's cap is 20 GB, as for
// containers).
const MaxTablePartitionBytes = 30 << 30

// tableIndex is a table's indexing policy: none. Rows are found by their position alone; a
// table keeps no secondary index, not even the entries of id and _ts that every container's
// policy has (indexing.AlwaysIndexed). Tables of builds before those entries were recorded
// with a policy that excludes every path, which indexed nothing then: they get this one too,
// and nothing to rebuild.
var tableIndex = func() *indexing.Policy {
	p, err := indexing.Parse([]byte(`{"indexingMode":"none"}`))
	if err != nil {
		panic(err)
	}
	return p
}()

// tablePolicy is the indexing policy of the container of rec, which the record says is pol:
// tableIndex for a table.
func tablePolicy(rec containerRecord, pol *indexing.Policy) *indexing.Policy {
	if rec.PartitionKey.Kind == TableKind {
		return tableIndex
	}
	return pol
}

// IsTable reports whether the container is a CQL table.
func (c *Container) IsTable() bool { return c.def.Kind == TableKind }

// splitBytes is the stored size past which one of the container's partitions splits.
func (c *Container) splitBytes() int64 {
	if c.IsTable() {
		return min(c.e.opts.MaxPartitionBytes, MaxTablePartitionBytes)
	}
	return c.e.opts.MaxPartitionBytes
}

// Table returns the CQL table id of keyspace dbID.
func (e *Engine) Table(dbID, id string) (*Container, error) {
	return missFresh(e, func() (*Container, error) { return e.openedTable(dbID, id) })
}

func (e *Engine) openedTable(dbID, id string) (*Container, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	c, err := e.container(dbID, id)
	if err == nil && !c.IsTable() {
		return nil, fault.New(fault.NotFound, "Container %q of database %q is not a CQL table", id, dbID)
	}
	return c, err
}

// CreateTable creates a CQL table in keyspace dbID, with schema meta and throughput t (nil
// for the default).
func (e *Engine) CreateTable(dbID, id string, t *Throughput, meta json.RawMessage) (ContainerInfo, error) {
	if meta == nil {
		return ContainerInfo{}, fault.New(fault.BadRequest, "A table needs its schema")
	}
	return e.CreateContainer(dbID, ContainerSpec{
		ID: id, Throughput: t, Meta: meta,
		PartitionKey: PartitionKeyDef{Paths: []string{"/id"}, Kind: TableKind, Version: 2},
		// Rows are found by their position alone: no secondary index to keep.
		Indexing: json.RawMessage(`{"indexingMode":"consistent","automatic":true,"includedPaths":[],"excludedPaths":[{"path":"/*"}]}`),
	})
}

// AlterTable replaces a table's schema and, when t is not nil, its own throughput, in one
// change of its record (ALTER TABLE). ifMatch, when not empty, is the etag the table must
// have: that of the schema meta was made from, so that a change another node made meanwhile
// is not lost (PreconditionFailed: read the schema again and decide again). Raised
// throughput splits the table before the answer, as ReplaceOffer does.
func (e *Engine) AlterTable(dbID, id string, meta json.RawMessage, t *Throughput, ifMatch string) error {
	if t != nil {
		if t.IsZero() {
			return fault.New(fault.BadRequest, "Table %q needs a throughput: manual or an autoscale maximum", id)
		}
		if err := t.validate(); err != nil {
			return err
		}
	}
	c, err := freshWritten(e, func() (*Container, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		c, err := e.container(dbID, id)
		if err != nil {
			return nil, err
		}
		if !c.IsTable() || meta == nil {
			return nil, fault.New(fault.BadRequest, "Container %q is not a CQL table", id)
		}
		if err := checkVersion(fmt.Sprintf("table %q", id), c.rec.Version, ifMatch); err != nil {
			return nil, err
		}
		rec := c.rec
		rec.Meta = meta
		if t != nil {
			if rec.Throughput == nil {
				return nil, fault.New(fault.BadRequest, "Table %q uses its keyspace's shared throughput; it has none of its own to change", id)
			}
			rec.Throughput = t
		}
		rec.Version = e.nextVersion()
		if err := e.persist(catalog.Containers, rec.Num, rec); err != nil {
			return nil, err
		}
		c.rec = rec
		if t != nil {
			e.refreshBudgets()
		}
		return c, nil
	})
	if err != nil || t == nil {
		return err
	}
	return e.splitForThroughput(c)
}

// SetKeyspaceMeta replaces a keyspace's metadata (ALTER KEYSPACE, CREATE TYPE). ifMatch is
// as for AlterTable.
func (e *Engine) SetKeyspaceMeta(id string, meta json.RawMessage, ifMatch string) (DatabaseInfo, error) {
	return writeDatabase(e, id, func(d *Database) (DatabaseInfo, error) {
		if d.rec.Meta == nil || meta == nil {
			return DatabaseInfo{}, fault.New(fault.BadRequest, "Database %q is not a CQL keyspace", id)
		}
		if err := checkVersion(fmt.Sprintf("keyspace %q", id), d.rec.Version, ifMatch); err != nil {
			return DatabaseInfo{}, err
		}
		rec := d.rec
		rec.Meta = meta
		rec.Version = e.nextVersion()
		if err := e.persist(catalog.Databases, rec.Num, rec); err != nil {
			return DatabaseInfo{}, err
		}
		d.rec = rec
		return d.info(), nil
	})
}

// RowPos is a place in a table's row order: an EPK, then an id. The zero RowPos is the start.
type RowPos = partition.ItemPos

// RowEnd is past every row.
var RowEnd = RowPos{EPK: epk.Max}

// ScanRows calls fn with the rows from lo (inclusive) to hi (exclusive), in order or in
// reverse, partition by partition, until fn returns false. Each partition is admitted before
// it is read (Throttled when its budget is spent) and charged for what it returned; the
// charge is the total. fn's slices are only valid during the call.
func (c *Container) ScanRows(lo, hi RowPos, reverse bool, fn func(e epk.EPK, id string, doc []byte) bool) (float64, error) {
	return c.ScanRowsAt(ReadConsistency{}, lo, hi, reverse, fn)
}

// ScanRowsAt is ScanRows for a client's read at rc.
func (c *Container) ScanRowsAt(rc ReadConsistency, lo, hi RowPos, reverse bool, fn func(e epk.EPK, id string, doc []byte) bool) (float64, error) {
	c.splitMu.RLock()
	defer c.splitMu.RUnlock()
	parts, _ := c.queryParts([]epk.Range{epk.All})
	total := 0.0
	stopped := false
	for i := range parts {
		qp := parts[i]
		if reverse {
			qp = parts[len(parts)-1-i]
		}
		r := qp.Range()
		if r.Max <= lo.EPK || r.Min > hi.EPK || r.Min == hi.EPK && hi.ID == "" {
			continue
		}
		if qp.remote != nil { // read where it is held, and charged there
			// The holding node clips lo and hi to its partition.
			err := qp.remote.rows(rc, lo, hi, reverse, func(e epk.EPK, id string, doc []byte) bool {
				stopped = !fn(e, id, doc)
				return !stopped
			})
			if err != nil {
				return total, readFailed("rows", err)
			}
			if stopped {
				break
			}
			continue
		}
		p := qp.local
		if err := c.admit(ru.High, p); err != nil {
			return total, err
		}
		n, bytes := 0, 0
		err := c.reader(p, rc).ScanItems(lo, hi, reverse, func(d partition.Doc) bool {
			n++
			bytes += len(d.JSON)
			if !fn(d.EPK(), d.ID(), d.JSON) {
				stopped = true
				return false
			}
			return true
		})
		if err != nil {
			return total, readFailed("rows", err)
		}
		ch := ru.Feed(n, bytes, 1) * rc.readFactor()
		spend(ch, ru.High, p)
		total += ch
		if stopped {
			break
		}
	}
	return total, nil
}

// RowTxn is a read-modify-write of one logical partition of a table (MutateRows): it reads
// the committed rows, which cannot change under it, and stages writes, which commit as one
// command.
type RowTxn struct {
	c *Container
	// p is this node's replica of the partition; remote, when there is none, reads where the
	// partition is held.
	p      *partition.Partition
	remote *remotePart
	e      epk.EPK
	charge float64
	// writes are the staged rows by id (nil: delete), in the order first written.
	writes map[string][]byte
	order  []string
	exists map[string]bool // ids found committed, so that a delete of an absent row is dropped
}

// Get returns the committed row id, or ok false.
func (t *RowTxn) Get(id string) (doc []byte, ok bool, err error) {
	if t.remote != nil {
		doc, err := t.remote.get(t.e, id)
		switch {
		case err != nil:
			return nil, false, err
		case doc == nil:
			t.charge += ru.Miss()
			return nil, false, nil
		}
		t.charge += ru.PointRead(len(doc))
		t.exists[id] = true
		return doc, true, nil
	}
	d, err := t.p.Read(t.e, id, nil)
	switch {
	case errors.Is(err, fault.NotFound):
		t.charge += ru.Miss()
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	t.charge += ru.PointRead(len(d.JSON))
	t.exists[id] = true
	return d.JSON, true, nil
}

// Scan calls fn with the committed rows of the logical partition whose ids are in [lo, hi)
// ("" for hi: to the end), in order or in reverse, until fn returns false.
func (t *RowTxn) Scan(lo, hi string, reverse bool, fn func(id string, doc []byte) bool) error {
	end := RowPos{EPK: t.e + "\x00"}
	if hi != "" {
		end = RowPos{EPK: t.e, ID: hi}
	}
	n, bytes := 0, 0
	var err error
	if t.remote != nil {
		err = t.remote.rows(ReadConsistency{}, RowPos{EPK: t.e, ID: lo}, end, reverse, func(_ epk.EPK, id string, doc []byte) bool {
			n++
			bytes += len(doc)
			t.exists[id] = true
			return fn(id, doc)
		})
	} else {
		err = t.p.ScanItems(RowPos{EPK: t.e, ID: lo}, end, reverse, func(d partition.Doc) bool {
			n++
			bytes += len(d.JSON)
			t.exists[d.ID()] = true
			return fn(d.ID(), d.JSON)
		})
	}
	t.charge += ru.Feed(n, bytes, 1)
	if err != nil {
		return fault.New(fault.Internal, "reading rows: %w", err)
	}
	return nil
}

// spend spends what the transaction's reads cost from its partition's budget, where it is
// held here (another node's replica is charged there, for the reads it served).
func (t *RowTxn) spend() {
	if t.p != nil {
		spendItem(t.charge, ru.High, t.p, t.e)
	}
}

// Put stages the row doc (a JSON object whose "id" is id); Delete stages its deletion.
func (t *RowTxn) Put(id string, doc []byte) { t.stage(id, doc) }

// Delete stages the deletion of row id.
func (t *RowTxn) Delete(id string) { t.stage(id, nil) }

func (t *RowTxn) stage(id string, doc []byte) {
	if _, ok := t.writes[id]; !ok {
		t.order = append(t.order, id)
	}
	t.writes[id] = doc
}

// MutateRows runs fn over the logical partition at e while it holds that logical partition
// alone (locks.go), then commits what fn staged as one command through the pipeline: admitted
// before fn runs, charged for fn's reads and for the writes as item writes are. Nothing is
// written when fn fails, or when it staged nothing. It returns the charge. In a cluster fn
// may run more than once (forward.go: a commit that conflicted runs again), so it must start
// from what it reads each time.
func (c *Container) MutateRows(ctx context.Context, e epk.EPK, fn func(t *RowTxn) error) (float64, error) {
	return retryConflicts(func() (float64, error) { return c.mutateRows(ctx, e, fn) })
}

func (c *Container) mutateRows(ctx context.Context, e epk.EPK, fn func(t *RowTxn) error) (float64, error) {
	// Alone in the logical partition from the first read to the commit, as a script's
	// transaction: two read-modify-writes that shared it (two lightweight transactions on
	// one row) could both read the same version and both commit.
	c.locks.lockScript(e)
	defer c.locks.unlockScript(e)
	c.splitMu.RLock()
	t := &RowTxn{c: c, p: c.routes.Load().lookup(e), e: e, writes: map[string][]byte{}, exists: map[string]bool{}}
	var read txnRead
	if t.p == nil {
		// Held on other nodes: read there from its LSN as of now, and committed on its leader
		// behind a check that nothing changed since (applyLed).
		rr, ok := c.remoteOf(e)
		if !ok {
			c.splitMu.RUnlock()
			return 0, errNotHere()
		}
		t.remote = &remotePart{c: c, rr: rr}
		lsn, err := t.remote.lsnNow()
		if err != nil {
			c.splitMu.RUnlock()
			return 0, err
		}
		read = txnRead{lsn: lsn}
	} else {
		read = readFrom(t.p)
		if err := c.admit(ru.High, t.p); err != nil {
			c.splitMu.RUnlock()
			return 0, err // a throttled request costs nothing
		}
	}
	err := fn(t)
	c.splitMu.RUnlock() // apply takes it again: a split may run between, the lock keeps e still
	if err != nil {
		t.charge += ru.Miss()
		t.spend()
		return t.charge, err
	}
	ops := make([]partition.Operation, 0, len(t.order))
	for _, id := range t.order {
		doc := t.writes[id]
		if doc == nil {
			if t.exists[id] {
				ops = append(ops, partition.Operation{Kind: partition.Delete, EPK: e, ID: id})
			}
			continue
		}
		v, err := value.Parse(doc)
		if err != nil {
			return t.charge, fault.New(fault.Internal, "a staged row is not valid JSON: %w", err)
		}
		item, err := document.Row(v)
		if err != nil {
			return t.charge, err
		}
		if item.ID != id {
			return t.charge, fault.New(fault.Internal, "a staged row's id %q is not the id it was staged under", item.ID)
		}
		op, err := c.writeOp(OpUpsert, "", e, item, "")
		if err != nil {
			return t.charge, err
		}
		ops = append(ops, op)
	}
	t.spend()
	if len(ops) == 0 {
		return t.charge, nil
	}
	x, err := c.apply(ctx, e, nil, &read, ops...)
	return t.charge + x.charge, err
}

// CatalogVersion is the catalog's version: it changes with every change of a database,
// container or their partitions, so a front end that caches what it read of the catalog knows
// when to read it again.
func (e *Engine) CatalogVersion() uint64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.seq.Version
}
