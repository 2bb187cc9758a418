package engine

import (
	"context"
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
)

// BatchOp is one operation of a batch.
type BatchOp struct {
	Kind    OpKind
	ID      string          // for Read, Replace, Delete, Patch
	Item    document.Source // for Create, Upsert, Replace
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
// satisfy (PreconditionFailed when it does not).
type Patch struct {
	Ops       []document.PatchOp
	Condition *query.Condition
}

// PatchItem applies a partial update to the item (key, id) atomically.
func (c *Container) PatchItem(key epk.Key, id string, patch Patch, o ItemOptions) (ItemResult, error) {
	if len(o.PreTriggers)+len(o.PostTriggers) > 0 {
		return ItemResult{Charge: ru.Miss()}, fault.New(fault.BadRequest, "Partita does not run triggers on patch operations yet; replace the item instead")
	}
	e, err := c.EPK(key)
	if err != nil {
		return ItemResult{Charge: ru.Miss()}, err
	}
	return c.callsAt(e).patch(e, key, id, patch, o)
}

func (c *Container) patchOp(e epk.EPK, id string, patch Patch, ifMatch string) partition.Operation {
	return partition.Operation{Kind: partition.Mutate, EPK: e, ID: id, IfMatch: ifMatch,
		Mutate: func(cur []byte) (item *document.Item, ne epk.EPK, terms [][]byte, err error) {
			// The condition reads the version being replaced, on the writer: no other write
			// can come between the check and the patch. If-Match was checked before.
			if patch.Condition != nil {
				ok, err := patch.Condition.Holds(cur)
				if err != nil {
					return nil, "", nil, err
				}
				if !ok {
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
			if err := c.checkItemTTL(item.Value); err != nil {
				return nil, "", nil, err
			}
			terms = partition.TermsOf(item.Value, c.policy(), c.search.fullText) // on the writer, under the partition's policy
			ne, err = c.hash(key)
			return item, ne, terms, err
		}}
}

// batchOp turns a batch operation on the logical partition e into a partition operation.
func (c *Container) batchOp(e epk.EPK, op BatchOp) (partition.Operation, error) {
	switch op.Kind {
	case OpCreate, OpUpsert, OpReplace:
		item, ie, err := c.parse(op.Item, nil)
		if err != nil {
			return partition.Operation{}, err
		}
		if ie != e {
			return partition.Operation{}, fault.New(fault.BadRequest, "The partition key of the item in the operation does not match the batch's partition key")
		}
		return c.writeOp(op.Kind, op.ID, e, item, op.IfMatch)
	case OpDelete, OpRead, OpPatch:
		if err := document.ValidateItemID(op.ID); err != nil {
			return partition.Operation{}, err
		}
		switch op.Kind {
		case OpDelete:
			return partition.Operation{Kind: partition.Delete, EPK: e, ID: op.ID, IfMatch: op.IfMatch}, nil
		case OpRead:
			return partition.Operation{Kind: partition.Read, EPK: e, ID: op.ID, IfMatch: op.IfMatch}, nil
		}
		return c.patchOp(e, op.ID, op.Patch, op.IfMatch), nil
	}
	return partition.Operation{}, fault.New(fault.BadRequest, "Operation type %q is not supported in a batch", op.Kind)
}

// opResult describes a successful operation.
func opResult(kind partition.OpKind, r partition.Result, charge float64) OpResult {
	out := OpResult{Created: r.Created, Charge: charge}
	if kind != partition.Delete {
		out.ETag, out.Doc = r.Doc.ETag(), r.Doc.JSON
	}
	return out
}

// ExecuteBatch runs ops on the logical partition key as one transaction: all of them apply or
// none does. On failure the result of the failing operation carries its error and every other
// one is Aborted; the returned index names the failing operation, -1 if none.
func (c *Container) ExecuteBatch(ctx context.Context, key epk.Key, ops []BatchOp) ([]OpResult, int, error) {
	if len(ops) == 0 || len(ops) > MaxBatchOperations {
		return nil, -1, fault.New(fault.BadRequest, "A batch has between 1 and %d operations; got %d", MaxBatchOperations, len(ops))
	}
	e, err := c.EPK(key)
	if err != nil {
		return nil, -1, err
	}
	return c.callsAt(e).batch(ctx, e, key, ops)
}

// ExecuteBulk runs ops independently, each in its own logical partition (op.PartitionKey).
// Operations on one logical partition run in the order given; different logical partitions
// run concurrently so that they share group commits. Each result stands on its own.
func (c *Container) ExecuteBulk(ctx context.Context, ops []BatchOp) []OpResult {
	results := make([]OpResult, len(ops))
	pops := make([]partition.Operation, len(ops))
	byLP := map[epk.EPK][]int{}
	var order []epk.EPK
	for i, op := range ops {
		var err error
		if pops[i], err = c.bulkOp(op); err != nil {
			results[i] = failed(err)
			continue
		}
		e := pops[i].EPK
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
			_, remote := c.remoteOf(e)
			for _, i := range byLP[e] {
				if remote && (ops[i].Kind == OpRead || ops[i].Kind == OpPatch) {
					results[i] = c.bulkElsewhere(ctx, ops[i])
					continue
				}
				results[i] = c.bulkOneSafe(ctx, pops[i])
			}
		}()
	}
	wg.Wait()
	return results
}

// bulkElsewhere runs a bulk read or patch of a partition held on other nodes there (remote.go);
// writes go to its leader through the pipeline.
func (c *Container) bulkElsewhere(ctx context.Context, op BatchOp) OpResult {
	var r ItemResult
	var err error
	if op.Kind == OpRead {
		r, err = c.ReadItem(op.PartitionKey, op.ID)
	} else {
		r, err = c.PatchItem(op.PartitionKey, op.ID, op.Patch, ItemOptions{IfMatch: op.IfMatch, Context: ctx})
	}
	if err != nil {
		return OpResult{Charge: r.Charge, Err: fault.From(err)}
	}
	return OpResult{Charge: r.Charge, ETag: r.ETag, Doc: r.Doc}
}

func failed(err error) OpResult {
	return OpResult{Charge: ru.Miss(), Err: fault.From(err)}
}

// bulkOp is the partition operation of a bulk operation, in its own logical partition: the
// one its key names, or its item's. The item is parsed once, here.
func (c *Container) bulkOp(op BatchOp) (partition.Operation, error) {
	if op.PartitionKey == nil && (op.Kind == OpCreate || op.Kind == OpUpsert || op.Kind == OpReplace) {
		item, e, err := c.parse(op.Item, nil)
		if err != nil {
			return partition.Operation{}, err
		}
		return c.writeOp(op.Kind, op.ID, e, item, op.IfMatch)
	}
	e, err := c.EPK(op.PartitionKey)
	if err != nil {
		return partition.Operation{}, err
	}
	return c.batchOp(e, op)
}

// bulkOneSafe runs one bulk operation in a worker goroutine, where a panic would take the
// server down.
func (c *Container) bulkOneSafe(ctx context.Context, pop partition.Operation) (res OpResult) {
	defer func() {
		if r := recover(); r != nil {
			res = failed(fault.New(fault.Internal, "bulk operation failed: %v", r))
		}
	}()
	x, err := c.execute(ctx, pop.EPK, nil, pop)
	if err != nil {
		return OpResult{Charge: x.charge, Err: fault.From(err)}
	}
	return opResult(pop.Kind, x.result(0), x.chargeOf(0))
}
