package partition

import (
	"github.com/partita-db/partita/internal/storage"
)

// A Command is one atomic change to a partition, with every choice already made: applying it
// reads nothing and depends on nothing but its own fields, so replicas that apply the same
// commands in the same order end in the same state.
type Command struct {
	LSN     uint64
	TS      int64 // when it was decided, in Unix seconds: the items' _ts and the log's time
	Changes []Change
	// After is the partition's LSN and totals once the command is applied. The writer
	// persists it once per group of commands, as of the group's last.
	After state
}

// A Change writes or deletes one item and records the new statistics of its logical partition.
type Change struct {
	EPK string
	ID  string
	// Renamed is the id the item had before this change, when a replace gave it a new one
	// (ID); empty otherwise. The item keeps its document and creation sequence: only its item
	// key moves.
	Renamed string
	// Seq is the item's creation sequence, the key of its document.
	Seq uint64
	// New is set when the change creates the item: its item and order keys are written.
	New    bool
	Delete bool
	// Value is the stored value (see value.go); nil when Delete.
	Value []byte
	// Logical is the item's logical partition's statistics after the change; zero items
	// deletes the record.
	Logical counts
	// Prev names the log entry of the version the change replaces or deletes (zero for a
	// create), and PrevJSON is that version, written as the entry's image (see log.go).
	Prev     logPos
	PrevJSON []byte
	// IndexDel and IndexAdd are the index terms the change removes and adds.
	IndexDel, IndexAdd [][]byte
	// terms are all the index terms of Value, for later commands of the group that replace
	// it again; not part of what is applied.
	terms [][]byte
	// Expired marks a Delete made because the item's time to live ran out; its log entry
	// says so (the change feed's timeToLiveExpired).
	Expired bool
	// UniqueDel and UniqueAdd are the unique key entries the change removes and adds (none
	// in a container without unique keys), and uniq all the entries of Value, like terms.
	UniqueDel, UniqueAdd [][]byte
	uniq                 [][]byte
}

// apply writes the command into b.
func (p *Partition) apply(b *storage.Batch, c *Command) error {
	var key []byte
	var seq [8]byte
	for i := range c.Changes {
		ch := &c.Changes[i]
		var err error
		if key, err = p.logChange(b, key, c, i); err != nil {
			return err
		}
		doc := storage.DocKey(key[:0], p.container, ch.Seq)
		switch {
		case ch.Delete:
			err = b.Delete(doc)
			if err == nil {
				err = b.Delete(storage.ItemKey(key[:0], p.container, ch.EPK, ch.ID))
			}
			if err == nil {
				err = b.Delete(storage.OrderKey(key[:0], p.container, p.id, ch.Seq))
			}
		case ch.New:
			err = b.Set(doc, ch.Value)
			if err == nil {
				err = b.Set(storage.ItemKey(key[:0], p.container, ch.EPK, ch.ID), storage.EncodeSeq(seq[:0], ch.Seq))
			}
			if err == nil {
				err = b.Set(storage.OrderKey(key[:0], p.container, p.id, ch.Seq), []byte(ch.EPK))
			}
		default:
			err = b.Set(doc, ch.Value)
			if err == nil && ch.Renamed != "" {
				err = b.Delete(storage.ItemKey(key[:0], p.container, ch.EPK, ch.Renamed))
				if err == nil {
					err = b.Set(storage.ItemKey(key[:0], p.container, ch.EPK, ch.ID), storage.EncodeSeq(seq[:0], ch.Seq))
				}
			}
		}
		if err != nil {
			return err
		}
		for _, t := range ch.IndexDel {
			if err := b.Delete(storage.IndexKey(key[:0], p.container, p.id, t, ch.Seq)); err != nil {
				return err
			}
		}
		for _, t := range ch.IndexAdd {
			if err := b.Set(storage.IndexKey(key[:0], p.container, p.id, t, ch.Seq), nil); err != nil {
				return err
			}
		}
		if len(ch.UniqueDel)+len(ch.UniqueAdd) > 0 {
			if key, err = p.applyUnique(b, key, ch); err != nil {
				return err
			}
		}
		key = storage.LogicalKey(key[:0], p.container, ch.EPK)
		if ch.Logical.Items == 0 {
			err = b.Delete(key)
		} else {
			err = b.Set(key, encodeCounts(nil, ch.Logical))
		}
		if err != nil {
			return err
		}
	}
	return nil
}
