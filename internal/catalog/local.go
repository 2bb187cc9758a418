package catalog

import (
	"fmt"

	"github.com/partita-db/partita/internal/storage"
)

// Local is the catalog in the node's own Pebble: a single node's store. Its keys and values are
// those every earlier release wrote (storage.CatalogKey, storage.CatalogSeqKey), so a data
// directory's catalog needs no migration.
type Local struct{ db *storage.DB }

// NewLocal is the catalog kept in db.
func NewLocal(db *storage.DB) *Local { return &Local{db: db} }

var _ Backend = (*Local)(nil)

// Load reads the whole catalog.
func (l *Local) Load() (Contents, error) {
	var c Contents
	v, err := l.db.GetCopy(nil, storage.CatalogSeqKey())
	switch {
	case err == nil:
		c.Counters = v
	case !storage.IsNotFound(err):
		return c, err
	}
	for _, k := range kindOrder {
		lo, hi := storage.CatalogSpan(byte(k))
		it, err := l.db.NewIter(lo, hi)
		if err != nil {
			return c, err
		}
		for it.First(); it.Valid(); it.Next() {
			key := it.Key()
			if len(key) != 6 {
				it.Close()
				return c, fmt.Errorf("catalog: a record key %x of the wrong length", key)
			}
			num := uint32(key[2])<<24 | uint32(key[3])<<16 | uint32(key[4])<<8 | uint32(key[5])
			c.Records = append(c.Records, Record{Key: Key{Kind: k, Num: num}, Value: append([]byte(nil), it.Value()...)})
		}
		err = it.Error()
		it.Close()
		if err != nil {
			return c, err
		}
	}
	return c, nil
}

// Commit applies ch in one synced batch. It returns revision 0.
func (l *Local) Commit(ch Change) (int64, error) {
	b := l.db.NewBatch()
	defer b.Close()
	if err := l.Stage(b, ch); err != nil {
		return 0, err
	}
	return 0, b.Commit()
}

// Stage adds ch to b, a batch of the node's storage, so that it commits with b's other
// writes.
func (l *Local) Stage(b *storage.Batch, ch Change) error {
	if err := ch.check(); err != nil {
		return err
	}
	if err := b.Set(storage.CatalogSeqKey(), ch.Counters); err != nil {
		return err
	}
	for _, r := range ch.Put {
		if err := b.Set(storage.CatalogKey(byte(r.Kind), r.Num), r.Value); err != nil {
			return err
		}
	}
	for _, k := range ch.Delete {
		if err := b.Delete(storage.CatalogKey(byte(k.Kind), k.Num)); err != nil {
			return err
		}
	}
	return nil
}
