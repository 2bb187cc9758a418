package partitiontest

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
)

// tally counts items and their bytes.
type tally struct{ Items, Bytes int64 }

func (c tally) add(items, bytes int64) tally {
	return tally{Items: c.Items + items, Bytes: c.Bytes + bytes}
}

// handleStats prints each open partition's Stats and the records of its logical partitions,
// each checked against a recount of the stored items.
//
//	stats
func (env *Env) handleStats(t *testing.T, _ *datadriven.TestData) string {
	var b strings.Builder
	for _, p := range env.parts {
		st := p.Stats()
		fmt.Fprintf(&b, "p%d lsn=%d items=%d bytes=%d", p.ID(), st.LSN, st.Items, st.Bytes)
		recount := map[epk.EPK]tally{}
		var total tally
		var last uint64
		inOrder := true
		err := p.Scan([]epk.Range{epk.All}, 0, func(d partition.Doc) bool {
			recount[d.EPK()] = recount[d.EPK()].add(1, int64(len(d.JSON)))
			total = total.add(1, int64(len(d.JSON)))
			inOrder = inOrder && d.Seq > last
			last = d.Seq
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if !inOrder {
			b.WriteString(" OUT OF CREATION ORDER")
		}
		if total.Items != st.Items || total.Bytes != st.Bytes {
			fmt.Fprintf(&b, " MISMATCH: the items stored are %d, %d bytes", total.Items, total.Bytes)
		}
		b.WriteString("\n")
		records, err := partition.LogicalRecords(env.db, container, p.Range())
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, r := range records {
			line := fmt.Sprintf("  %s: items=%d bytes=%d", env.items.PKName(r.EPK), r.Items, r.Bytes)
			if rc := recount[r.EPK]; rc != (tally{r.Items, r.Bytes}) {
				line += fmt.Sprintf(" MISMATCH: the items stored are %d, %d bytes", rc.Items, rc.Bytes)
			}
			delete(recount, r.EPK)
			lines = append(lines, line)
		}
		for e, rc := range recount {
			lines = append(lines, fmt.Sprintf("  %s: NO RECORD for %d items, %d bytes", env.items.PKName(e), rc.Items, rc.Bytes))
		}
		sort.Strings(lines)
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
