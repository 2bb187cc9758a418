package cqlexec

import (
	"bytes"
	"encoding/json"

	"github.com/partita-db/partita/internal/fault"
)

// A stored row is one item of the table's container (key.go says where), a JSON object:
//
//	{"id": "<hex key>",
//	 "k": ["<base64>", ...],          the partition key values, then the clustering values
//	 "m": {"t": "<µs>", "x": <s>},    the row marker an INSERT writes: the row exists even
//	                                  with no other column set, until x (Unix s, 0: never)
//	 "d": "<µs>",                     the row's deletion time: nothing older survives it
//	 "c": {"col": {"v": "<base64>" | null, "t": "<µs>", "x": <s>}, ...},
//	 "ttl": <s>}                      when every part expires: when the engine may drop it
//
// Values are kept in their protocol serialization, so a read returns them as they are. Each
// cell carries its write time: a write applies to a cell only when it is newer (last write
// wins, as in Cassandra: on a tie a deletion wins, then the greater value). A cell whose "v"
// is null is a deletion that keeps its time for that rule; "d" does the same for the row.

// cellDoc is a cell as stored.
type cellDoc struct {
	V []byte `json:"v"` // nil: deleted
	T int64  `json:"t,string"`
	X int64  `json:"x,omitempty"` // expiry, Unix seconds; 0 never
}

// rowDoc is a row as stored.
type rowDoc struct {
	ID      string              `json:"id"`
	Key     [][]byte            `json:"k"`
	Marker  *cellDoc            `json:"m,omitempty"`
	Deleted *int64              `json:"d,omitempty,string"`
	Cells   map[string]*cellDoc `json:"c,omitempty"`
	TTL     int64               `json:"ttl,omitempty"`
}

func decodeRow(doc []byte) (*rowDoc, error) {
	r := &rowDoc{}
	if err := json.Unmarshal(doc, r); err != nil {
		return nil, fault.New(fault.Internal, "a stored row is malformed: %w", err)
	}
	return r, nil
}

// live reports whether c holds a value at now (Unix seconds).
func (c *cellDoc) live(now int64) bool {
	return c != nil && c.V != nil && (c.X == 0 || c.X > now)
}

// wins reports whether a write of c beats the cell old, which it would replace.
func (c *cellDoc) wins(old *cellDoc) bool {
	switch {
	case old == nil || c.T > old.T:
		return true
	case c.T < old.T:
		return false
	case c.V == nil || old.V == nil:
		return c.V == nil && old.V != nil
	default:
		return bytes.Compare(c.V, old.V) > 0
	}
}

// setCell writes c into column name if it is newer than both the cell there and the row's
// deletion.
func (r *rowDoc) setCell(name string, c *cellDoc) {
	if r.Deleted != nil && c.T <= *r.Deleted {
		return
	}
	if c.wins(r.Cells[name]) {
		if r.Cells == nil {
			r.Cells = map[string]*cellDoc{}
		}
		r.Cells[name] = c
	}
}

// setMarker writes the row marker of an INSERT.
func (r *rowDoc) setMarker(c *cellDoc) {
	if r.Deleted != nil && c.T <= *r.Deleted {
		return
	}
	if r.Marker == nil || c.T >= r.Marker.T {
		r.Marker = c
	}
}

// delete deletes the row at time ts: every cell and marker written at or before it.
func (r *rowDoc) delete(ts int64) {
	if r.Deleted != nil && *r.Deleted >= ts {
		return
	}
	r.Deleted = &ts
	if r.Marker != nil && r.Marker.T <= ts {
		r.Marker = nil
	}
	for n, c := range r.Cells {
		if c.T <= ts {
			delete(r.Cells, n)
		}
	}
}

// live reports whether the row exists at now: a live marker or a live cell.
func (r *rowDoc) live(now int64) bool {
	if r.Marker != nil && (r.Marker.X == 0 || r.Marker.X > now) {
		return true
	}
	for _, c := range r.Cells {
		if c.live(now) {
			return true
		}
	}
	return false
}

// size is about the bytes r takes, in memory or stored: its id, key and cell values.
func (r *rowDoc) size() int {
	n := 64 + len(r.ID)
	for _, k := range r.Key {
		n += len(k)
	}
	for name, c := range r.Cells {
		n += 32 + len(name) + len(c.V)
	}
	return n
}

// dead reports whether nothing of the row needs keeping: no marker, no cell, no deletion.
func (r *rowDoc) dead() bool {
	return r.Marker == nil && len(r.Cells) == 0 && r.Deleted == nil
}

// encode serializes the row, with the time to live that lets the engine drop it once every
// part has expired (none when a part never expires or the row keeps a deletion).
func (r *rowDoc) encode(now int64) []byte {
	r.TTL = 0
	last, all := int64(0), r.Deleted == nil
	parts := func(c *cellDoc) {
		if c.X == 0 {
			all = false
		}
		last = max(last, c.X)
	}
	if r.Marker != nil {
		parts(r.Marker)
	}
	for _, c := range r.Cells {
		parts(c)
	}
	if all && last > 0 {
		r.TTL = max(last-now, 1) + 1 // a second late rather than early: reads hide it before
	}
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // a rowDoc always marshals
	}
	return b
}
