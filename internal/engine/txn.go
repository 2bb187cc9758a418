package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/rid"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/script"
	"github.com/partita-db/partita/internal/value"
)

// A txn is a script's transaction over one logical partition (the scripts.Collection the
// runtime calls). Its writes are staged in memory, where its own reads and queries see them,
// and commit as one command (one batch, one sync, one LSN) through the pipeline, or vanish.
// While it runs it holds the logical partition's lock (locks.go), so the committed state it
// reads cannot change under it: no write to the logical partition is applied meanwhile.
type txn struct {
	c       *Container
	ctx     context.Context // the request's (ItemOptions.Context)
	altLink string          // dbs/{db id}/colls/{container id}
	e       epk.EPK
	lp      epk.Range // the logical partition's EPK range, for scans
	now     int64     // the provisional _ts of staged writes
	// staged holds the documents the transaction wrote, by id, and order the ids in the order
	// they were first written (the commit's order).
	staged map[string]*staged
	order  []string
	// fresh counts staged creations; it numbers their provisional _rid and _etag.
	fresh uint64
	bytes int // staged JSON, bounded by maxTxnBytes
	// charge is what the reads and queries cost; writes are priced at commit.
	charge float64
	// read is the partition's LSN before the transaction's first read (apply).
	read txnRead
}

// version is a document as the transaction sees it.
type version struct {
	json    []byte // with system properties, provisional ones for staged writes
	rid     string
	existed bool // a committed version existed before the transaction
}

// staged is the transaction's version of one document.
type staged struct {
	version
	item *document.Item // the document as written; nil when deleted
	seq  uint64         // for documents created in the transaction: their place after the others
}

// maxTxnBytes bounds the JSON a transaction may stage, so that its commit stays one batch of
// reasonable size.
const maxTxnBytes = 16 << 20

// provisionalSeq marks the positions and _rids of documents a transaction created: they
// are given their real ones at commit. Real creation sequences never come near it.
const provisionalSeq = 1 << 62

func (c *Container) newTxn(ctx context.Context, e epk.EPK) *txn {
	now := time.Now()
	if c.e.opts.Now != nil {
		now = c.e.opts.Now()
	}
	c.e.mu.RLock()
	alt := "dbs/" + c.db.rec.ID + "/colls/" + c.rec.ID
	c.e.mu.RUnlock()
	return &txn{c: c, ctx: ctx, altLink: alt, e: e, lp: epk.Range{Min: e, Max: e + "\x00"}, now: now.Unix(), staged: map[string]*staged{}}
}

// SelfLink is the container's self link.
func (t *txn) SelfLink() string {
	return "dbs/" + t.c.db.rid.String() + "/colls/" + t.c.rid.String() + "/"
}

// AltLink is the container's link by name.
func (t *txn) AltLink() string { return t.altLink }

// Quota is the container's quota and usage, as the response headers report them.
func (t *txn) Quota() (max, usage string) {
	return ResourceQuota, string(AppendUsage(nil, t.c.Usage()))
}

// current is the document id as the transaction sees it: nil when absent. A read (charged)
// pays for looking up a committed version; a write's lookup is part of the write, which its
// commit prices as the same write outside a script (opCharge). A write that fails on what it
// found pays the minimum instead (failed), as a point write that fails does.
func (t *txn) current(id string, charged bool) (*version, error) {
	if s, ok := t.staged[id]; ok {
		if s.item == nil {
			return nil, nil
		}
		return &s.version, nil
	}
	t.c.splitMu.RLock()
	p := t.c.routes.Load().lookup(t.e)
	if p == nil {
		t.c.splitMu.RUnlock()
		return nil, errNotHere()
	}
	d, err := p.Read(t.e, id, nil)
	t.c.splitMu.RUnlock()
	switch {
	case errors.Is(err, fault.NotFound):
		if charged {
			t.charge += ru.Miss()
		}
		return nil, nil
	case err != nil:
		return nil, err
	}
	if charged {
		t.charge += ru.PointRead(len(d.JSON))
	}
	doc, err := value.Parse(d.JSON)
	if err != nil {
		return nil, fault.New(fault.Internal, "stored item is not valid JSON: %w", err)
	}
	return &version{json: d.JSON, existed: true, rid: doc.Get("_rid").Str()}, nil
}

// resolve finds the id a reference names.
func (t *txn) resolve(ref script.DocRef) (string, error) {
	if ref.RID == "" {
		return ref.ID, document.ValidateItemID(ref.ID)
	}
	for id, s := range t.staged {
		if s.rid == ref.RID {
			return id, nil
		}
	}
	b, ok := rid.Decode(ref.RID)
	if !ok || len(b) != 16 || string(b[:8]) != string(t.c.rid[:]) {
		return "", fault.New(fault.NotFound, "Resource Not Found: no document has the resource id %q", ref.RID)
	}
	seq := binary.BigEndian.Uint64(b[8:])
	var id string
	t.c.splitMu.RLock()
	p := t.c.routes.Load().lookup(t.e)
	if p == nil {
		t.c.splitMu.RUnlock()
		return "", errNotHere()
	}
	err := p.Scan([]epk.Range{t.lp}, seq, func(d partition.Doc) bool {
		if d.Seq == seq {
			id = d.ID()
		}
		return false
	})
	t.c.splitMu.RUnlock()
	if err != nil {
		return "", readFailed("items", err)
	}
	if id == "" {
		return "", fault.New(fault.NotFound, "Resource Not Found: no document has the resource id %q", ref.RID)
	}
	return id, nil
}

// stage records doc (nil: a deletion) as the transaction's version of id.
func (t *txn) stage(id string, item *document.Item, cur *version) ([]byte, error) {
	s := t.staged[id]
	if s == nil {
		if len(t.order) >= partition.MaxOperations {
			return nil, fault.New(fault.TooLarge, "The script writes more than %d documents in one transaction; write fewer per call", partition.MaxOperations)
		}
		s = &staged{}
		if cur != nil {
			s.existed, s.rid = cur.existed, cur.rid
		}
		t.staged[id] = s
		t.order = append(t.order, id)
	}
	s.item, s.json = item, nil
	if item == nil {
		return nil, nil
	}
	if s.rid == "" {
		t.fresh++
		s.seq = provisionalSeq + t.fresh
		var own [8]byte
		binary.BigEndian.PutUint64(own[:], s.seq)
		s.rid = rid.Item(t.c.rid, own)
	}
	t.fresh++
	s.json = item.Stamp(nil, document.System{
		RID: s.rid, Self: "dbs/" + t.c.db.rid.String() + "/colls/" + t.c.rid.String() + "/docs/" + s.rid + "/",
		ETag: partition.ETag(math.MaxUint64 - t.fresh), TS: t.now,
	})
	if t.bytes += len(s.json); t.bytes > maxTxnBytes {
		return nil, fault.New(fault.TooLarge, "The script's writes exceed %d MiB in one transaction; write less per call", maxTxnBytes>>20)
	}
	return s.json, nil
}

// parse validates a document the script writes; it must belong to the transaction's
// logical partition.
func (t *txn) parse(doc []byte) (*document.Item, error) {
	item, e, err := t.c.parse(document.FromJSON(doc), nil)
	if err != nil {
		return nil, err
	}
	if e != t.e {
		return nil, script.ErrOtherPartition
	}
	return item, t.c.checkItemTTL(item.Value)
}

// failed charges a write that failed the minimum, and returns its error.
func (t *txn) failed(err error) error {
	t.charge += ru.Miss()
	return err
}

func checkETag(cur *version, ifMatch string) error {
	if ifMatch == "" {
		return nil
	}
	// The stored _etag is quoted, as Cosmos writes it ("\"...\""); ifMatch is not.
	doc, err := value.Parse(cur.json)
	if err == nil && strings.Trim(doc.Get("_etag").Str(), `"`) == ifMatch {
		return nil
	}
	return fault.New(fault.PreconditionFailed, "Operation cannot be performed because one of the specified precondition is not met.")
}

// incoming parses a document to create or upsert and finds the version it would meet.
func (t *txn) incoming(doc []byte) (*document.Item, *version, error) {
	item, err := t.parse(doc)
	if err != nil {
		return nil, nil, t.failed(err)
	}
	cur, err := t.current(item.ID, false)
	return item, cur, err
}

func (t *txn) Create(doc []byte, o script.WriteOptions) ([]byte, error) {
	item, cur, err := t.incoming(doc)
	if err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, t.failed(fault.New(fault.Conflict, "Resource with specified id or name already exists."))
	}
	return t.stage(item.ID, item, nil)
}

func (t *txn) Upsert(doc []byte, o script.WriteOptions) ([]byte, error) {
	item, cur, err := t.incoming(doc)
	if err != nil {
		return nil, err
	}
	if cur != nil {
		if err := checkETag(cur, o.IfMatch); err != nil {
			return nil, t.failed(err)
		}
	}
	return t.stage(item.ID, item, cur)
}

func (t *txn) Replace(ref script.DocRef, doc []byte, o script.WriteOptions) ([]byte, error) {
	id, err := t.resolve(ref)
	if err != nil {
		return nil, t.failed(err)
	}
	item, err := t.parse(doc)
	if err != nil {
		return nil, t.failed(err)
	}
	if item.ID != id {
		return nil, t.failed(fault.New(fault.BadRequest, "The document's id %q is not the id of the document it replaces (%q)", item.ID, id))
	}
	cur, err := t.current(id, false)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, t.failed(fault.New(fault.NotFound, "Resource Not Found"))
	}
	if err := checkETag(cur, o.IfMatch); err != nil {
		return nil, t.failed(err)
	}
	return t.stage(id, item, cur)
}

func (t *txn) Read(ref script.DocRef, o script.WriteOptions) ([]byte, error) {
	id, err := t.resolve(ref)
	if err != nil {
		return nil, t.failed(err)
	}
	cur, err := t.current(id, true)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, fault.New(fault.NotFound, "Resource Not Found")
	}
	return cur.json, nil
}

func (t *txn) Delete(ref script.DocRef, o script.WriteOptions) error {
	id, err := t.resolve(ref)
	if err != nil {
		return t.failed(err)
	}
	cur, err := t.current(id, false)
	if err != nil {
		return err
	}
	if cur == nil {
		return t.failed(fault.New(fault.NotFound, "Resource Not Found"))
	}
	if err := checkETag(cur, o.IfMatch); err != nil {
		return t.failed(err)
	}
	_, err = t.stage(id, nil, cur)
	return err
}

// ReadAll lists the logical partition's documents, as SELECT * would.
func (t *txn) ReadAll(o script.FeedOptions) (script.Page, error) {
	return t.Query(script.Query{Text: "SELECT * FROM root"}, o)
}

// Query runs a query over the logical partition as the transaction sees it.
func (t *txn) Query(q script.Query, o script.FeedOptions) (script.Page, error) {
	p, err := query.Prepare(q.Text)
	if err != nil {
		return script.Page{}, err
	}
	params, err := query.ParseParameters(q.Params)
	if err != nil {
		return script.Page{}, err
	}
	opts := query.Options{Params: params, MaxItems: o.PageSize, Continuation: o.Continuation, UDF: t.c.udfs(),
		Vectors: t.c.search.vectors, FullText: t.c.search.fullText}
	t.c.splitMu.RLock()
	defer t.c.splitMu.RUnlock()
	part := t.c.routes.Load().lookup(t.e)
	if part == nil {
		return script.Page{}, errNotHere()
	}
	var src query.Reader = &partitionSource{ranges: []epk.Range{t.lp}, parts: []queryPart{{local: part}}, index: t.c.policy(), c: t.c}
	if len(t.staged) > 0 {
		src = &overlay{t: t, p: part}
	}
	page, err := p.Run(src, opts)
	t.charge += ru.Query(page.Stats.ItemsLoaded, page.Stats.BytesLoaded, page.Stats.Results, 1)
	if err != nil {
		return script.Page{}, err
	}
	out := script.Page{Continuation: page.Next, Docs: make([][]byte, len(page.Results))}
	for i, v := range page.Results {
		out.Docs[i] = value.AppendJSON(nil, v)
	}
	return out, nil
}

// overlay reads the logical partition with the transaction's writes in place: committed
// documents in creation order, each replaced by its staged version (or left out if the
// transaction deleted it), then the documents the transaction created, in the order it did.
// It offers no index: a query over it checks its filter on every document.
type overlay struct {
	t *txn
	p *partition.Partition
}

func (o *overlay) Scan(from *query.Resume, fn func(query.Position, []byte) (bool, error)) error {
	pr := o.p.Range()
	start, ok := from.Start(string(pr.Min), string(pr.Max))
	if !ok {
		return nil
	}
	pos := func(seq uint64) query.Position {
		return query.Position{Min: string(pr.Min), Max: string(pr.Max), Seq: seq}
	}
	var ferr error
	stopped := false
	err := o.p.ScanIndexed([]epk.Range{o.t.lp}, start, func(d partition.Doc) bool {
		doc := d.JSON
		if s, ok := o.t.staged[string(d.ID())]; ok {
			if s.item == nil {
				return true
			}
			doc = s.json
		}
		more, err := fn(pos(d.Seq), doc)
		if err != nil || !more {
			ferr, stopped = err, true
			return false
		}
		return true
	})
	if err != nil {
		return readFailed("items", err)
	}
	if stopped {
		return ferr
	}
	for _, id := range o.t.order {
		s := o.t.staged[id]
		if s.existed || s.item == nil || s.seq < start {
			continue
		}
		if more, err := fn(pos(s.seq), s.json); err != nil || !more {
			return err
		}
	}
	return nil
}

// committed is the outcome of a transaction's commit.
type committed struct {
	executed
	byID map[string]partition.Result // what the commit did to each document
}

// commit applies the transaction's net effect as one command: for each document it wrote,
// a create, a replace or a delete. A transaction that wrote nothing commits nothing.
func (t *txn) commit() (committed, error) {
	var ops []partition.Operation
	for _, id := range t.order {
		s := t.staged[id]
		switch {
		case s.item == nil && s.existed:
			ops = append(ops, partition.Operation{Kind: partition.Delete, EPK: t.e, ID: id})
		case s.item == nil:
		default:
			kind := OpCreate
			if s.existed {
				kind = OpReplace
			}
			op, err := t.c.writeOp(kind, id, t.e, s.item, "")
			if err != nil {
				return committed{}, err
			}
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		return committed{}, nil
	}
	x, err := t.c.apply(t.ctx, t.e, nil, &t.read, ops...)
	out := committed{executed: x, byID: make(map[string]partition.Result, len(ops))}
	if err == nil {
		for i, op := range ops {
			out.byID[op.ID] = x.result(i)
		}
	}
	return out, err
}
