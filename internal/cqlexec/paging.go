package cqlexec

import (
	"encoding/json"
	"strings"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/epk"
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

// decodePaging reads a paging state for a read of spans spans of table t. A state that
// names a row names its partition key too, and the row must be of that partition: the read
// resumes in that partition as one whose rows it has begun to return (a static row is then
// no row of its own).
func decodePaging(t *table, b []byte, spans int) (pagingState, error) {
	var s pagingState
	if err := json.Unmarshal(b, &s); err != nil || s.Span < 0 || s.Span > spans || s.Count < 0 || s.PartCount < 0 || !s.consistent(t) {
		return pagingState{}, cql.Invalid(fault.Pos{}, "Invalid value for the paging state")
	}
	return s, nil
}

// consistent reports whether the row s names, if any, is of the partition it names.
func (s pagingState) consistent(t *table) bool {
	if s.ID == "" && s.EPK == nil {
		return s.Key == nil
	}
	if len(s.Key) != len(t.pk) {
		return false
	}
	pk, err := pkBytes(s.Key)
	if err != nil {
		return false
	}
	pl := placeOf(pk)
	return epk.EPK(s.EPK) == pl.epk && strings.HasPrefix(s.ID, t.rowID(pl, nil))
}
