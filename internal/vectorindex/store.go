package vectorindex

import (
	"encoding/binary"
	"errors"
	"slices"
)

// Node is one vector of the graph as the store keeps it.
type Node struct {
	// ID is the caller's id for the vector (an item's).
	ID uint64
	// Code is the vector as the index keeps it (see EncodeVector): raw float32 before the
	// quantizer is trained, quantized after.
	Code []byte
	// Neighbors are the out-edges, at most Config.MaxDegree of them, in no particular order.
	// They may name nodes that are tombstones, or (after a crash between writes a caller
	// failed to make atomic) nodes that are gone; readers skip the latter.
	Neighbors []uint64
	// Deleted marks a tombstone: the node still guides searches through its edges until
	// Consolidate removes it, but it is never returned.
	Deleted bool
}

// Meta is the index's one small record of global state.
type Meta struct {
	// Entry is where every search and insert starts; HasEntry is false for an empty graph.
	Entry    uint64
	HasEntry bool
	// Live and Deleted count the nodes stored: live ones and tombstones.
	Live    int64
	Deleted int64
	// Inserts counts the inserts since the last Consolidate.
	Inserts int64
}

// Reader is the index's view of its store: a consistent state (a snapshot, or a snapshot
// overlaid with the pending changes of the caller's batch). Node's results are read-only
// to the index, which copies before it changes anything, and the store must not change
// them either while an operation holds them.
type Reader interface {
	// Node returns the record of id; ok is false when there is none.
	Node(id uint64) (n Node, ok bool, err error)
	// Meta returns the global record; the zero Meta for an index never written.
	Meta() (Meta, error)
	// Quantizer returns the trained quantizer, nil before training.
	Quantizer() (Quantizer, error)
}

// Scanner is a Reader that can also visit every node, which Consolidate needs to find the
// edges into tombstones (the graph keeps no reverse edges).
type Scanner interface {
	Reader
	// Scan calls fn for every node, in any order, until fn returns false.
	Scan(fn func(Node) bool) error
}

// Changes is what a mutating operation (Insert, Delete, Consolidate) decided: the caller
// writes all of it atomically, in the same batch as the item it concerns, and nothing
// else of the index changes. Put holds whole records (write each under its ID, replacing
// any previous one); Delete the ids whose records are removed. No id is in both.
type Changes struct {
	Put    []Node
	Delete []uint64
	// Meta is the new global record, nil when it did not change.
	Meta *Meta
	// Quantizer is set when this operation trained the quantizer; store its MarshalBinary
	// and return it from Reader.Quantizer from then on. It never changes afterwards.
	Quantizer Quantizer
}

// Empty reports whether there is nothing to write.
func (c Changes) Empty() bool {
	return len(c.Put) == 0 && len(c.Delete) == 0 && c.Meta == nil && c.Quantizer == nil
}

// MarshalNode encodes a node's record for a key-value store keyed by the id (which the
// record therefore leaves out): a flags byte, the code with its length, and the neighbour
// ids sorted and delta-encoded as varints, so that ids allocated close together cost one
// or two bytes each instead of eight.
func MarshalNode(n Node) []byte {
	return AppendNode(make([]byte, 0, 16+len(n.Code)+3*len(n.Neighbors)), n)
}

// AppendNode is MarshalNode appending to dst.
func AppendNode(dst []byte, n Node) []byte {
	var flags byte
	if n.Deleted {
		flags |= 1
	}
	dst = append(dst, nodeVersion, flags)
	dst = binary.AppendUvarint(dst, uint64(len(n.Code)))
	dst = append(dst, n.Code...)
	ids := slices.Clone(n.Neighbors)
	slices.Sort(ids)
	ids = slices.Compact(ids) // a duplicate edge carries nothing
	dst = binary.AppendUvarint(dst, uint64(len(ids)))
	var prev uint64
	for _, id := range ids {
		dst = binary.AppendUvarint(dst, id-prev)
		prev = id
	}
	return dst
}

const nodeVersion = 1

var errBadNode = errors.New("vectorindex: malformed node record")

// UnmarshalNode decodes a record MarshalNode wrote for id. The node's slices do not alias
// data.
func UnmarshalNode(id uint64, data []byte) (Node, error) {
	if len(data) < 2 || data[0] != nodeVersion || data[1]&^1 != 0 {
		return Node{}, errBadNode
	}
	n := Node{ID: id, Deleted: data[1]&1 != 0}
	rest := data[2:]
	l, k := binary.Uvarint(rest)
	if k <= 0 || l > uint64(len(rest)-k) {
		return Node{}, errBadNode
	}
	rest = rest[k:]
	n.Code = slices.Clone(rest[:l])
	rest = rest[l:]
	cnt, k := binary.Uvarint(rest)
	if k <= 0 || cnt > uint64(len(rest)) {
		return Node{}, errBadNode
	}
	rest = rest[k:]
	n.Neighbors = make([]uint64, 0, cnt)
	var prev uint64
	for range cnt {
		d, k := binary.Uvarint(rest)
		if k <= 0 {
			return Node{}, errBadNode
		}
		rest = rest[k:]
		prev += d
		n.Neighbors = append(n.Neighbors, prev)
	}
	if len(rest) != 0 {
		return Node{}, errBadNode
	}
	return n, nil
}

// MarshalBinary encodes the global record.
func (m Meta) MarshalBinary() ([]byte, error) {
	b := []byte{metaVersion, 0}
	if m.HasEntry {
		b[1] = 1
	}
	b = binary.AppendUvarint(b, m.Entry)
	b = binary.AppendUvarint(b, uint64(m.Live))
	b = binary.AppendUvarint(b, uint64(m.Deleted))
	b = binary.AppendUvarint(b, uint64(m.Inserts))
	return b, nil
}

const metaVersion = 1

// UnmarshalBinary decodes what MarshalBinary wrote. A record without the Inserts count
// (written before it existed) reads as zero inserts.
func (m *Meta) UnmarshalBinary(b []byte) error {
	bad := errors.New("vectorindex: malformed meta record")
	if len(b) < 2 || b[0] != metaVersion || b[1]&^1 != 0 {
		return bad
	}
	var v [4]uint64
	n := 0
	for rest := b[2:]; len(rest) > 0; n++ {
		if n == len(v) {
			return bad
		}
		x, k := binary.Uvarint(rest)
		if k <= 0 {
			return bad
		}
		v[n] = x
		rest = rest[k:]
	}
	if n < 3 {
		return bad
	}
	*m = Meta{Entry: v[0], HasEntry: b[1] == 1, Live: int64(v[1]), Deleted: int64(v[2]), Inserts: int64(v[3])}
	return nil
}
