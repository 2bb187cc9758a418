package cqlexec

import (
	"encoding/json"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/fault"
)

// pagingState is where a page of a SELECT stopped: after the row at (EPK, ID) of span Span,
// having returned Count rows in all (for LIMIT) and PartCount of the partition Key (for PER
// PARTITION LIMIT). Drivers hand it back as they got it; it is checked like any input.
type pagingState struct {
	Span      int      `json:"s"`
	EPK       []byte   `json:"e"` // bytes, not a string: an EPK is not text
	ID        string   `json:"i"`
	Key       [][]byte `json:"k,omitempty"`
	Count     int      `json:"n"`
	PartCount int      `json:"p"`
	done      bool     // LIMIT reached: no next page
}

func (s pagingState) encode() []byte {
	b, _ := json.Marshal(s)
	return b
}

// decodePaging reads a paging state for a read of spans spans.
func decodePaging(b []byte, spans int) (pagingState, error) {
	var s pagingState
	if err := json.Unmarshal(b, &s); err != nil || s.Span < 0 || s.Span > spans || s.Count < 0 || s.PartCount < 0 {
		return pagingState{}, cql.Invalid(fault.Pos{}, "Invalid value for the paging state")
	}
	return s, nil
}
