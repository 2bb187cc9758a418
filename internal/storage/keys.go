package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"

	"github.com/partita-db/partita/internal/value"
)

// Key layout (format 4, see FormatVersion). Every key starts with one family byte, so families
// never interleave. Numbers are fixed-width big-endian so they sort numerically; variable-length
// byte strings (EPKs, ids) are escaped and terminated (see appendEscaped) so that no key is a
// prefix of another and byte order of the encoded key equals the order of the tuple it encodes.
//
//	catalog    'c' kind(1) num(4)                      -> JSON record of a database, container or
//	                                                      user (with its permissions)
//	catalogSeq 'c' 'N'                                 -> JSON of the catalog's id counters
//	document   'e' container(4) esc(EPK) seq(8)        -> item value (see the partition package)
//	log        'g' container(4) partition(4) lsn(8) i(2) -> the i-th change of command lsn, with
//	                                                      the item's EPK and id
//	item       'k' container(4) esc(EPK) esc(id)       -> seq(8) of the item's document
//	image      'l' container(4) esc(EPK) lsn(8) i(2)   -> JSON of the version change (lsn, i) of
//	                                                      EPK wrote, once a later change replaced
//	                                                      or deleted it
//	partition  'm' container(4) partition(4)           -> a physical partition's state record
//	order      'o' container(4) partition(4) seq(8)    -> raw EPK of the document
//	logical    's' container(4) esc(EPK)               -> items and bytes of one logical partition
//	unique     'u' container(4) esc(EPK) entry         -> id of the item that holds the entry
//	store      'N'                                     -> this store's identity (replication)
//	raft       'R' group(8) kind(1) [index(8)]         -> a Raft group's state on this node, not
//	                                                      replicated: its log entries, hard state,
//	                                                      truncated state, replica record and
//	                                                      tombstone (see RaftKey)
//	format     'v'                                     -> the layout's version, FormatVersion
//	upgrade    'w'                                     -> JSON of an upgrade's progress, while one
//	                                                      runs (the containers it has finished)
//	index      'x' container(4) partition(4) esc(path) value seq(8) -> empty
//	vector     'y' container(4) partition(4) esc(path) kind(1) [id(8)] -> a record of the
//	                                                      vector index over path (see VectorKey)
//	indexing   'z' container(4) partition(4)           -> JSON of the indexing policy a partition's
//	                                                      index follows, with a rebuild in flight
//
// A physical partition's state is a set of key spans: the families keyed by EPK (documents,
// items, images, logical partitions, unique key entries) between its range's bounds, and the
// families keyed by its id (log, state, order, index, indexing). So a replica's state can
// be cut out, shipped and replaced span by span (a snapshot), and a split, which divides an
// EPK range, moves none of the EPK-keyed data: only the families keyed by partition id are
// built anew for the children. PartitionSpans lists them.
//
// seq is the item's creation sequence, handed out by the partition that created the item:
// its id in the top 24 bits, a count of its own in the low 40 (see the partition package). A
// replace keeps it. Within a partition's creation order it only grows (children of a split
// have larger ids than their ancestors), so the order family lists a partition's items in
// the order Cosmos returns them without ORDER BY; and since the EPK comes first in a
// document's key, the documents of one logical partition are one span in creation order.
//
// The item family maps (EPK, id) to seq for point reads; a logical partition is one contiguous
// span of it. The order family lists each physical partition's items in creation order, with
// their EPK, so that a split can divide it without reading documents.
//
// The log (the change feed) is per physical partition and in LSN order, written in the batch
// of the change it records; its entries are small (they name the item, they do not copy it).
// The children of a split continue their parent's LSNs, and the split gives each child the
// parent's entries of its range, so a child reads one log. A version's JSON is written as an
// image, keyed by EPK and the position of the entry that wrote it, when a later change
// replaces or deletes it (until then the document itself holds it): images are documents,
// and a split, which divides the EPK space, moves none.
//
// A unique key entry (see the uniquekey package: the key's number, then its values, each
// self-delimiting) records that an item of the logical partition EPK holds those values; the
// partition's writer refuses a second holder. Like items, entries are keyed by container and
// EPK, not by physical partition: a logical partition never splits, so a split moves none.
//
// The range index of a physical partition lives under its own prefix: one entry per indexed
// value of each item, ordered by path, then value, then creation. The value is encoded by
// value.AppendOrdered: a type byte, then nothing (null, booleans), 8 bytes (numbers) or
// escaped bytes (strings); arrays and objects are recorded by a marker byte alone
// (value.OrderedMarker), so the index knows every value a path holds, in type order.
//
// A vector index (package vectorindex) of a physical partition lives under its own prefix too,
// one graph per indexed path: a node per item (keyed by the item's seq), the graph's meta
// record and its quantizer, and a marker that says the graph covers every item of the
// partition (written when it starts empty, with the partition or the index). A partition without
// the marker answers vector searches exactly. The family is new in layout 4's lifetime: a data
// directory written before it has no vector keys, which reads as no graph at all.
//
// Layout 3 (keys_v3.go) keyed documents by (container, seq) with one sequence per container,
// and the log by partition; the upgrade to layout 4 rewrites both in place.
const (
	familyCatalog   = 'c'
	familyDocument  = 'e'
	familyLog       = 'g'
	familyItem      = 'k'
	familyImage     = 'l'
	familyPartition = 'm'
	familyOrder     = 'o'
	familyLogical   = 's'
	familyUnique    = 'u'
	familyFormat    = 'v'
	familyUpgrade   = 'w'
	familyIndex     = 'x'
	familyIndexing  = 'z'
	familyVector    = 'y'
	familyStore     = 'N'
	familyRaft      = 'R'
)

// StoreKey holds this store's identity: a random number chosen when it was created, which
// tells a store that was wiped and started again from the one that was (see replication).
func StoreKey() []byte { return []byte{familyStore} }

// Kinds of a Raft group's keys.
const (
	RaftEntry     = 'e' // index(8) -> a log entry
	RaftHardState = 'h' // -> the hard state: term, vote, commit
	RaftTruncated = 't' // -> the index and term of the last entry removed from the log
	RaftReplica   = 'r' // -> the local replica's record: its id and what opens its state machine
	RaftTombstone = 'x' // -> a removed replica's tombstone: the replica ids it may not come back as
)

// RaftKey is the key of kind of group's Raft state; a log entry's key ends with its index.
func RaftKey(dst []byte, group uint64, kind byte, index uint64) []byte {
	dst = append(dst, familyRaft)
	dst = binary.BigEndian.AppendUint64(dst, group)
	dst = append(dst, kind)
	if kind == RaftEntry {
		dst = binary.BigEndian.AppendUint64(dst, index)
	}
	return dst
}

// RaftLogSpan bounds group's log entries from index lo (inclusive) to hi (exclusive).
func RaftLogSpan(group, lo, hi uint64) Span {
	return Span{RaftKey(nil, group, RaftEntry, lo), RaftKey(nil, group, RaftEntry, hi)}
}

// RaftGroupSpan bounds all of group's Raft state on this node.
func RaftGroupSpan(group uint64) Span {
	start := binary.BigEndian.AppendUint64([]byte{familyRaft}, group)
	if group == math.MaxUint64 {
		return Span{start, []byte{familyRaft + 1}}
	}
	return Span{start, binary.BigEndian.AppendUint64([]byte{familyRaft}, group+1)}
}

// RaftGroupsSpan bounds the Raft state of every group on this node.
func RaftGroupsSpan() Span { return Span{[]byte{familyRaft}, []byte{familyRaft + 1}} }

// ParseRaftKey reads a Raft state key.
func ParseRaftKey(key []byte) (group uint64, kind byte, index uint64, err error) {
	if len(key) < 10 || key[0] != familyRaft || key[9] == RaftEntry && len(key) != 18 {
		return 0, 0, 0, errors.New("storage: not a raft key")
	}
	group, kind = binary.BigEndian.Uint64(key[1:]), key[9]
	if kind == RaftEntry {
		index = binary.BigEndian.Uint64(key[10:])
	}
	return group, kind, index, nil
}

// UpgradeKey holds the progress of an upgrade of the layout in flight (see the engine); absent
// when none is.
func UpgradeKey() []byte { return []byte{familyUpgrade} }

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

// DocKey is the key of the document of the logical partition epk with creation sequence seq.
func DocKey(dst []byte, container uint32, epk string, seq uint64) []byte {
	dst = append(dst, familyDocument)
	dst = binary.BigEndian.AppendUint32(dst, container)
	dst = appendEscaped(dst, epk)
	return binary.BigEndian.AppendUint64(dst, seq)
}

// DocSpan bounds the documents whose EPK lies in [minEPK, maxEPK).
func DocSpan(container uint32, minEPK, maxEPK string) (start, end []byte) {
	return containerEscaped(familyDocument, container, minEPK), containerEscaped(familyDocument, container, maxEPK)
}

// DocLogicalSpan bounds the documents of the logical partition epk with a sequence of at least
// from, in creation order.
func DocLogicalSpan(container uint32, epk string, from uint64) (start, end []byte) {
	prefix := containerEscaped(familyDocument, container, epk)
	return binary.BigEndian.AppendUint64(prefix, from), prefixEnd(prefix)
}

// ParseDocKey returns the EPK and the sequence of a document key; the EPK is a copy.
func ParseDocKey(key []byte) (epk string, seq uint64, err error) {
	if len(key) < 5+2+8 || key[0] != familyDocument {
		return "", 0, errors.New("storage: not a document key")
	}
	e, rest, err := readEscaped(key[5:])
	if err != nil || len(rest) != 8 {
		return "", 0, errors.New("storage: malformed document key")
	}
	return e, binary.BigEndian.Uint64(rest), nil
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
	return containerEscaped(familyItem, container, minEPK), containerEscaped(familyItem, container, maxEPK)
}

// ParseItemKey returns the EPK and id of an item key.
func ParseItemKey(key []byte) (epk, id string, err error) {
	if len(key) < 5 || key[0] != familyItem {
		return "", "", errors.New("storage: not an item key")
	}
	e, rest, err := readEscaped(key[5:])
	if err == nil {
		id, rest, err = readEscaped(rest)
	}
	if err != nil || len(rest) != 0 {
		return "", "", errors.New("storage: malformed item key")
	}
	return e, id, nil
}

// AppendItemEPK appends to dst the raw EPK of an item key, without allocating.
func AppendItemEPK(dst, key []byte) ([]byte, error) {
	if len(key) < 5 || key[0] != familyItem {
		return nil, errors.New("storage: not an item key")
	}
	dst, _, err := appendUnescaped(dst, key[5:])
	return dst, err
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
	return partitionSpan(familyOrder, container, partition)
}

// LogKey is the key of the i-th change of command lsn in a partition's log.
func LogKey(dst []byte, container, partition uint32, lsn uint64, i uint16) []byte {
	dst = append(dst, familyLog)
	dst = binary.BigEndian.AppendUint32(dst, container)
	dst = binary.BigEndian.AppendUint32(dst, partition)
	dst = binary.BigEndian.AppendUint64(dst, lsn)
	return binary.BigEndian.AppendUint16(dst, i)
}

// logKeyLen is the length of a LogKey.
const logKeyLen = 19

// LogSpan bounds a partition's log after LSN after.
func LogSpan(container, partition uint32, after uint64) (start, end []byte) {
	_, end = partitionSpan(familyLog, container, partition)
	if after == math.MaxUint64 { // nothing comes after it (after+1 would wrap to the start)
		return end, end
	}
	return LogKey(nil, container, partition, after+1, 0), end
}

// ParseLogKey reads a log key.
func ParseLogKey(key []byte) (partition uint32, lsn uint64, i uint16, err error) {
	if len(key) != logKeyLen || key[0] != familyLog {
		return 0, 0, 0, errors.New("storage: not a log key")
	}
	return binary.BigEndian.Uint32(key[5:]), binary.BigEndian.Uint64(key[9:]), binary.BigEndian.Uint16(key[17:]), nil
}

// ImageKey is the key of the image of the version that change (lsn, i) of the logical
// partition epk wrote.
func ImageKey(dst []byte, container uint32, epk string, lsn uint64, i uint16) []byte {
	dst = append(dst, familyImage)
	dst = binary.BigEndian.AppendUint32(dst, container)
	dst = appendEscaped(dst, epk)
	dst = binary.BigEndian.AppendUint64(dst, lsn)
	return binary.BigEndian.AppendUint16(dst, i)
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

// containerEscaped is family, container, esc(s): the start of the keys of an EPK-keyed family
// at or after EPK s.
func containerEscaped(family byte, container uint32, s string) []byte {
	return appendEscaped(binary.BigEndian.AppendUint32([]byte{family}, container), s)
}

// partitionSpan bounds the keys of a family keyed by (container, partition).
func partitionSpan(family byte, container, partition uint32) (start, end []byte) {
	start = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte{family}, container), partition)
	if partition == math.MaxUint32 {
		return start, binary.BigEndian.AppendUint32([]byte{family}, container+1)
	}
	return start, binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte{family}, container), partition+1)
}

// containerSpan bounds the keys of a family for one container.
func containerSpan(family byte, container uint32) (start, end []byte) {
	return binary.BigEndian.AppendUint32([]byte{family}, container),
		binary.BigEndian.AppendUint32([]byte{family}, container+1)
}

// prefixEnd is the first key after every key that starts with prefix.
func prefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil // all 0xFF: no key after (never for our keys, which start with a family letter)
}

// Span is a key span [Start, End).
type Span struct{ Start, End []byte }

// PartitionSpans are the key spans that hold the whole state of the physical partition id of
// a container that owns the EPKs [minEPK, maxEPK): a replica of it is exactly these spans.
func PartitionSpans(container, partition uint32, minEPK, maxEPK string) []Span {
	var out []Span
	for _, f := range []byte{familyDocument, familyItem, familyImage, familyLogical, familyUnique} {
		out = append(out, Span{containerEscaped(f, container, minEPK), containerEscaped(f, container, maxEPK)})
	}
	for _, f := range []byte{familyLog, familyPartition, familyOrder, familyIndex, familyIndexing, familyVector} {
		s, e := partitionSpan(f, container, partition)
		out = append(out, Span{s, e})
	}
	slices.SortFunc(out, func(a, b Span) int { return bytes.Compare(a.Start, b.Start) })
	return out
}

// PartitionOwnSpans are the spans of the families keyed by partition id alone (log, state,
// order, index, indexing, vector): what a split builds anew for each child and drops for the
// parent.
func PartitionOwnSpans(container, partition uint32) []Span {
	var out []Span
	for _, f := range []byte{familyLog, familyPartition, familyOrder, familyIndex, familyIndexing, familyVector} {
		s, e := partitionSpan(f, container, partition)
		out = append(out, Span{s, e})
	}
	return out
}

// ContainerSpans are the spans of every key of a container, live partitions and leftovers alike.
func ContainerSpans(container uint32) []Span {
	var out []Span
	for _, f := range []byte{familyDocument, familyLog, familyItem, familyImage, familyPartition, familyOrder,
		familyLogical, familyUnique, familyIndex, familyIndexing, familyVector} {
		s, e := containerSpan(f, container)
		out = append(out, Span{s, e})
	}
	return out
}

// PartitionKey is the key of a physical partition's state record.
func PartitionKey(container, partition uint32) []byte {
	k := binary.BigEndian.AppendUint32([]byte{familyPartition}, container)
	return binary.BigEndian.AppendUint32(k, partition)
}

// PartitionSpan bounds the state records of every partition of a container.
func PartitionSpan(container uint32) (start, end []byte) {
	return containerSpan(familyPartition, container)
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
	out, rest, err := appendUnescaped(make([]byte, 0, len(b)), b)
	return string(out), rest, err
}

// appendUnescaped appends to dst the string escaped at the start of b, and returns what follows it.
func appendUnescaped(dst, b []byte) ([]byte, []byte, error) {
	for i := 0; i < len(b); i++ {
		if b[i] != 0 {
			dst = append(dst, b[i])
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case 1:
			return dst, b[i+2:], nil
		case 0xFF:
			dst = append(dst, 0)
			i++
		default:
			return nil, nil, errors.New("storage: bad escape in key")
		}
	}
	return nil, nil, errors.New("storage: unterminated key component")
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
	return partitionSpan(familyIndex, container, partition)
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

// ForPartition rewrites a key of a family keyed by (container, partition) (order, index, log)
// as the same key of another partition of the container, for splits: the rest of the
// key is unchanged.
func ForPartition(key []byte, partition uint32) []byte {
	out := append([]byte(nil), key...)
	binary.BigEndian.PutUint32(out[5:9], partition)
	return out
}

// IndexingKey is the key of the record of the indexing policy a partition's index follows
// (with the earlier policies a rebuild in flight has not yet removed).
func IndexingKey(container, partition uint32) []byte {
	k := binary.BigEndian.AppendUint32([]byte{familyIndexing}, container)
	return binary.BigEndian.AppendUint32(k, partition)
}

// The kinds of record of a vector index (the vector family).
const (
	VectorBuild     byte = 'b' // -> a build in progress (partition's vector.go)
	VectorComplete  byte = 'c' // -> empty: the graph covers every item of the partition
	VectorMeta      byte = 'm' // -> vectorindex.Meta
	VectorNode      byte = 'n' // id(8) -> vectorindex node record
	VectorQuantizer byte = 'q' // -> the trained quantizer
)

// VectorKey is the key of a record of the vector index over path (in term-path form) of a
// physical partition: kind is one of the Vector kinds; id is appended for VectorNode.
func VectorKey(dst []byte, container, partition uint32, path string, kind byte, id uint64) []byte {
	dst = append(dst, familyVector)
	dst = binary.BigEndian.AppendUint32(dst, container)
	dst = binary.BigEndian.AppendUint32(dst, partition)
	dst = appendEscaped(dst, path)
	dst = append(dst, kind)
	if kind == VectorNode {
		dst = binary.BigEndian.AppendUint64(dst, id)
	}
	return dst
}

// VectorSpan bounds every record of one vector index of a partition.
func VectorSpan(container, partition uint32, path string) (start, end []byte) {
	start = VectorKey(nil, container, partition, path, 0, 0)
	start = start[:len(start)-1]
	end = append(slices.Clone(start), 0xff)
	return start, end
}

// VectorNodeSpan bounds the node records of one vector index of a partition.
func VectorNodeSpan(container, partition uint32, path string) (start, end []byte) {
	start = VectorKey(nil, container, partition, path, VectorNode, 0)
	start = start[:len(start)-8]
	end = append(slices.Clone(start[:len(start)-1]), VectorNode+1)
	return start, end
}

// ParseVectorNodeKey returns the id of a node record's key.
func ParseVectorNodeKey(k []byte) (uint64, bool) {
	if len(k) < 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[len(k)-8:]), true
}

// FormatKey holds the layout's version.
func FormatKey() []byte { return []byte{familyFormat} }
