package replica

import (
	"encoding/json"
	"fmt"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/replication"
)

// Group is the Raft group of partition id of the container numbered container: the container
// in the upper 32 bits, the partition in the lower. Group IDs are kept in every replica's
// descriptor and in the control plane's records, so the layout never changes.
func Group(container, id uint32) replication.GroupID {
	return replication.GroupID(uint64(container)<<32 | uint64(id))
}

// ContainerOf is the number of the container whose partition g is.
func ContainerOf(g replication.GroupID) uint32 { return uint32(uint64(g) >> 32) }

// Meta is what opens a replica's partition: its container and range, kept as JSON in the
// group's descriptor (a format: fields are never renamed).
type Meta struct {
	Container uint32 `json:"container"`
	ID        uint32 `json:"id"`
	Min       string `json:"min"`
	Max       string `json:"max"`
}

// MetaOf is the descriptor's bytes for partition id of container, over range r.
func MetaOf(container, id uint32, r epk.Range) []byte {
	b, _ := json.Marshal(Meta{Container: container, ID: id, Min: r.Min.Hex(), Max: r.Max.Hex()}) // cannot fail
	return b
}

// ParseMeta reads a descriptor's bytes back.
func ParseMeta(g replication.GroupID, raw []byte) (Meta, error) {
	var m Meta
	if err := json.Unmarshal(raw, &m); err != nil {
		return Meta{}, fmt.Errorf("group %d: %w", g, err)
	}
	return m, nil
}
