package partition_test

import (
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/partition/partitiontest"
)

// TestScenarios runs the stories under testdata/scenarios against partitions opened directly
// on storage, without the engine; package partitiontest documents their commands.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		env := partitiontest.New(t)
		defer env.Close()
		datadriven.RunTest(t, path, env.Run)
	})
}
