package engine

import (
	"bytes"
	"encoding/json"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/value"
)

// Time to live (see docs/time-to-live.md). A container's defaultTtl is absent (off: items never
// expire, their "ttl" is ignored), -1 (on: only items with a positive "ttl" expire) or n > 0
// (items expire n seconds after their last write unless their "ttl" says otherwise). Expiry
// itself is judged by the partitions (partition/expiry.go); the reaper (reaper.go) deletes
// expired items in the background.

const ttlRule = "Ensure to provide a nonzero positive integer less than or equal to '2147483647', or '-1' which means never expire."

// ParseDefaultTTL reads a container's "defaultTtl" as a request body gives it: nil when absent
// or null (time to live off), else -1 or a positive whole number of seconds.
func ParseDefaultTTL(raw json.RawMessage) (*int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || !document.ValidTTL(f) {
		return nil, fault.New(fault.BadRequest, "The input defaultTtl '%s' is invalid. %s", raw, ttlRule)
	}
	d := int64(f)
	return &d, nil
}

// checkDefaultTTL refuses a default time to live that ParseDefaultTTL would not give.
func checkDefaultTTL(d *int64) error {
	if d != nil && !document.ValidTTL(float64(*d)) {
		return fault.New(fault.BadRequest, "The input defaultTtl '%d' is invalid. %s", *d, ttlRule)
	}
	return nil
}

// ttlSetting is a default time to live as partitions hold it.
func ttlSetting(d *int64) int64 {
	if d == nil {
		return partition.TTLOff
	}
	return *d
}

// ttlOn reports whether the container's time to live is on; it reads no lock.
func (c *Container) ttlOn() bool {
	return c.ttl.Load() != partition.TTLOff
}

// checkItemTTL refuses an item whose "ttl" Cosmos would refuse, when the container's time to
// live is on (when it is off, "ttl" is an ordinary property, as Cosmos ignores it).
func (c *Container) checkItemTTL(item value.Value) error {
	if !c.ttlOn() { // first: containers without time to live pay no lookup
		return nil
	}
	t := item.Get("ttl")
	if t.IsUndefined() || t.Kind() == value.Number && document.ValidTTL(t.Num()) {
		return nil
	}
	return fault.New(fault.BadRequest, "The input ttl '%s' is invalid. %s", value.AppendJSON(nil, t), ttlRule)
}

// applyLiveness gives every partition of c what of c.rec says which versions are gone: the
// default time to live, and the logical partitions being deleted (keydelete.go). A change
// applies to every item at once, those written before included: an item whose last write is
// older than a new, shorter default expires now. Callers hold e.mu, which a split holds while
// it opens children from c.rec: every partition, old or new, ends with the new setting.
func (c *Container) applyLiveness() {
	c.ttl.Store(ttlSetting(c.rec.DefaultTTL))
	gone := keyDeletesOf(c.rec)
	c.deleting.Store(&gone)
	for _, p := range c.routes.Load().parts {
		p.SetDefaultTTL(c.ttl.Load())
		p.SetKeyDeletes(gone)
	}
}

// checkTTLIndexed refuses, as the service does, a default time to live (any, even -1) on a
// container whose indexing mode is none: expiry needs the items indexed by _ts there.
func checkTTLIndexed(pol *indexing.Policy, defaultTTL *int64) error {
	if pol.ModeNone() && defaultTTL != nil {
		return fault.New(fault.BadRequest, "Indexing mode value cannot be 'none' when 'defaultTtl' is specified in the collection")
	}
	return nil
}
