package partition

import (
	"fmt"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/vectorindex"
)

// This file is introspection for tests and tools (the scenario driver in partitiontest, which
// lives outside the package): it lets them hold the writer, watch its queue and a split's
// capture, and read what a partition keeps in storage as stored. Requests never use it, and
// none of it changes what a partition does.

// Control runs fn on the partition's writer between two groups of commands: every group
// queued before it is committed, and none queued after it starts until fn returns. It returns
// once fn has run, or at once, with an Unavailable error, when the partition is closing. A
// test holds the writer with an fn that blocks, to queue requests behind it.
//
// For tests and tools; requests never use it.
func (p *Partition) Control(fn func()) error { return p.control(fn) }

// Queued is how many requests wait in the writer's queue, not counting those it is running.
//
// For tests and tools; requests never use it.
func (p *Partition) Queued() int { return len(p.queue) }

// Capturing reports whether this replica is building the children of a split, and so still
// captures what every entry it applies changes for them: from split-start until split-commit
// or split-abort.
//
// For tests and tools; requests never use it.
func (p *Partition) Capturing() bool {
	s := &p.split
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.plan != nil
}

// Partition is the partition the split divides.
//
// For tests and tools; requests never use it.
func (s *Split) Partition() *Partition { return s.p }

// Children are the two partitions the split makes of the partition's range: the left one
// owns the EPKs below the split point, the right one the rest.
//
// For tests and tools; requests never use it.
func (s *Split) Children() [2]Child {
	plan := splitPlan{At: s.at, Left: s.left, Right: s.right}
	return plan.children(s.p.rng)
}

// StateRecord reads the state record of partition id of container, as stored: the LSN, items
// and bytes it holds. ok is false when there is none (the partition never committed a
// command, or a split's commit removed it).
//
// For tests and tools; requests never use it.
func StateRecord(db *storage.DB, container, id uint32) (st Stats, ok bool, err error) {
	v, err := db.GetCopy(nil, storage.PartitionKey(container, id))
	if storage.IsNotFound(err) {
		return Stats{}, false, nil
	}
	if err != nil {
		return Stats{}, false, err
	}
	s, err := decodeState(v)
	if err != nil {
		return Stats{}, false, err
	}
	return Stats{LSN: s.LSN, Items: s.Items, Bytes: s.Bytes}, true, nil
}

// LogicalRecords lists the statistics records of the logical partitions of container whose
// EPK lies in r, as stored, in EPK order (their RU is zero). Whichever partition owns them, and
// whether it is open, does not matter: the records are keyed by EPK.
//
// For tests and tools; requests never use it.
func LogicalRecords(db *storage.DB, container uint32, r epk.Range) ([]LogicalStat, error) {
	var out []LogicalStat
	err := eachLogical(db, container, r, func(ls LogicalStat) { out = append(out, ls) })
	return out, err
}

// ItemAt names the item whose creation sequence is seq in the creation order of partition of
// container, as stored (open or not): its EPK and id.
//
// For tests and tools; requests never use it.
func ItemAt(db *storage.DB, container, partition uint32, seq uint64) (epk.EPK, string, error) {
	e, err := db.GetCopy(nil, storage.OrderKey(nil, container, partition, seq))
	if err != nil {
		return "", "", fmt.Errorf("order entry %d: %w", seq, err)
	}
	v, err := db.GetCopy(nil, storage.DocKey(nil, container, string(e), seq))
	if err != nil {
		return "", "", fmt.Errorf("document %d: %w", seq, err)
	}
	d, err := decodeValue(v)
	if err != nil {
		return "", "", fmt.Errorf("document %d: %w", seq, err)
	}
	return epk.EPK(e), string(d.id), nil
}

// VectorNodes lists the live nodes of the vector index graph over path (a term path) of
// partition of container, as stored, and whether the graph is complete (kept).
//
// For tests and tools; requests never use it.
func VectorNodes(db *storage.DB, container, partition uint32, path string) (live []uint64, complete bool, err error) {
	if _, err := db.GetCopy(nil, storage.VectorKey(nil, container, partition, path, storage.VectorComplete, 0)); err == nil {
		complete = true
	} else if !storage.IsNotFound(err) {
		return nil, false, err
	}
	lo, hi := storage.VectorNodeSpan(container, partition, path)
	it, err := db.NewIter(lo, hi)
	if err != nil {
		return nil, false, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		id, _ := storage.ParseVectorNodeKey(it.Key())
		n, err := vectorindex.UnmarshalNode(id, it.Value())
		if err != nil {
			return nil, false, err
		}
		if !n.Deleted {
			live = append(live, id)
		}
	}
	return live, complete, it.Error()
}

// VerifyOrderCounts makes every ORDER BY page that takes a count of index entries from memory
// (ordercount.go) also count them from storage, and panic when the two differ.
//
// For tests; it doubles the cost it saves.
func VerifyOrderCounts(on bool) { verifyCounts.Store(on) }
