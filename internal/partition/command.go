package partition

import (
	"github.com/cockroachdb/pebble/v2"

	"github.com/partita-db/partita/internal/storage"
)

// A Command is one atomic change to a partition, with every choice already made: applying it
// reads nothing and depends on nothing but its own fields, so replicas that apply the same
// commands in the same order end in the same state.
type Command struct {
	LSN uint64
	Ops []Op
	// After is the partition's LSN and totals once the command is applied. The writer
	// persists it once per group of commands, as of the group's last.
	After state
}

// An Op writes or deletes one item and records the new statistics of its logical partition.
type Op struct {
	EPK    string
	ID     string
	Delete bool
	// Value is the stored value (see value.go); nil when Delete.
	Value []byte
	// Logical is the item's logical partition's statistics after the op; zero items deletes
	// the record.
	Logical counts
	// IndexDel and IndexAdd are the index terms the op removes and adds.
	IndexDel, IndexAdd [][]byte
}

// apply writes the command into b.
func (p *Partition) apply(b *pebble.Batch, c *Command) error {
	var key []byte
	for i := range c.Ops {
		op := &c.Ops[i]
		key = storage.DocKey(key[:0], p.container, op.EPK, op.ID)
		var err error
		if op.Delete {
			err = b.Delete(key, nil)
		} else {
			err = b.Set(key, op.Value, nil)
		}
		if err != nil {
			return err
		}
		for _, t := range op.IndexDel {
			if err := b.Delete(storage.IndexKey(key[:0], p.container, p.id, t, op.EPK, op.ID), nil); err != nil {
				return err
			}
		}
		for _, t := range op.IndexAdd {
			if err := b.Set(storage.IndexKey(key[:0], p.container, p.id, t, op.EPK, op.ID), nil, nil); err != nil {
				return err
			}
		}
		key = storage.LogicalKey(key[:0], p.container, op.EPK)
		if op.Logical.Items == 0 {
			err = b.Delete(key, nil)
		} else {
			err = b.Set(key, encodeCounts(nil, op.Logical), nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
