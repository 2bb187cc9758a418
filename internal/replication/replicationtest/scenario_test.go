package replicationtest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestScenarios runs the interaction scenarios under testdata/scenarios (see Interaction for
// the commands).
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		in := NewInteraction(t)
		defer in.Close()
		datadriven.RunTest(t, path, in.Run)
	})
}
