package storage

import (
	"encoding/binary"
	"errors"
)

// Key layout. Every key starts with one family byte, so families never interleave. Numbers are
// fixed-width big-endian so they sort numerically; variable-length byte strings (EPKs, ids) are
// escaped and terminated (see appendEscaped) so that no key is a prefix of another and byte order
// of the encoded key equals the order of the tuple it encodes.
//
//	catalog    'c' kind(1) num(4)                      -> JSON record of a database or container
//	catalogSeq 'c' 'N'                                 -> JSON of the catalog's id counters
//	document   'd' container(4) esc(EPK) esc(id)       -> item value (see the partition package)
//	partition  'm' container(4) partition(4)           -> a physical partition's LSN and totals
//	logical    's' container(4) esc(EPK)               -> items and bytes of one logical partition
//	index      'x' container(4) partition(4) esc(path) value esc(EPK) esc(id) -> empty
//
// Documents of a container sort by (EPK, id): a logical partition is one contiguous span and a
// physical partition, which owns an EPK range, is the span [DocKey(c, min), DocKey(c, max)). A
// split therefore moves no documents. Logical partition statistics are keyed by container, not
// by physical partition, for the same reason.
//
// The range index of a physical partition lives under its own prefix: one entry per indexed
// value of each item, ordered by path, then value, then item. The value is encoded by
// value.AppendOrdered: a type byte, then nothing (null, booleans), 8 bytes (numbers) or
// escaped bytes (strings); arrays and objects are recorded by a marker byte alone
// (value.OrderedMarker), so the index knows every value a path holds, in type order. A split builds the children's entries and drops the parent's prefix.
const (
	familyCatalog   = 'c'
	familyDocument  = 'd'
	familyPartition = 'm'
	familyLogical   = 's'
	familyIndex     = 'x'
)

// Catalog record kinds.
const (
	CatalogDatabase  = 'D'
	CatalogContainer = 'C'
	catalogSeq       = 'N'
)

// CatalogKey is the key of a catalog record.
func CatalogKey(kind byte, num uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{familyCatalog, kind}, num)
}

// CatalogSpan bounds all catalog records of one kind.
func CatalogSpan(kind byte) (start, end []byte) {
	return []byte{familyCatalog, kind}, []byte{familyCatalog, kind + 1}
}

// CatalogSeqKey holds the catalog's id counters.
func CatalogSeqKey() []byte { return []byte{familyCatalog, catalogSeq} }

// DocKey is the key of an item. epk and id are raw bytes.
func DocKey(dst []byte, container uint32, epk, id string) []byte {
	dst = append(dst, familyDocument)
	dst = binary.BigEndian.AppendUint32(dst, container)
	dst = appendEscaped(dst, epk)
	return appendEscaped(dst, id)
}

// DocSpan bounds the items whose EPK lies in [minEPK, maxEPK) in a container.
func DocSpan(container uint32, minEPK, maxEPK string) (start, end []byte) {
	start = appendEscaped(binary.BigEndian.AppendUint32([]byte{familyDocument}, container), minEPK)
	end = appendEscaped(binary.BigEndian.AppendUint32([]byte{familyDocument}, container), maxEPK)
	return start, end
}

// ContainerDocSpan bounds all items of a container.
func ContainerDocSpan(container uint32) (start, end []byte) {
	start = binary.BigEndian.AppendUint32([]byte{familyDocument}, container)
	end = binary.BigEndian.AppendUint32([]byte{familyDocument}, container+1)
	return start, end
}

// ParseDocKey splits a document key into its EPK and id.
func ParseDocKey(key []byte) (epk, id string, err error) {
	if len(key) < 5 || key[0] != familyDocument {
		return "", "", errors.New("storage: not a document key")
	}
	e, rest, err := readEscaped(key[5:])
	if err != nil {
		return "", "", err
	}
	i, rest, err := readEscaped(rest)
	if err != nil || len(rest) != 0 {
		return "", "", errors.New("storage: malformed document key")
	}
	return e, i, nil
}

// PartitionKey is the key of a physical partition's state record.
func PartitionKey(container, partition uint32) []byte {
	k := binary.BigEndian.AppendUint32([]byte{familyPartition}, container)
	return binary.BigEndian.AppendUint32(k, partition)
}

// PartitionSpan bounds the state records of every partition of a container.
func PartitionSpan(container uint32) (start, end []byte) {
	return binary.BigEndian.AppendUint32([]byte{familyPartition}, container),
		binary.BigEndian.AppendUint32([]byte{familyPartition}, container+1)
}

// LogicalKey is the key of a logical partition's statistics; epk is the logical partition's
// full effective partition key.
func LogicalKey(dst []byte, container uint32, epk string) []byte {
	dst = append(dst, familyLogical)
	dst = binary.BigEndian.AppendUint32(dst, container)
	return appendEscaped(dst, epk)
}

// LogicalSpan bounds the logical partition statistics of a container within [minEPK, maxEPK).
func LogicalSpan(container uint32, minEPK, maxEPK string) (start, end []byte) {
	return LogicalKey(nil, container, minEPK), LogicalKey(nil, container, maxEPK)
}

// ParseLogicalKey returns the EPK of a logical partition statistics key.
func ParseLogicalKey(key []byte) (string, error) {
	if len(key) < 5 || key[0] != familyLogical {
		return "", errors.New("storage: not a logical partition key")
	}
	e, rest, err := readEscaped(key[5:])
	if err != nil || len(rest) != 0 {
		return "", errors.New("storage: malformed logical partition key")
	}
	return e, nil
}

// appendEscaped writes s so that it is self-delimiting and order-preserving: each 0x00 byte
// becomes 0x00 0xFF and the string ends with 0x00 0x01. A string that is a proper prefix of
// another sorts first, because its terminator 0x00 0x01 is below both 0x00 0xFF and any other byte.
func appendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			dst = append(dst, 0, 0xFF)
		} else {
			dst = append(dst, s[i])
		}
	}
	return append(dst, 0, 1)
}

func readEscaped(b []byte) (string, []byte, error) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != 0 {
			out = append(out, b[i])
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case 1:
			return string(out), b[i+2:], nil
		case 0xFF:
			out = append(out, 0)
			i++
		default:
			return "", nil, errors.New("storage: bad escape in key")
		}
	}
	return "", nil, errors.New("storage: unterminated key component")
}

// IndexTerm appends what identifies an index entry's path and value: esc(path) followed by
// the ordered encoding of the value.
func IndexTerm(dst []byte, path string, ordered []byte) []byte {
	return append(appendEscaped(dst, path), ordered...)
}

// IndexKey is the key of an index entry of a partition: the term, then the item.
func IndexKey(dst []byte, container, partition uint32, term []byte, epk, id string) []byte {
	dst = append(dst, familyIndex)
	dst = binary.BigEndian.AppendUint32(dst, container)
	dst = binary.BigEndian.AppendUint32(dst, partition)
	dst = append(dst, term...)
	dst = appendEscaped(dst, epk)
	return appendEscaped(dst, id)
}

// IndexBound is a key that sorts before every entry of the partition's index whose term starts
// with term (a path, or a path and a value prefix).
func IndexBound(container, partition uint32, term []byte) []byte {
	dst := binary.BigEndian.AppendUint32([]byte{familyIndex}, container)
	dst = binary.BigEndian.AppendUint32(dst, partition)
	return append(dst, term...)
}

// IndexPathPrefix is esc(path), the start of every term of path.
func IndexPathPrefix(path string) []byte { return appendEscaped(nil, path) }

// IndexPartitionSpan bounds a partition's whole index.
func IndexPartitionSpan(container, partition uint32) (start, end []byte) {
	start = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte{familyIndex}, container), partition)
	return start, binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte{familyIndex}, container), partition+1)
}

// IndexContainerSpan bounds the indexes of every partition of a container.
func IndexContainerSpan(container uint32) (start, end []byte) {
	return binary.BigEndian.AppendUint32([]byte{familyIndex}, container),
		binary.BigEndian.AppendUint32([]byte{familyIndex}, container+1)
}

// ParseIndexKey returns the item of an index entry; pathLen is the length of esc(path).
func ParseIndexKey(key []byte, pathLen int) (epk, id string, err error) {
	_, epk, id, err = ParseIndexEntry(key, pathLen)
	return epk, id, err
}

// ParseIndexEntry returns the encoded value and the item of an index entry; pathLen is the
// length of esc(path).
func ParseIndexEntry(key []byte, pathLen int) (value []byte, epk, id string, err error) {
	rest := key[min(len(key), 9+pathLen):]
	if len(key) < 9+pathLen+1 || key[0] != familyIndex {
		return nil, "", "", errors.New("storage: not an index key")
	}
	valueStart := rest
	switch t := rest[0]; {
	case t >= 0x01 && t <= 0x03 || t == 0x06 || t == 0x07: // null, booleans, array and object markers
		rest = rest[1:]
	case t == 0x04 && len(rest) >= 9:
		rest = rest[9:]
	case t == 0x05:
		if _, rest, err = readEscaped(rest[1:]); err != nil {
			return nil, "", "", err
		}
	default:
		return nil, "", "", errors.New("storage: bad value in index key")
	}
	value = valueStart[:len(valueStart)-len(rest)]
	if epk, rest, err = readEscaped(rest); err != nil {
		return nil, "", "", err
	}
	if id, rest, err = readEscaped(rest); err != nil || len(rest) != 0 {
		return nil, "", "", errors.New("storage: malformed index key")
	}
	return value, epk, id, nil
}

// IndexKeyForPartition rewrites an index key of one partition as the same entry of another
// partition of the container, for splits: the entry's term and item are unchanged.
func IndexKeyForPartition(key []byte, partition uint32) []byte {
	out := append([]byte(nil), key...)
	binary.BigEndian.PutUint32(out[5:9], partition)
	return out
}

// IndexEntryEPK returns the EPK of the item an index entry of any path points to.
func IndexEntryEPK(key []byte) (string, error) {
	if len(key) < 10 || key[0] != familyIndex {
		return "", errors.New("storage: not an index key")
	}
	_, rest, err := readEscaped(key[9:]) // the path
	if err != nil {
		return "", err
	}
	pathLen := len(key) - 9 - len(rest)
	e, _, err := ParseIndexKey(key, pathLen)
	return e, err
}
