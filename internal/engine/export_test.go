package engine

import (
	"log/slog"
	"testing"

	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/storage"
)

// Upgrade runs the layout upgrade on db with o, for tests that cut it short.
func Upgrade(db *storage.DB, o partition.UpgradeOptions) error {
	return upgrade(db, slog.New(slog.DiscardHandler), o)
}

// Fixture3Files are the files of the data directory an earlier build wrote (testdata/format3),
// by their path in it.
var Fixture3Files = fixture3Files

// StartTestCluster starts a cluster of n nodes in this process (cluster_test.go), for the
// tests of packages above the engine; they stop when the test ends.
func StartTestCluster(t *testing.T, n int) []*Engine {
	tc := startTestCluster(t, n)
	nodes := make([]*Engine, n)
	for i := range nodes {
		nodes[i] = tc.node(i + 1)
	}
	return nodes
}

// RaceCommits has e's next n catalog commits each preceded by race (raceCommits).
func RaceCommits(e *Engine, n int, race func()) { raceCommits(e, n, race) }
