package partitiontest

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/partition"
)

// handleStateRecord prints the persisted state record of partition id N, open or not.
//
//	state-record id=N
func (env *Env) handleStateRecord(t *testing.T, d *datadriven.TestData) string {
	var id uint32
	d.ScanArgs(t, "id", &id)
	st, ok, err := partition.StateRecord(env.db, container, id)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "none"
	}
	return fmt.Sprintf("lsn=%d items=%d bytes=%d", st.LSN, st.Items, st.Bytes)
}
