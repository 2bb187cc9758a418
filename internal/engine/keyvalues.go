package engine

import (
	"encoding/json"
	"sync"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
)

// The metrics name a logical partition by its EPK, which is what the partition counts by; a
// person looks for the key value (tenant-42, not 05C1C12F). The value is not kept beside the
// counts: it is read back from one item of the logical partition when the metrics are asked
// for, and remembered, since a logical partition's EPK always stands for the same value.

// keyValues remembers the key values of a container's logical partitions by EPK.
type keyValues struct {
	mu sync.Mutex
	// byEPK holds at most keyValuesKept values; it starts again when full, which costs one
	// read per logical partition the next metrics name.
	byEPK map[epk.EPK]json.RawMessage
}

const keyValuesKept = 4096

// withKeys fills in the key values of ls, logical partitions of c's partition p, as far as
// p's items tell them.
func (c *Container) withKeys(p *partition.Partition, ls []LogicalStat) []LogicalStat {
	for i := range ls {
		ls[i].Key = c.keyValue(p, ls[i].EPK)
	}
	return ls
}

// keyValue is the partition key value of the logical partition at e in p, as JSON; nil when
// p holds no item of it.
func (c *Container) keyValue(p *partition.Partition, e epk.EPK) json.RawMessage {
	kv := &c.keyValues
	kv.mu.Lock()
	v, ok := kv.byEPK[e]
	kv.mu.Unlock()
	if ok {
		return v
	}
	var key epk.Key
	found := false
	// What the replica has applied: a value needs no read index (nor a leader, which a group
	// may lack while the metrics are asked for).
	rd := p.At(partition.Consistency{Level: partition.Prefix})
	err := rd.ScanItems(partition.ItemPos{EPK: e}, partition.ItemPos{EPK: p.Range().Max}, false, func(d partition.Doc) bool {
		if d.EPK() == e {
			_, key, _ = document.Parse(d.JSON, c.paths)
			found = key != nil
		}
		return false
	})
	if err != nil || !found {
		return nil // not remembered: an item may come
	}
	v = keyJSON(key)
	kv.mu.Lock()
	if kv.byEPK == nil || len(kv.byEPK) >= keyValuesKept {
		kv.byEPK = map[epk.EPK]json.RawMessage{}
	}
	kv.byEPK[e] = v
	kv.mu.Unlock()
	return v
}

// keyJSON writes a partition key value as the service shows it: a hierarchical key's values as
// the array the partition key header holds (epk.Key.AppendJSON), a one-path key's value alone.
func keyJSON(k epk.Key) json.RawMessage {
	b := k.AppendJSON(nil)
	if len(k) == 1 {
		b = b[1 : len(b)-1]
	}
	return b
}
