package partition

import (
	"bytes"
	"strings"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/uniquekey"
	"github.com/partita-db/partita/internal/value"
)

// Unique keys. Each item of a container with a unique key policy holds one entry per unique
// key (uniquekey.Policy.Entries), stored under its logical partition's EPK and naming the
// item's id. The writer decides every write of the partition, so the check below is exact
// when it sees, in this order, what the command itself changed, what earlier commands of the
// group changed, and what storage holds (every earlier group is committed): two writes of the
// same values can never both pass, whether they arrive together or not. Entries are keyed by
// container and EPK, so a split, which never divides a logical partition, leaves them where
// they are; the parent writes them in its batches until it closes, and the children read them
// from storage.

// uniqueOf is the unique key entries of a stored value; nil if it cannot be read, in which
// case the writer reads it again.
func (p *Partition) uniqueOf(stored []byte) [][]byte {
	d, err := decodeValue(stored)
	if err != nil {
		return nil
	}
	v, err := value.Parse(d.json)
	if err != nil {
		return nil
	}
	return p.unique.Entries(v)
}

// decideUnique sets the unique key entries ch removes and adds, and refuses the write with
// Conflict when another item of the logical partition holds one it adds. cur is the item's
// version before the operation (oldJSON its JSON), item its new content (nil for a delete).
func (p *Partition) decideUnique(g *group, chs []Change, ch *Change, w *Operation, cur version, oldJSON []byte, item *document.Item) error {
	var old, next [][]byte
	if cur.seq != 0 {
		if old = cur.uniq; old == nil {
			v, err := value.Parse(oldJSON)
			if err != nil {
				return fault.New(fault.Internal, "stored item is not valid JSON: %w", err)
			}
			old = p.unique.Entries(v)
		}
	}
	if item != nil {
		if next = w.Unique; next == nil || w.Kind == Mutate {
			next = p.unique.Entries(item.Value)
		}
	}
	ch.uniq = next
	if ch.Renamed != "" {
		// Entries name their holder's id: a renamed item writes all of its entries again.
		ch.UniqueDel, ch.UniqueAdd = old, next
	} else {
		// Entries come in key order, one per key, so both lists are sorted.
		ch.UniqueDel, ch.UniqueAdd = termDiff(old, next)
	}
	for _, e := range ch.UniqueAdd {
		holder, err := p.uniqueHolder(g, chs, ch.EPK, e)
		if err != nil {
			return fault.New(fault.Internal, "reading unique key entries: %w", err)
		}
		if holder != "" && holder != ch.ID && holder != ch.Renamed {
			return fault.New(fault.Conflict, "Unique index constraint violation: another item with this partition key already has the same value(s) at %s",
				strings.Join(p.unique.Paths(uniquekey.Key(e)), ", "))
		}
	}
	return nil
}

// uniqueHolder is the id of the item of logical partition e that holds entry, as a command
// being decided sees it; "" when none does.
func (p *Partition) uniqueHolder(g *group, chs []Change, e string, entry []byte) (string, error) {
	for i := len(chs) - 1; i >= 0; i-- {
		ch := &chs[i]
		if ch.EPK != e {
			continue
		}
		if containsEntry(ch.UniqueAdd, entry) {
			return ch.ID, nil
		}
		if containsEntry(ch.UniqueDel, entry) {
			return "", nil
		}
	}
	var buf [128]byte
	key := storage.UniqueKey(buf[:0], p.container, e, entry)
	if id, ok := g.unique[string(key)]; ok {
		return id, nil
	}
	id, err := p.db.GetCopy(nil, key)
	if storage.IsNotFound(err) {
		return "", nil
	}
	return string(id), err
}

func containsEntry(entries [][]byte, e []byte) bool {
	for _, x := range entries {
		if bytes.Equal(x, e) {
			return true
		}
	}
	return false
}

// rememberUnique records in the group which item now holds the entries a change moved.
func (g *group) rememberUnique(p *Partition, ch *Change) {
	if g.unique == nil {
		g.unique = map[string]string{}
	}
	for _, e := range ch.UniqueDel {
		g.unique[string(storage.UniqueKey(nil, p.container, ch.EPK, e))] = ""
	}
	for _, e := range ch.UniqueAdd {
		g.unique[string(storage.UniqueKey(nil, p.container, ch.EPK, e))] = ch.ID
	}
}

// stageUnique adds a change's unique key entries.
func (a *applyBatch) stageUnique(ch *Change) error {
	for _, e := range ch.UniqueDel {
		a.key = storage.UniqueKey(a.key[:0], a.p.container, ch.EPK, e)
		if err := a.b.Delete(a.key); err != nil {
			return err
		}
	}
	for _, e := range ch.UniqueAdd {
		a.key = storage.UniqueKey(a.key[:0], a.p.container, ch.EPK, e)
		if err := a.b.Set(a.key, []byte(ch.ID)); err != nil {
			return err
		}
	}
	return nil
}
