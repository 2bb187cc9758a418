package engine

import (
	"errors"
	"sync"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/ru"
)

// OpKind names an operation of a batch, as the wire does.
type OpKind string

const (
	OpCreate  OpKind = "Create"
	OpUpsert  OpKind = "Upsert"
	OpReplace OpKind = "Replace"
	OpDelete  OpKind = "Delete"
	OpRead    OpKind = "Read"
	OpPatch   OpKind = "Patch"
)

// Limits of a transactional batch, as in Cosmos.
const (
	MaxBatchOperations = 100
	MaxBatchBytes      = 2 << 20
)

// BatchOp is one operation of a batch.
type BatchOp struct {
	Kind    OpKind
	ID      string // for Read, Replace, Delete, Patch
	Body    []byte // for Create, Upsert, Replace
	IfMatch string
	Patch   Patch
	// PartitionKey is the operation's own key, for non-atomic bulk requests.
	PartitionKey epk.Key
}

// OpResult is the outcome of one operation of a batch.
type OpResult struct {
	Err     error // nil on success; fault.Aborted for the operations a failed batch did not apply
	Created bool  // the operation created the item
	Charge  float64
	ETag    string
	Doc     []byte // the item, for reads and writes that return it
}

// Patch is a partial update: operations, and optionally a condition the current item must
// satisfy (a query whose WHERE is the filter; 412 when the item does not match).
type Patch struct {
	Ops       []document.PatchOp
	Condition *query.Prepared
}

// PatchItem applies a partial update to the item (key, id) atomically.
func (c *Container) PatchItem(key epk.Key, id string, patch Patch, o ItemOptions) (ItemResult, error) {
	c.splitMu.RLock()
	defer c.splitMu.RUnlock()
	e, p, err := c.route(key)
	if err != nil {
		return ItemResult{Charge: missCharge(err)}, err
	}
	res, err := p.Apply(c.patchWrite(e, id, patch, o.IfMatch))
	if err != nil {
		spendItem(ru.Miss(), p, e)
		return ItemResult{Charge: ru.Miss(), PartitionID: p.ID()}, err
	}
	r := res[0]
	charge := ru.Replace(r.PrevBytes, len(r.Doc.JSON))
	spendItem(charge, p, e)
	return ItemResult{Doc: r.Doc.JSON, ETag: r.Doc.ETag(), LSN: r.Doc.LSN, PartitionID: p.ID(), Charge: charge}, nil
}

// maxConditionRows bounds the work of a patch condition: it runs on the partition's writer,
// where every other write of the partition waits for it.
const maxConditionRows = 10000

func (c *Container) patchWrite(e epk.EPK, id string, patch Patch, ifMatch string) partition.Write {
	return partition.Write{Kind: partition.Mutate, EPK: e, ID: id, IfMatch: ifMatch,
		Mutate: func(cur []byte) (item *document.Item, ne epk.EPK, terms [][]byte, err error) {
			defer func() {
				if r := recover(); r != nil { // a bug must fail this write, not the partition
					err = fault.New(fault.Internal, "patch failed: %v", r)
				}
			}()
			if patch.Condition != nil {
				page, err := patch.Condition.Run(query.Slice{cur}, query.Options{MaxRows: maxConditionRows})
				if err != nil {
					return nil, "", nil, err
				}
				if len(page.Results) == 0 {
					return nil, "", nil, fault.New(fault.PreconditionFailed, "The item does not satisfy the patch's condition")
				}
			}
			body, err := document.Patch(cur, patch.Ops)
			if err != nil {
				return nil, "", nil, err
			}
			item, key, err := document.Parse(body, c.paths)
			if err != nil {
				return nil, "", nil, err
			}
			terms = partition.TermsOf(item.Value)
			ne, err = c.hash(key)
			return item, ne, terms, err
		}}
}

// toWrite turns a batch operation on the logical partition e into a partition write.
func (c *Container) toWrite(e epk.EPK, op BatchOp) (partition.Write, error) {
	w := partition.Write{EPK: e, ID: op.ID, IfMatch: op.IfMatch}
	switch op.Kind {
	case OpCreate, OpUpsert, OpReplace:
		item, ie, err := c.parse(op.Body, nil)
		if err != nil {
			return w, err
		}
		if ie != e {
			return w, fault.New(fault.BadRequest, "The partition key of the item in the operation does not match the batch's partition key")
		}
		if op.Kind == OpReplace && op.ID != "" && op.ID != item.ID {
			return w, fault.New(fault.BadRequest, "The id %q of the operation does not match the item's id %q", op.ID, item.ID)
		}
		w.ID, w.Item, w.Terms = item.ID, item, partition.TermsOf(item.Value)
		w.Kind = map[OpKind]partition.WriteKind{OpCreate: partition.Create, OpUpsert: partition.Upsert, OpReplace: partition.Replace}[op.Kind]
	case OpDelete, OpRead, OpPatch:
		if err := document.ValidateID(op.ID); err != nil {
			return w, err
		}
		switch op.Kind {
		case OpDelete:
			w.Kind = partition.Delete
		case OpRead:
			w.Kind = partition.Read
		default:
			w = c.patchWrite(e, op.ID, op.Patch, op.IfMatch)
		}
	default:
		return w, fault.New(fault.BadRequest, "Operation type %q is not supported in a batch", op.Kind)
	}
	return w, nil
}

// opResult describes a successful partition result of op.
func opResult(op BatchOp, r partition.Result) OpResult {
	out := OpResult{ETag: r.Doc.ETag(), Doc: r.Doc.JSON}
	switch {
	case op.Kind == OpRead:
		out.Charge = ru.PointRead(len(r.Doc.JSON))
	case op.Kind == OpDelete:
		out.Charge, out.Doc, out.ETag = ru.Delete(r.PrevBytes), nil, ""
	case r.Created:
		out.Created, out.Charge = true, ru.Insert(len(r.Doc.JSON))
	default:
		out.Charge = ru.Replace(r.PrevBytes, len(r.Doc.JSON))
	}
	return out
}

// ExecuteBatch runs ops on the logical partition key as one transaction: all of them apply or
// none does. On failure the result of the failing operation carries its error and every other
// one is 424 (failed dependency); the returned index names the failing operation, -1 if none.
func (c *Container) ExecuteBatch(key epk.Key, ops []BatchOp) ([]OpResult, int, error) {
	c.splitMu.RLock()
	defer c.splitMu.RUnlock()
	if len(ops) == 0 || len(ops) > MaxBatchOperations {
		return nil, -1, fault.New(fault.BadRequest, "A batch has between 1 and %d operations; got %d", MaxBatchOperations, len(ops))
	}
	e, err := c.EPK(key)
	if err != nil {
		return nil, -1, err
	}
	writes := make([]partition.Write, len(ops))
	failAt := func(i int, err error) ([]OpResult, int, error) {
		results := make([]OpResult, len(ops))
		for j := range results {
			results[j] = OpResult{Err: fault.New(fault.Aborted, "The operation was not applied because operation %d of the batch failed", i)}
		}
		results[i] = failed(err)
		return results, i, nil
	}
	for i, op := range ops {
		if writes[i], err = c.toWrite(e, op); err != nil {
			return failAt(i, err)
		}
	}
	p := c.routes.Load().lookup(e)
	if err := c.admit(p); err != nil {
		return nil, -1, err
	}
	res, err := p.Apply(writes...)
	if err != nil {
		spendItem(ru.Miss(), p, e)
		var be *partition.BatchError
		if errors.As(err, &be) {
			return failAt(be.Index, be.Err)
		}
		if len(ops) == 1 && fault.KindOf(err) != fault.Internal && fault.KindOf(err) != fault.Unavailable {
			return failAt(0, err)
		}
		return nil, -1, err
	}
	results := make([]OpResult, len(ops))
	total := 0.0
	for i, r := range res {
		results[i] = opResult(ops[i], r)
		total += results[i].Charge
	}
	spendItem(total, p, e)
	c.e.maybeSplit(c, p)
	return results, -1, nil
}

// ExecuteBulk runs ops independently, each in its own logical partition (op.PartitionKey).
// Operations on one logical partition run in the order given; different logical partitions
// run concurrently so that they share group commits. Each result stands on its own.
func (c *Container) ExecuteBulk(ops []BatchOp) []OpResult {
	results := make([]OpResult, len(ops))
	byLP := map[epk.EPK][]int{}
	var order []epk.EPK
	for i, op := range ops {
		e, err := c.bulkEPK(op)
		if err != nil {
			results[i] = failed(err)
			continue
		}
		if byLP[e] == nil {
			order = append(order, e)
		}
		byLP[e] = append(byLP[e], i)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, e := range order {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			for _, i := range byLP[e] {
				results[i] = c.bulkOneSafe(e, ops[i])
			}
		}()
	}
	wg.Wait()
	return results
}

func failed(err error) OpResult {
	return OpResult{Charge: ru.Miss(), Err: fault.From(err)}
}

// bulkEPK is the logical partition of a bulk operation: its own key, or its body's.
func (c *Container) bulkEPK(op BatchOp) (epk.EPK, error) {
	key := op.PartitionKey
	if key == nil && op.Body != nil {
		_, k, err := document.Parse(op.Body, c.paths)
		if err != nil {
			return "", err
		}
		key = k
	}
	return c.EPK(key)
}

// bulkOneSafe is bulkOne in a worker goroutine, where a panic would take the server down.
func (c *Container) bulkOneSafe(e epk.EPK, op BatchOp) (res OpResult) {
	defer func() {
		if r := recover(); r != nil {
			res = failed(fault.New(fault.Internal, "bulk operation failed: %v", r))
		}
	}()
	return c.bulkOne(e, op)
}

func (c *Container) bulkOne(e epk.EPK, op BatchOp) OpResult {
	c.splitMu.RLock()
	defer c.splitMu.RUnlock()
	fail := failed
	w, err := c.toWrite(e, op)
	if err != nil {
		return fail(err)
	}
	p := c.routes.Load().lookup(e)
	if err := c.admit(p); err != nil {
		return fail(err)
	}
	res, err := p.Apply(w)
	if err != nil {
		spendItem(ru.Miss(), p, e)
		return fail(err)
	}
	out := opResult(op, res[0])
	spendItem(out.Charge, p, e)
	c.e.maybeSplit(c, p)
	return out
}
