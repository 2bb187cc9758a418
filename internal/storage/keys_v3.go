package storage

import (
	"encoding/binary"
	"errors"
)

// Layout 3's families that layout 4 replaced, for the upgrade that rewrites them in place
// (see the engine's upgrade). Nothing else reads or writes them.
//
//	document 'd' container(4) seq(8)                         -> item value, layout 3
//	log      'f' container(4) partition(4) lsn(8) i(2) [1]   -> a change [its image], layout 3
//	retained 'r' container(4) partition(4)                   -> LSN up to which that log was purged
//
// The other families kept their keys; the partition state ('m') and indexing ('z') records
// kept their keys and changed their values.
const (
	familyDocumentV3 = 'd'
	familyLogV3      = 'f'
	familyRetainedV3 = 'r'
)

// V3 is layout 3's keys.
var V3 v3Keys

type v3Keys struct{}

// DocSpan bounds a container's layout-3 documents.
func (v3Keys) DocSpan(container uint32) (start, end []byte) {
	return containerSpan(familyDocumentV3, container)
}

// DocKey is the key of a layout-3 document.
func (v3Keys) DocKey(container uint32, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32([]byte{familyDocumentV3}, container), seq)
}

// ParseDocKey returns a layout-3 document key's sequence.
func (v3Keys) ParseDocKey(key []byte) (seq uint64, err error) {
	if len(key) != 13 || key[0] != familyDocumentV3 {
		return 0, errors.New("storage: not a layout 3 document key")
	}
	return binary.BigEndian.Uint64(key[5:]), nil
}

// LogSpan bounds a container's layout-3 log entries and images, of every partition.
func (v3Keys) LogSpan(container uint32) (start, end []byte) {
	return containerSpan(familyLogV3, container)
}

// ParseLogKey reads a layout-3 log or log image key.
func (v3Keys) ParseLogKey(key []byte) (partition uint32, lsn uint64, i uint16, image bool, err error) {
	const n = 19
	if len(key) != n && (len(key) != n+1 || key[n] != 1) || key[0] != familyLogV3 {
		return 0, 0, 0, false, errors.New("storage: not a layout 3 log key")
	}
	return binary.BigEndian.Uint32(key[5:]), binary.BigEndian.Uint64(key[9:]),
		binary.BigEndian.Uint16(key[17:]), len(key) > n, nil
}

// RetainedSpan bounds a container's layout-3 retention records.
func (v3Keys) RetainedSpan(container uint32) (start, end []byte) {
	return containerSpan(familyRetainedV3, container)
}

// ParseRetainedKey returns the partition of a layout-3 retention record.
func (v3Keys) ParseRetainedKey(key []byte) (partition uint32, err error) {
	if len(key) != 9 || key[0] != familyRetainedV3 {
		return 0, errors.New("storage: not a layout 3 retention key")
	}
	return binary.BigEndian.Uint32(key[5:]), nil
}

// Spans are the spans of layout 3's families, whole: what an upgrade leaves of them once every
// container is done is garbage (the leftovers of a container whose creation failed).
func (v3Keys) Spans() []Span {
	var out []Span
	for _, f := range []byte{familyDocumentV3, familyLogV3, familyRetainedV3} {
		out = append(out, Span{[]byte{f}, []byte{f + 1}})
	}
	return out
}
