package partition

import "github.com/partita-db/partita/internal/epk"

// Deleting a logical partition's items (the service's delete by partition key). The engine
// records the request with the partition's LSN as of it (a bound every version written before
// the request is at or below), and gives every partition of the container the set of logical
// partitions being deleted (SetKeyDeletes). From then on a version of such a logical partition
// at or below its bound is gone for every read and write, as an expired one is (expiry.go:
// reads pass over it, a create or an upsert of its id deletes it first, in the same command),
// while versions written after the request are not. The engine's reaper deletes the gone
// versions in the background (FindKeyDeleted, then Expire operations) and, once none is
// left, ends the deletion.
//
// The set is the catalog's, pushed to each replica as the default time to live is: what a
// write decides from it travels in its command, so every replica applies the same changes.

// keyDeletes maps the EPK of each logical partition being deleted to its bound.
type keyDeletes map[string]uint64

// SetKeyDeletes sets the logical partitions being deleted, by EPK, each with its bound: the
// partition's LSN as of the request. Reads and writes after it see their versions at or below
// the bound gone.
func (p *Partition) SetKeyDeletes(gone map[epk.EPK]uint64) {
	if len(gone) == 0 {
		p.deleting.Store(nil)
		return
	}
	m := make(keyDeletes, len(gone))
	for e, bound := range gone {
		m[string(e)] = bound
	}
	p.deleting.Store(&m)
}

// keyDeletes is the set of logical partitions being deleted; nil when there is none.
func (p *Partition) keyDeletes() keyDeletes {
	if m := p.deleting.Load(); m != nil {
		return *m
	}
	return nil
}

// Hides reports whether some stored versions may be gone (expired, or deleted with their
// logical partition): what counts the partition keeps from its stored versions may then
// count more than reads find.
func (p *Partition) Hides() bool {
	return p.defaultTTL.Load() != TTLOff || p.deleting.Load() != nil
}

// FindKeyDeleted returns up to max stored items of this partition's logical partitions being
// deleted whose current version is gone (at or below its bound), for the reaper to delete
// with Expire operations. Done is set when it found fewer than max: none is left but those.
func (p *Partition) FindKeyDeleted(max int) ([]ExpiredItem, ExpiredScan, error) {
	gone := p.keyDeletes()
	scan := ExpiredScan{Done: true}
	if gone == nil {
		return nil, scan, nil
	}
	snap := p.db.NewSnapshot()
	defer snap.Close()
	docs, err := p.docReader(snap)
	if err != nil {
		return nil, scan, err
	}
	defer docs.close()
	docs.live = liveness{} // every stored version: the gone ones are those sought
	var found []ExpiredItem
	for e, bound := range gone {
		if !p.rng.Contains(epk.EPK(e)) {
			continue
		}
		err := docs.scanLogical(epk.EPK(e), 0, func(d Doc) bool {
			scan.Read++
			scan.Bytes += len(d.JSON)
			if d.LSN <= bound { // not written after the request
				found = append(found, ExpiredItem{EPK: epk.EPK(e), ID: string(d.id), Seq: d.Seq})
			}
			return len(found) < max
		})
		if err != nil {
			return nil, scan, err
		}
		if len(found) == max {
			scan.Done = false
			break
		}
	}
	return found, scan, nil
}
