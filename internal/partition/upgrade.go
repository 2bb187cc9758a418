package partition

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/storage"
)

// The upgrade of a container's data from layout 3 (storage's keys_v3.go) to layout 4, in place.
// Layout 3 kept documents under (container, seq) and each partition's log under its id; a
// value named its log entry by (partition, LSN, index), and a state record had no version.
// Layout 4 keys documents and images by EPK, keeps the log of every live partition whole
// (its ancestors' entries of its range included), versions the state record, and keeps a
// partition's purge horizon and indexing policy in its own records.
//
// It runs in steps, each of which can be cut short by a crash at any point and done again:
//
//  1. documents, a batch at a time: each batch writes the layout-4 keys of some documents and
//     deletes their layout-3 keys, so a document is in one layout or the other, never both
//     nor neither, whatever survives;
//  2. log entries (with their images, in the same batch), likewise, each moved to the log of
//     the live partition that owns its EPK, its image under its EPK;
//  3. one synced batch: every live partition's state record in layout 4 (with the purge
//     horizon of the logs it read, from layout 3's retention records, which it deletes, and
//     the container's highest creation sequence, so that sequences stay unique), and its
//     indexing record, when a rebuild was in flight; the caller adds its record that the
//     container is done, so that a crash after it never converts the records twice.
//
// The batches of steps 1 and 2 are not synced: step 3's synced batch follows them in the
// write-ahead log, so a crash keeps them whenever it keeps it, and otherwise keeps a prefix of
// them, after which the steps carry on from what is left in layout 3.

// UpgradeRange is one live partition of a container being upgraded, as its catalog names it.
type UpgradeRange struct {
	ID      uint32
	Range   epk.Range
	Parents []uint32 // its ancestors, oldest first: their logs held its changes in layout 3
}

// UpgradeOptions tune an upgrade; the zero value is what a server uses.
type UpgradeOptions struct {
	// BatchKeys bounds the layout-3 keys moved per batch (0: upgradeBatch).
	BatchKeys int
	// AfterBatch, when set, is called after every batch commits (tests cut the power there).
	AfterBatch func()
}

const upgradeBatch = 4096

// UpgradeContainer rewrites one container's data from layout 3 to layout 4. ranges are its
// live partitions, tiling the EPK space; policy is its indexing policy's JSON. done, called
// with the last batch, adds the caller's record that the container is upgraded.
func UpgradeContainer(db *storage.DB, container uint32, ranges []UpgradeRange, policy json.RawMessage,
	o UpgradeOptions, done func(*storage.Batch) error) error {
	if o.BatchKeys <= 0 {
		o.BatchKeys = upgradeBatch
	}
	u := &upgrader{db: db, c: container, ranges: ranges, o: o}
	if err := u.documents(); err != nil {
		return fmt.Errorf("upgrading container %d's documents: %w", container, err)
	}
	if err := u.logs(); err != nil {
		return fmt.Errorf("upgrading container %d's log: %w", container, err)
	}
	if err := u.records(policy, done); err != nil {
		return fmt.Errorf("upgrading container %d's partition records: %w", container, err)
	}
	return nil
}

type upgrader struct {
	db     *storage.DB
	c      uint32
	ranges []UpgradeRange
	o      UpgradeOptions
	// maxSeq is the highest creation sequence seen in a layout-3 record of the container.
	maxSeq uint64
}

// owner is the live partition whose range holds e.
func (u *upgrader) owner(e epk.EPK) (uint32, error) {
	for _, r := range u.ranges {
		if r.Range.Contains(e) {
			return r.ID, nil
		}
	}
	return 0, fmt.Errorf("no partition of container %d owns EPK %s", u.c, e.Hex())
}

// batches runs fill over the keys of [start, end) in batches: fill adds the writes for the
// key the iterator is on and may step the iterator past keys it consumed with it, returning
// whether the iterator is still valid; each batch is committed unsynced.
func (u *upgrader) batches(start, end []byte, fill func(b *storage.Batch, it *storage.Iter) (bool, error)) error {
	for {
		it, err := u.db.NewIter(start, end)
		if err != nil {
			return err
		}
		b := u.db.NewBatch()
		n := 0
		ok := it.First()
		for ok && n < u.o.BatchKeys {
			if ok, err = fill(b, it); err != nil {
				break
			}
			n++
		}
		if err == nil {
			err = it.Error()
		}
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		if err == nil && n > 0 {
			err = b.CommitUnsynced()
		}
		b.Close()
		if err != nil {
			return err
		}
		if n > 0 && u.o.AfterBatch != nil {
			u.o.AfterBatch()
		}
		if !ok {
			return nil
		}
	}
}

// documents moves every layout-3 document to its layout-4 key and value.
func (u *upgrader) documents() error {
	start, end := storage.V3.DocSpan(u.c)
	return u.batches(start, end, func(b *storage.Batch, it *storage.Iter) (bool, error) {
		seq, err := storage.V3.ParseDocKey(it.Key())
		if err != nil {
			return false, err
		}
		d, err := decodeValueV3(it.Value())
		if err != nil {
			return false, fmt.Errorf("document %d: %w", seq, err)
		}
		v := encodeValue(nil, logPos{lsn: d.lsn, i: d.i}, string(d.id))
		v = append(v, d.json...)
		if err := b.Set(storage.DocKey(nil, u.c, string(d.epk), seq), v); err != nil {
			return false, err
		}
		if err := b.Delete(it.Key()); err != nil {
			return false, err
		}
		return it.Next(), nil
	})
}

// logs moves every layout-3 log entry, with its image, to its layout-4 keys, and indexes it
// under the live partition that owns its EPK.
func (u *upgrader) logs() error {
	start, end := storage.V3.LogSpan(u.c)
	return u.batches(start, end, func(b *storage.Batch, it *storage.Iter) (bool, error) {
		part, lsn, i, image, err := storage.V3.ParseLogKey(it.Key())
		if err != nil {
			return false, err
		}
		if image {
			// An image whose entry is gone: retention removed them together, so this one was
			// left by a crash between two of its batches, which layout 3 never made.
			if err := b.Delete(it.Key()); err != nil {
				return false, err
			}
			return it.Next(), nil
		}
		e, err := decodeEntryV3(it.Value())
		if err != nil {
			return false, fmt.Errorf("log entry %d.%d.%d: %w", part, lsn, i, err)
		}
		owner, err := u.owner(epk.EPK(e.epk))
		if err != nil {
			return false, err
		}
		v := appendEntry(nil, e.op, e.seq, e.ts, logPos{lsn: e.prevLSN, i: e.prevI}, string(e.epk), string(e.id))
		if e.expired {
			v[0] |= logExpired
		}
		if err := b.Set(storage.LogKey(nil, u.c, owner, lsn, i), v); err != nil {
			return false, err
		}
		if err := b.Delete(it.Key()); err != nil {
			return false, err
		}
		// The entry's image, if kept, is the next key: it moves in the same batch, since only
		// the entry says the EPK it moves under. The EPK is copied first: e's slices are the
		// iterator's, which the step to the image may reuse.
		imageKey := storage.ImageKey(nil, u.c, string(e.epk), lsn, i)
		ok := it.Next()
		if ok {
			if p2, l2, i2, img, err := storage.V3.ParseLogKey(it.Key()); err == nil && img && p2 == part && l2 == lsn && i2 == i {
				if err := b.Set(imageKey, it.Value()); err != nil {
					return false, err
				}
				if err := b.Delete(it.Key()); err != nil {
					return false, err
				}
				ok = it.Next()
			}
		}
		return ok, nil
	})
}

// records converts the live partitions' state and indexing records, in one synced batch.
func (u *upgrader) records(policy json.RawMessage, done func(*storage.Batch) error) error {
	// Layout 3's state records: every partition's, live or split, since the container's
	// sequence restarted above the highest of them.
	states := map[uint32]state{}
	start, end := storage.PartitionSpan(u.c)
	it, err := u.db.NewIter(start, end)
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		id := binary.BigEndian.Uint32(it.Key()[5:])
		st, err := decodeStateV3(it.Value())
		if err != nil {
			it.Close()
			return fmt.Errorf("partition %d: %w", id, err)
		}
		states[id] = st
		u.maxSeq = max(u.maxSeq, st.Seq)
	}
	if err := it.Close(); err != nil {
		return err
	}
	// Retention's horizons, per log.
	retained := map[uint32]uint64{}
	start, end = storage.V3.RetainedSpan(u.c)
	if it, err = u.db.NewIter(start, end); err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		id, err := storage.V3.ParseRetainedKey(it.Key())
		if err != nil {
			it.Close()
			return err
		}
		h, n := binary.Uvarint(it.Value())
		if n <= 0 {
			it.Close()
			return fmt.Errorf("retention record of partition %d: %w", id, errBadState)
		}
		retained[id] = h
	}
	if err := it.Close(); err != nil {
		return err
	}
	// Every document's sequence was below maxSeq, since the counter restarted above every
	// partition's record; a partition that never committed had none.
	b := u.db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(start, end); err != nil {
		return err
	}
	live := map[uint32]bool{}
	for _, r := range u.ranges {
		live[r.ID] = true
		st := states[r.ID]
		st.Seq = u.maxSeq
		for _, a := range append(append([]uint32(nil), r.Parents...), r.ID) {
			st.Purged = max(st.Purged, retained[a])
		}
		if err := b.Set(storage.PartitionKey(u.c, r.ID), encodeState(nil, st)); err != nil {
			return err
		}
		if err := u.indexingRecord(b, r.ID, policy); err != nil {
			return err
		}
	}
	// The records of partitions that split are gone in layout 3 already; drop any left over.
	for id := range states {
		if !live[id] {
			if err := b.Delete(storage.PartitionKey(u.c, id)); err != nil {
				return err
			}
		}
	}
	if err := done(b); err != nil {
		return err
	}
	if err := b.Commit(); err != nil {
		return err
	}
	if u.o.AfterBatch != nil {
		u.o.AfterBatch()
	}
	return nil
}

// indexingRecord converts partition id's layout-3 rebuild record, when it has one, into its
// layout-4 indexing record, which names the policy it rebuilds towards: the container's.
func (u *upgrader) indexingRecord(b *storage.Batch, id uint32, policy json.RawMessage) error {
	v, err := u.db.GetCopy(nil, storage.IndexingKey(u.c, id))
	if storage.IsNotFound(err) {
		return nil // it follows the container's policy alone
	}
	if err != nil {
		return err
	}
	var old struct {
		Prevs  []json.RawMessage `json:"prevs"`
		Cursor uint64            `json:"cursor"`
		Done   int64             `json:"done"`
	}
	if err := json.Unmarshal(v, &old); err != nil {
		return fmt.Errorf("partition %d: rebuild record: %w", id, err)
	}
	rec, err := json.Marshal(indexingRecord{Policy: policyJSONOf(policy), Prevs: old.Prevs, Cursor: old.Cursor, Done: old.Done})
	if err != nil {
		return err
	}
	return b.Set(storage.IndexingKey(u.c, id), rec)
}

func policyJSONOf(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

// Layout 3's values.

// storedV3 is a layout-3 document value: uvarint(LSN) uvarint(log partition)
// uvarint(change index) uvarint(len(EPK)) EPK uvarint(len(id)) id JSON.
type storedV3 struct {
	lsn     uint64
	i       uint16
	epk, id []byte
	json    []byte
}

var errBadV3 = errors.New("partition: malformed layout 3 value")

func decodeValueV3(v []byte) (storedV3, error) {
	f := fields{v: v, ok: true}
	var s storedV3
	s.lsn = f.uvarint()
	f.uint32() // the partition whose log held the version's entry: in layout 4, its owner's
	pos := f.uvarint()
	if pos > 0xFFFF {
		f.ok = false
	}
	s.i = uint16(pos)
	s.epk, s.id = f.bytes(), f.bytes()
	if !f.ok {
		return storedV3{}, errBadV3
	}
	s.json = f.v
	return s, nil
}

// entryV3 is a layout-3 log entry: op(1) uvarint(seq) varint(ts) uvarint(prev.lsn)
// uvarint(prev.part) uvarint(prev.i) uvarint(len(EPK)) EPK uvarint(len(id)) id.
type entryV3 struct {
	op      LogOp
	expired bool
	seq     uint64
	ts      int64
	prevLSN uint64
	prevI   uint16
	epk, id []byte
}

func decodeEntryV3(v []byte) (entryV3, error) {
	if len(v) < 1 {
		return entryV3{}, errBadV3
	}
	e := entryV3{op: LogOp(v[0] &^ logExpired), expired: v[0]&logExpired != 0}
	if e.op < LogCreate || e.op > LogDelete {
		return entryV3{}, errBadV3
	}
	f := fields{v: v[1:], ok: true}
	e.seq, e.ts = f.uvarint(), f.varint()
	e.prevLSN = f.uvarint()
	f.uint32() // the previous version's log partition: in layout 4, the item's owner
	pi := f.uvarint()
	if pi > 0xFFFF {
		f.ok = false
	}
	e.prevI = uint16(pi)
	e.epk, e.id = f.bytes(), f.bytes()
	if !f.ok || len(f.v) != 0 {
		return entryV3{}, errBadV3
	}
	return e, nil
}

// decodeStateV3 reads a layout-3 state record: uvarint(LSN) varint(items) varint(bytes)
// uvarint(seq).
func decodeStateV3(v []byte) (state, error) {
	f := fields{v: v, ok: true}
	st := state{LSN: f.uvarint()}
	st.counts = counts{Items: f.varint(), Bytes: f.varint()}
	st.Seq = f.uvarint()
	if !f.ok || len(f.v) != 0 {
		return state{}, errBadState
	}
	return st, nil
}
