package partitiontest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
)

// handleLog prints every open partition's change log, all versions, in the order ReadLog
// passes it.
//
//	log
func (env *Env) handleLog(t *testing.T, _ *datadriven.TestData) string {
	var b strings.Builder
	for _, p := range env.parts {
		fmt.Fprintf(&b, "p%d:", p.ID())
		through, err := p.ReadLog(partition.LogRead{Range: epk.All, AllVersions: true}, func(c *partition.LogChange) bool {
			fmt.Fprintf(&b, " %d:%s:%s", c.LSN, c.Op, env.items.ItemName(epk.EPK(c.EPK), string(c.ID)))
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, " (through %d)\n", through)
	}
	return b.String()
}
