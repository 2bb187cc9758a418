package storage

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/partita-db/partita/internal/value"
)

// Key layout (format 3, see FormatVersion). Every key starts with one family byte, so families
// never interleave. Numbers are fixed-width big-endian so they sort numerically; variable-length
// byte strings (EPKs, ids) are escaped and terminated (see appendEscaped) so that no key is a
// prefix of another and byte order of the encoded key equals the order of the tuple it encodes.
//
//	catalog    'c' kind(1) num(4)                      -> JSON record of a database, container or
//	                                                      user (with its permissions)
//	catalogSeq 'c' 'N'                                 -> JSON of the catalog's id counters
//	document   'd' container(4) seq(8)                 -> item value (see the partition package)
//	log        'f' container(4) partition(4) lsn(8) i(2)   -> a change, the i-th of command lsn
//	log image  'f' container(4) partition(4) lsn(8) i(2) 1 -> JSON of the version that change wrote,
//	                                                      once a later change replaced or deleted it
//	item       'k' container(4) esc(EPK) esc(id)       -> seq(8) of the item's document
//	partition  'm' container(4) partition(4)           -> a physical partition's LSN and totals
//	order      'o' container(4) partition(4) seq(8)    -> raw EPK of the document
//	retained   'r' container(4) partition(4)           -> LSN up to which that log has been purged
//	logical    's' container(4) esc(EPK)               -> items and bytes of one logical partition
//	unique     'u' container(4) esc(EPK) entry         -> id of the item that holds the entry
//	format     'v'                                     -> the layout's version, FormatVersion
//	index      'x' container(4) partition(4) esc(path) value seq(8) -> empty
//	reindex    'z' container(4) partition(4)           -> JSON of a partition's index rebuild in
//	                                                      flight (absent when its index follows
//	                                                      the container's policy alone)
//
// seq is the item's creation sequence: a number its container hands out once, when the item is
// created, and that only grows; a replace keeps it. Documents are keyed by it, so new items are
// appended at the end of their container's span and the storage engine's compactions move them
// down the tree instead of rewriting them again and again, as they did when documents were keyed
// by their (hash-ordered) EPK. It is also the item's order in unordered query results: Cosmos
// returns a physical partition's items in creation order.
//
// The item family maps (EPK, id) to seq for point reads; a logical partition is one contiguous
// span of it. The order family lists each physical partition's items in creation order, with
// their EPK so that a split can divide it without reading documents. Documents and items are
// keyed by container, not by physical partition, so a split moves neither; like the index, the
// order family is per physical partition and a split builds the children's from the parent's.
// Logical partition statistics are keyed by container for the same reason.
//
// The log (the change feed) is per physical partition and in LSN order; it is written in the
// batch of the change it records. A split does not copy it: the children continue their
// parent's LSNs in logs of their own, and read their parent's log (kept until retention empties
// it) for what came before. A version's image is written under its log entry when a later
// change replaces or deletes it; until then the document itself holds it.
//
// A unique key entry (see the uniquekey package: the key's number, then its values, each
// self-delimiting) records that an item of the logical partition EPK holds those values; the
// partition's writer refuses a second holder. Like items, entries are keyed by container and
// EPK, not by physical partition: a logical partition never splits, so a split moves none.
// Containers created before unique keys existed have none, and need none.
//
// The range index of a physical partition lives under its own prefix: one entry per indexed
// value of each item, ordered by path, then value, then creation. The value is encoded by
// value.AppendOrdered: a type byte, then nothing (null, booleans), 8 bytes (numbers) or
// escaped bytes (strings); arrays and objects are recorded by a marker byte alone
// (value.OrderedMarker), so the index knows every value a path holds, in type order.
const (
	familyCatalog   = 'c'
	familyDocument  = 'd'
	familyLog       = 'f'
	familyItem      = 'k'
	familyPartition = 'm'
	familyOrder     = 'o'
	familyRetained  = 'r'
	familyLogical   = 's'
	familyUnique    = 'u'
	familyFormat    = 'v'
	familyIndex     = 'x'
	familyReindex   = 'z'
)

// Catalog record kinds.
const (
	CatalogDatabase  = 'D'
	CatalogContainer = 'C'
	CatalogUser      = 'U'
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

// DocKey is the key of the document with creation sequence seq.
func DocKey(dst []byte, container uint32, seq uint64) []byte {
	dst = append(dst, familyDocument)
	dst = binary.BigEndian.AppendUint32(dst, container)
	return binary.BigEndian.AppendUint64(dst, seq)
}

// ContainerDocSpan bounds all documents of a container.
func ContainerDocSpan(container uint32) (start, end []byte) {
	start = binary.BigEndian.AppendUint32([]byte{familyDocument}, container)
	end = binary.BigEndian.AppendUint32([]byte{familyDocument}, container+1)
	return start, end
}

// ItemKey is the key that maps an item's (EPK, id) to its document; epk and id are raw bytes.
func ItemKey(dst []byte, container uint32, epk, id string) []byte {
	dst = append(dst, familyItem)
	dst = binary.BigEndian.AppendUint32(dst, container)
	dst = appendEscaped(dst, epk)
	return appendEscaped(dst, id)
}

// ItemSpan bounds the item keys whose EPK lies in [minEPK, maxEPK) in a container.
func ItemSpan(container uint32, minEPK, maxEPK string) (start, end []byte) {
	start = appendEscaped(binary.BigEndian.AppendUint32([]byte{familyItem}, container), minEPK)
	end = appendEscaped(binary.BigEndian.AppendUint32([]byte{familyItem}, container), maxEPK)
	return start, end
}

// ContainerItemSpan bounds all item keys of a container.
func ContainerItemSpan(container uint32) (start, end []byte) {
	start = binary.BigEndian.AppendUint32([]byte{familyItem}, container)
	end = binary.BigEndian.AppendUint32([]byte{familyItem}, container+1)
	return start, end
}

// OrderKey is the key of a document in its physical partition's creation order.
func OrderKey(dst []byte, container, partition uint32, seq uint64) []byte {
	dst = append(dst, familyOrder)
	dst = binary.BigEndian.AppendUint32(dst, container)
	dst = binary.BigEndian.AppendUint32(dst, partition)
	return binary.BigEndian.AppendUint64(dst, seq)
}

// OrderPartitionSpan bounds a partition's creation order.
func OrderPartitionSpan(container, partition uint32) (start, end []byte) {
	start = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte{familyOrder}, container), partition)
	return start, binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte{familyOrder}, container), partition+1)
}

// OrderContainerSpan bounds the creation orders of every partition of a container.
func OrderContainerSpan(container uint32) (start, end []byte) {
	return binary.BigEndian.AppendUint32([]byte{familyOrder}, container),
		binary.BigEndian.AppendUint32([]byte{familyOrder}, container+1)
}

// LogKey is the key of the i-th change of the command numbered lsn in a partition's log.
func LogKey(dst []byte, container, partition uint32, lsn uint64, i uint16) []byte {
	dst = append(dst, familyLog)
	dst = binary.BigEndian.AppendUint32(dst, container)
	dst = binary.BigEndian.AppendUint32(dst, partition)
	dst = binary.BigEndian.AppendUint64(dst, lsn)
	return binary.BigEndian.AppendUint16(dst, i)
}

// logKeyLen is the length of a LogKey; an image key is one byte longer.
const logKeyLen = 19

// LogImageKey is the key of the image of the version that change (lsn, i) wrote.
func LogImageKey(dst []byte, container, partition uint32, lsn uint64, i uint16) []byte {
	return append(LogKey(dst, container, partition, lsn, i), 1)
}

// LogSpan bounds a partition's log entries (and their images) after LSN after.
func LogSpan(container, partition uint32, after uint64) (start, end []byte) {
	end = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte{familyLog}, container), partition+1)
	if after == math.MaxUint64 { // nothing comes after it (after+1 would wrap to the start)
		return end, end
	}
	return LogKey(nil, container, partition, after+1, 0), end
}

// LogContainerSpan bounds the logs of every partition, live or split, of a container.
func LogContainerSpan(container uint32) (start, end []byte) {
	return binary.BigEndian.AppendUint32([]byte{familyLog}, container),
		binary.BigEndian.AppendUint32([]byte{familyLog}, container+1)
}

// ParseLogKey reads a log or log image key.
func ParseLogKey(key []byte) (partition uint32, lsn uint64, i uint16, image bool, err error) {
	if len(key) != logKeyLen && (len(key) != logKeyLen+1 || key[logKeyLen] != 1) || key[0] != familyLog {
		return 0, 0, 0, false, errors.New("storage: not a log key")
	}
	return binary.BigEndian.Uint32(key[5:]), binary.BigEndian.Uint64(key[9:]),
		binary.BigEndian.Uint16(key[17:]), len(key) > logKeyLen, nil
}

// RetainedKey holds how far a partition's log has been purged.
func RetainedKey(container, partition uint32) []byte {
	k := binary.BigEndian.AppendUint32([]byte{familyRetained}, container)
	return binary.BigEndian.AppendUint32(k, partition)
}

// RetainedSpan bounds the retained records of every log of a container.
func RetainedSpan(container uint32) (start, end []byte) {
	return binary.BigEndian.AppendUint32([]byte{familyRetained}, container),
		binary.BigEndian.AppendUint32([]byte{familyRetained}, container+1)
}

// SeqOf returns the creation sequence that ends a document, order or index key.
func SeqOf(key []byte) (uint64, error) {
	if len(key) < 13 || key[0] != familyDocument && key[0] != familyOrder && key[0] != familyIndex {
		return 0, errors.New("storage: key holds no sequence")
	}
	return binary.BigEndian.Uint64(key[len(key)-8:]), nil
}

// EncodeSeq is an item key's value.
func EncodeSeq(dst []byte, seq uint64) []byte { return binary.BigEndian.AppendUint64(dst, seq) }

// DecodeSeq reads an item key's value.
func DecodeSeq(v []byte) (uint64, error) {
	if len(v) != 8 {
		return 0, errors.New("storage: bad sequence value")
	}
	return binary.BigEndian.Uint64(v), nil
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

// UniqueKey is the key of a unique key entry of the logical partition epk.
func UniqueKey(dst []byte, container uint32, epk string, entry []byte) []byte {
	dst = append(dst, familyUnique)
	dst = binary.BigEndian.AppendUint32(dst, container)
	dst = appendEscaped(dst, epk)
	return append(dst, entry...)
}

// UniqueContainerSpan bounds every unique key entry of a container.
func UniqueContainerSpan(container uint32) (start, end []byte) {
	return binary.BigEndian.AppendUint32([]byte{familyUnique}, container),
		binary.BigEndian.AppendUint32([]byte{familyUnique}, container+1)
}

// ParseUniqueKey returns the EPK and the entry of a unique key entry's key.
func ParseUniqueKey(key []byte) (epk string, entry []byte, err error) {
	if len(key) < 5 || key[0] != familyUnique {
		return "", nil, errors.New("storage: not a unique key entry")
	}
	e, rest, err := readEscaped(key[5:])
	if err != nil || len(rest) == 0 {
		return "", nil, errors.New("storage: malformed unique key entry")
	}
	return e, rest, nil
}

// appendEscaped writes s self-delimited and order-preserving (value.AppendEscaped: a string
// that is a proper prefix of another sorts first).
func appendEscaped(dst []byte, s string) []byte { return value.AppendEscaped(dst, s) }

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

// IndexKey is the key of an index entry of a partition: the term, then the document's seq.
func IndexKey(dst []byte, container, partition uint32, term []byte, seq uint64) []byte {
	dst = append(dst, familyIndex)
	dst = binary.BigEndian.AppendUint32(dst, container)
	dst = binary.BigEndian.AppendUint32(dst, partition)
	dst = append(dst, term...)
	return binary.BigEndian.AppendUint64(dst, seq)
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

// ParseIndexEntry returns the encoded value and the document's seq of an index entry; pathLen
// is the length of esc(path).
func ParseIndexEntry(key []byte, pathLen int) (value []byte, seq uint64, err error) {
	if len(key) < 9+pathLen+1+8 || key[0] != familyIndex {
		return nil, 0, errors.New("storage: not an index key")
	}
	value = key[9+pathLen : len(key)-8]
	return value, binary.BigEndian.Uint64(key[len(key)-8:]), nil
}

// IndexKeyForPartition rewrites an index or order key of one partition as the same entry of
// another partition of the container, for splits: the rest of the key is unchanged.
func IndexKeyForPartition(key []byte, partition uint32) []byte {
	out := append([]byte(nil), key...)
	binary.BigEndian.PutUint32(out[5:9], partition)
	return out
}

// ReindexKey is the key of a partition's index rebuild record. The family is new in format 3
// and absent from databases that never changed a policy, so older data reads the same.
func ReindexKey(container, partition uint32) []byte {
	k := binary.BigEndian.AppendUint32([]byte{familyReindex}, container)
	return binary.BigEndian.AppendUint32(k, partition)
}

// ReindexSpan bounds the rebuild records of every partition of a container.
func ReindexSpan(container uint32) (start, end []byte) {
	return binary.BigEndian.AppendUint32([]byte{familyReindex}, container),
		binary.BigEndian.AppendUint32([]byte{familyReindex}, container+1)
}

// FormatKey holds the layout's version.
func FormatKey() []byte { return []byte{familyFormat} }
