package engine

import (
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
)

// ProcedureOptions qualify the execution of a stored procedure.
type ProcedureOptions struct {
	// PartitionKey is the logical partition the procedure runs over, as one transaction.
	PartitionKey epk.Key
	// Log collects what the script writes with console.log (x-ms-documentdb-script-enable-logging).
	Log bool
}

// ProcedureResult is the outcome of a stored procedure. Charge is set on failures too.
type ProcedureResult struct {
	// Body is the JSON the script set with getResponse().setBody; nil when it set none.
	Body []byte
	// Log is what the script logged, when ProcedureOptions.Log asked for it.
	Log         string
	Charge      float64
	LSN         uint64
	PartitionID uint32
}

// ExecuteProcedure runs the stored procedure id with args (a JSON array) over one logical
// partition, as one transaction.
func (c *Container) ExecuteProcedure(id string, args []byte, o ProcedureOptions) (ProcedureResult, error) {
	return ProcedureResult{}, fault.New(fault.NotFound, "not yet")
}
