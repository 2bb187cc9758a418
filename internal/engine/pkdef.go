package engine

import (
	"slices"
	"strings"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
)

// PartitionKeyDef is a container's partition key definition, fixed at creation.
type PartitionKeyDef struct {
	Paths   []string `json:"paths"`
	Kind    string   `json:"kind"`    // "Hash" (one path) or "MultiHash" (up to three)
	Version int      `json:"version"` // hash version: 1 or 2; MultiHash is always 2
	// SystemKey marks the key Cosmos DB gives a container created without one (SystemKey()):
	// its items without a value (none, or null) form one logical partition, addressed with the
	// SDKs' "none" partition key.
	SystemKey bool `json:"systemKey,omitempty"`
}

// SystemKeyPath is the path of the system partition key.
const SystemKeyPath = "/_partitionKey"

// SystemKey is the partition key definition of a container created without one: a legacy,
// non-partitioned container, as the service presents it since it migrated them all to the
// system key (version 1 hashing, as their SDKs compute it).
func SystemKey() PartitionKeyDef {
	return PartitionKeyDef{Paths: []string{SystemKeyPath}, Kind: "Hash", Version: 1, SystemKey: true}
}

// MaxNonPartitionedThroughput is the most throughput a container created without a partition
// key may be created with: the service's limit for a non-partitioned container, which has one
// physical partition.
const MaxNonPartitionedThroughput = 10_000

// MaxHierarchyDepth is how many paths a MultiHash key may have.
const MaxHierarchyDepth = 3

// normalize validates d and fills in what Cosmos infers: an empty kind is Hash for one path
// and MultiHash for several; an absent version is 1 for Hash (the service's default) and 2
// for MultiHash.
func (d PartitionKeyDef) normalize() (PartitionKeyDef, error) {
	if len(d.Paths) == 0 {
		return d, fault.New(fault.BadRequest, "The partition key definition needs at least one path, e.g. {\"paths\": [\"/pk\"]}")
	}
	if len(d.Paths) > MaxHierarchyDepth {
		return d, fault.New(fault.BadRequest, "A partition key definition has at most %d paths; got %d", MaxHierarchyDepth, len(d.Paths))
	}
	for i, p := range d.Paths {
		if _, err := document.SplitKeyPath(p); err != nil {
			return d, err
		}
		if slices.Contains(d.Paths[:i], p) {
			return d, fault.New(fault.BadRequest, "The partition key path %q is given twice; the paths of a hierarchical partition key must differ", p)
		}
	}
	switch {
	case d.Kind == "" && len(d.Paths) == 1:
		d.Kind = "Hash"
	case d.Kind == "":
		d.Kind = "MultiHash"
	case strings.EqualFold(d.Kind, "Hash"):
		d.Kind = "Hash"
	case strings.EqualFold(d.Kind, "MultiHash"):
		d.Kind = "MultiHash"
	case d.Kind == TableKind:
		if len(d.Paths) != 1 || d.Version != 2 {
			return d, fault.New(fault.BadRequest, "A %s partition key has one path and version 2", TableKind)
		}
		return d, nil
	default:
		return d, fault.New(fault.BadRequest, "Partition key kind %q is not supported; use \"Hash\" or \"MultiHash\"", d.Kind)
	}
	if d.Kind == "Hash" && len(d.Paths) != 1 {
		return d, fault.New(fault.BadRequest, "A partition key of kind Hash has exactly one path; use kind MultiHash for %d paths", len(d.Paths))
	}
	if d.SystemKey && (d.Kind != "Hash" || d.Paths[0] != SystemKeyPath || d.Version == 2) {
		return d, fault.New(fault.BadRequest, "A system partition key is the path %q, kind Hash, version 1", SystemKeyPath)
	}
	switch {
	case d.Version == 0 && d.Kind == "Hash":
		d.Version = 1
	case d.Version == 0:
		d.Version = 2
	case d.Version != 1 && d.Version != 2:
		return d, fault.New(fault.BadRequest, "Partition key version %d is not supported; use 1 or 2", d.Version)
	case d.Kind == "MultiHash" && d.Version != 2:
		return d, fault.New(fault.BadRequest, "A MultiHash partition key requires version 2")
	}
	return d, nil
}

// TableKind is the partition key kind of a CQL table: its rows are placed by the Murmur3
// token of their partition key (rows.go), over the EPK space version 2 hashes fill.
const TableKind = "Murmur3"

// Scheme is how the definition's key values hash to EPKs.
func (d PartitionKeyDef) Scheme() epk.Scheme {
	switch {
	case d.Kind == TableKind:
		return epk.SchemeV2 // for the layout of initial ranges and splits; rows bring their EPKs
	case d.Kind == "MultiHash":
		return epk.SchemeMulti
	case d.Version == 2:
		return epk.SchemeV2
	default:
		return epk.SchemeV1
	}
}
