package engine

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/ru"
)

// Deleting every item of a logical partition: the service's delete by partition key, which
// the SDKs call as a POST to .../operations/partitionkeydelete. As on the service, the items
// are gone for reads at once and deleted in the background.
//
// The request reads the partition's LSN as of now (linearizably: after the leader confirms its
// commit index), which every write acknowledged before it is at or below, and records it in
// the container's record beside the key (keyDeleteRecord): so the deletion survives restarts,
// reaches every node of a cluster through the catalog, and follows the key into a split's
// children, whose versions keep their LSNs. Every partition is given the container's
// deletions (partition.SetKeyDeletes): a version of such a key at or below its bound is gone
// for every read and write, as an expired item is, and versions written after the request are
// not. The reaper of the partition's leader deletes the gone versions (reapKeyDeletes), with
// what the partition's budget spares, at most keyDeleteShare of it a second, and then removes
// the record: the deletion is over.

// keyDeleteShare is the share of a partition's request units a second the background deletion
// of its logical partitions spends at most, as the service's "about 10% of the container's
// RU/s", of what its users leave unspent.
const keyDeleteShare = 0.1

// keyDeleteRecord is one logical partition being deleted, in its container's record.
type keyDeleteRecord struct {
	EPK string          `json:"epk"` // hex
	Key json.RawMessage `json:"key"` // the partition key's values, as a JSON array
	// LSN is the bound: the versions of the logical partition at or below it are deleted.
	LSN   uint64 `json:"lsn"`
	Since int64  `json:"since"` // when it was asked, Unix seconds
}

// KeyDelete is a deletion of a logical partition in progress, for the partitions view.
type KeyDelete struct {
	Key       json.RawMessage // the partition key's values, as a JSON array
	Since     time.Time
	Partition uint32 // the physical partition that holds the key now
}

// DeleteAllItemsByPartitionKey deletes every item of the logical partition of key: at once for
// reads, in the background for storage (see above). A key whose deletion is in progress is
// deleted again up to now. It returns the request's charge.
func (c *Container) DeleteAllItemsByPartitionKey(ctx context.Context, key epk.Key) (float64, error) {
	e := c.e
	if e.cluster != nil && e.cluster.active() < clusterversion.KeyDeletes {
		return 0, fault.New(fault.BadRequest, "Deleting the items of a partition key needs every node of the cluster at cluster version %s or later", clusterversion.KeyDeletes)
	}
	ek, err := c.EPK(key)
	if err != nil {
		return 0, err
	}
	bound, err := c.lsnNow(ctx, ek)
	if err != nil {
		return 0, err
	}
	rec := keyDeleteRecord{EPK: ek.Hex(), Key: key.AppendJSON(nil), LSN: bound, Since: now()}
	err = e.freshWrite(func() error {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.containerByNum(c.num) != c {
			return fault.New(fault.NotFound, "Resource Not Found. Container %q was deleted", c.id)
		}
		next := c.rec
		next.KeyDeletes = slices.DeleteFunc(slices.Clone(next.KeyDeletes), func(k keyDeleteRecord) bool { return k.EPK == rec.EPK })
		next.KeyDeletes = append(next.KeyDeletes, rec)
		return c.commitRecord(next)
	})
	if err != nil {
		return 0, err
	}
	e.log.Info("deleting the items of a partition key", "container", c.id, "key", string(rec.Key), "lsn", bound)
	return ru.CatalogWrite(), nil // the request records the deletion; the reaper pays for the rest
}

// lsnNow is the LSN of the partition that holds the logical partition e, as of now: at or above
// every write acknowledged before the call.
func (c *Container) lsnNow(ctx context.Context, e epk.EPK) (uint64, error) {
	if p := c.routes.Load().lookup(e); p != nil {
		if err := p.At(c.partitionConsistency(p.ID(), ReadConsistency{Level: Strong})).Await(); err != nil {
			return 0, err
		}
		return p.Stats().LSN, nil
	}
	rr, ok := c.remoteOf(e)
	if !ok {
		return 0, errNotHere()
	}
	return (&remotePart{c: c, rr: rr, pri: ru.PriorityOf(ctx)}).lsnNow()
}

// commitRecord persists next as c's record and applies what the deletions in it change.
// Callers hold e.mu.
func (c *Container) commitRecord(next containerRecord) error {
	if err := c.e.persist(catalog.Containers, next.Num, next); err != nil {
		return err
	}
	c.rec = next
	c.applyLiveness()
	return nil
}

// keyDeletesOf are the deletions of rec, by EPK, as partitions take them; nil when none.
func keyDeletesOf(rec containerRecord) map[epk.EPK]uint64 {
	if len(rec.KeyDeletes) == 0 {
		return nil
	}
	out := make(map[epk.EPK]uint64, len(rec.KeyDeletes))
	for _, k := range rec.KeyDeletes {
		if e, err := epk.ParseHex(k.EPK); err == nil {
			out[e] = k.LSN
		}
	}
	return out
}

// KeyDeletes are the deletions of c's logical partitions in progress.
func (c *Container) KeyDeletes() []KeyDelete {
	c.e.mu.RLock()
	defer c.e.mu.RUnlock()
	var out []KeyDelete
	rt := c.routes.Load()
	for _, k := range c.rec.KeyDeletes {
		e, err := epk.ParseHex(k.EPK)
		if err != nil {
			continue
		}
		kd := KeyDelete{Key: k.Key, Since: time.Unix(k.Since, 0).UTC()}
		if p := rt.lookup(e); p != nil {
			kd.Partition = p.ID()
		} else if rr, ok := rt.remoteAt(e); ok {
			kd.Partition = rr.id
		}
		out = append(out, kd)
	}
	return out
}

// reapKeyDeletes deletes what p holds of the logical partitions being deleted, spending what
// p's budget spares at now, at most keyDeleteShare of its rate, and reports what it deleted
// and whether none is left. Each step deletes as many items as what is left to spend pays for,
// at what the steps before paid for one.
func (e *Engine) reapKeyDeletes(p *partition.Partition, now time.Time) (deleted int, done bool) {
	spare := p.Budget().Spare(now)
	if rate := p.Budget().Rate(); rate > 0 {
		spare = min(spare, keyDeleteShare*rate)
	}
	spent, each := 0.0, ru.Delete(1024, 0) // until a step says what an item costs here
	for spent < spare {
		n := min(reapChunk, max(1, int((spare-spent)/each)))
		found, scan, err := p.FindKeyDeleted(n)
		if err != nil {
			e.log.Error("deleting the items of a partition key", "partition", p.ID(), "err", err)
			return deleted, false
		}
		spent += ru.Feed(scan.Read, scan.Bytes, 1)
		if len(found) > 0 {
			n, cost, err := expire(p, found)
			if err != nil {
				return deleted, false
			}
			spent += cost
			if deleted += n; n > 0 {
				each = cost / float64(n)
			}
		}
		if scan.Done {
			return deleted, len(found) == 0
		}
	}
	return deleted, false
}

// keyDeletesIn are the deletions of c's record whose keys r holds.
func (c *Container) keyDeletesIn(r epk.Range) []keyDeleteRecord {
	c.e.mu.RLock()
	defer c.e.mu.RUnlock()
	var out []keyDeleteRecord
	for _, k := range c.rec.KeyDeletes {
		if e, err := epk.ParseHex(k.EPK); err == nil && r.Contains(e) {
			out = append(out, k)
		}
	}
	return out
}

// endKeyDeletes removes the deletions ended from c's record: a partition's leader found no
// version of their keys left. A key asked to be deleted again since has a later bound, and
// stays.
func (e *Engine) endKeyDeletes(c *Container, ended []keyDeleteRecord) {
	err := e.freshWrite(func() error {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.containerByNum(c.num) != c {
			return nil
		}
		next := c.rec
		next.KeyDeletes = slices.DeleteFunc(slices.Clone(next.KeyDeletes), func(k keyDeleteRecord) bool {
			return slices.ContainsFunc(ended, func(x keyDeleteRecord) bool { return x.EPK == k.EPK && x.LSN == k.LSN })
		})
		if len(next.KeyDeletes) == len(c.rec.KeyDeletes) {
			return nil
		}
		return c.commitRecord(next)
	})
	if err != nil {
		e.log.Warn("ending the deletion of a partition key's items", "container", c.id, "err", err)
		return
	}
	for _, k := range ended {
		e.log.Info("the items of a partition key are deleted", "container", c.id, "key", string(k.Key))
	}
}
