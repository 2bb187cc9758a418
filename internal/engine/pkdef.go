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
}

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

func (d PartitionKeyDef) scheme() epk.Scheme {
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
