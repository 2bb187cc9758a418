package engine

import (
	"errors"
	"testing"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
)

// Every ORDER BY page whose count of index entries comes from memory checks it against
// storage (and panics when they differ), except in benchmarks (uncheckedCounts).
func init() { partition.VerifyOrderCounts(true) }

// uncheckedCounts turns the check off for a benchmark of ORDER BY pages, which measures them
// as they cost without it.
func uncheckedCounts(b *testing.B) {
	partition.VerifyOrderCounts(false)
	b.Cleanup(func() { partition.VerifyOrderCounts(true) })
}

type partitionDoc = partition.Doc

func asStatus(err error, target **fault.Error) bool { return errors.As(err, target) }
