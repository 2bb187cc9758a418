package partition

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
)

// A stored item value (the document, keyed by its EPK and creation sequence) is:
// uvarint(LSN) uvarint(change index) uvarint(len(id)) id JSON.
// The LSN is that of the command that wrote this version, and the etag is derived from it. The
// LSN and change index name the version's log entry (see changelog.go), which is kept under
// the item's EPK. The id is the item's own, so that a document read by sequence (a scan in
// creation order, an index entry) says which item it is; its EPK is in its key.
func encodeValue(dst []byte, at logPos, id string) []byte {
	dst = at.append(dst)
	dst = binary.AppendUvarint(dst, uint64(len(id)))
	return append(dst, id...)
}

// stored is a decoded item value; its slices point into the value.
type stored struct {
	log  logPos // where the log entry of this version is; log.lsn is the version's LSN
	id   []byte
	json []byte
}

func (s stored) lsn() uint64 { return s.log.lsn }

// doc is the version as a scan returns it; e is its EPK.
func (s stored) doc(e []byte, seq uint64) Doc {
	return Doc{JSON: s.json, LSN: s.log.lsn, Seq: seq, epk: e, id: s.id}
}

var errBadValue = errors.New("partition: malformed stored item value")

func decodeValue(v []byte) (stored, error) {
	f := fields{v: v, ok: true}
	var s stored
	s.log = f.logPos()
	s.id = f.bytes()
	if !f.ok {
		return stored{}, errBadValue
	}
	s.json = f.v
	return s, nil
}

// logPos names a log entry of an item: the LSN of its command and its index among the
// command's changes (the entry is in the log of the partition that owns the item, which keeps
// its ancestors' entries of its range too). The zero logPos names none.
type logPos struct {
	lsn uint64
	i   uint16
}

// append writes p as uvarint(LSN) uvarint(index).
func (p logPos) append(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, p.lsn)
	return binary.AppendUvarint(dst, uint64(p.i))
}

// fields reads the varints, log positions and length-prefixed strings that stored values and
// log entries are made of, from the front of v. Once a read fails ok is false, and every
// later read returns zero.
type fields struct {
	v  []byte
	ok bool
}

func (f *fields) uvarint() uint64 {
	x, n := binary.Uvarint(f.v)
	if n <= 0 {
		f.ok = false
		return 0
	}
	f.v = f.v[n:]
	return x
}

func (f *fields) varint() int64 {
	x, n := binary.Varint(f.v)
	if n <= 0 {
		f.ok = false
		return 0
	}
	f.v = f.v[n:]
	return x
}

func (f *fields) byte() byte {
	if len(f.v) == 0 {
		f.ok = false
		return 0
	}
	b := f.v[0]
	f.v = f.v[1:]
	return b
}

func (f *fields) bytes() []byte {
	l := f.uvarint()
	if !f.ok || l > uint64(len(f.v)) {
		f.ok = false
		return nil
	}
	b := f.v[:l:l]
	f.v = f.v[l:]
	return b
}

// uint32 reads a uvarint that must fit 32 bits.
func (f *fields) uint32() uint32 {
	x := f.uvarint()
	if x > math.MaxUint32 {
		f.ok = false
	}
	return uint32(x)
}

func (f *fields) logPos() logPos {
	lsn, i := f.uvarint(), f.uvarint()
	if i > math.MaxUint16 {
		f.ok = false
	}
	return logPos{lsn: lsn, i: uint16(i)}
}

// ETag is the etag of the item version written at lsn. LSNs only grow within a partition and
// the children of a split continue from their parent's, so successive versions of one item
// never share an etag.
func ETag(lsn uint64) string {
	// "00000000-0000-0000-HHHH-LLLLLLLLLLLL": the LSN's top 16 bits, then its low 48, in hex.
	// Formatted by hand: every read and write returns an etag.
	const digits = "0123456789abcdef"
	b := []byte("00000000-0000-0000-0000-000000000000")
	for i, shift := len(b)-1, 0; shift < 64; i, shift = i-1, shift+4 {
		if b[i] == '-' {
			i--
		}
		b[i] = digits[lsn>>shift&0xf]
	}
	return string(b)
}

// counts is a pair of item count and byte count, as stored for a logical partition and, in
// its state record, for a physical partition.
type counts struct {
	Items int64
	Bytes int64
}

func (c counts) add(items, bytes int64) counts {
	return counts{Items: c.Items + items, Bytes: c.Bytes + bytes}
}

func encodeCounts(dst []byte, c counts) []byte {
	dst = binary.AppendVarint(dst, c.Items)
	return binary.AppendVarint(dst, c.Bytes)
}

func decodeCounts(v []byte) (counts, []byte, error) {
	f := fields{v: v, ok: true}
	c := counts{Items: f.varint(), Bytes: f.varint()}
	if !f.ok {
		return counts{}, nil, errors.New("partition: bad counts")
	}
	return c, f.v, nil
}

// state is a partition's replicated state besides its items: what its state record holds.
// Every replica that applied the same entries holds the same state.
type state struct {
	// LSN numbers the partition's write commands; the children of a split continue it.
	LSN uint64
	counts
	// Seq is the last creation sequence the partition handed out, or inherited from its
	// parent (see nextSeq).
	Seq uint64
	// Purged is the LSN up to which retention has removed the log's changes that no longer
	// hold a current version (the all-versions feed cannot resume before it); 0 for none.
	Purged uint64
	// Epoch is the lease the writes are decided under (replicated.go): entries decided
	// under another are refused when applied. Always 0 on a single node, which has no leases.
	Epoch uint64
	// Split is the split in flight, started and neither committed nor aborted; nil for none.
	Split *splitPlan
	// Closed is set by the commit of a split: the partition's children own its items, and
	// every later entry is refused.
	Closed bool
	// Applied and AppliedTerm are the index and term of the last log entry applied, for a
	// replicated partition (0 on a single node), and Group is what the replication host keeps
	// of the group with the state (its members), opaque here.
	Applied, AppliedTerm uint64
	Group                []byte
}

// splitPlan is where a split divides the partition, and the ids of the children.
type splitPlan struct {
	At          epk.EPK
	Left, Right uint32
}

// stateVersion is the first byte of a state record in layout 4. A layout-3 record begins with
// the LSN's uvarint; the upgrade rewrites every record.
const stateVersion = 4

// Flags of a state record.
const (
	stateSplit  = 1 << 0
	stateClosed = 1 << 1
)

// encodeState writes a state record: version(1) flags(1) uvarint(LSN) varint(items)
// varint(bytes) uvarint(seq) uvarint(purged) uvarint(epoch) uvarint(applied)
// uvarint(appliedTerm) uvarint(len(group)) group, then, with stateSplit, uvarint(len(at)) at
// uvarint(left) uvarint(right).
func encodeState(dst []byte, s state) []byte {
	var flags byte
	if s.Split != nil {
		flags |= stateSplit
	}
	if s.Closed {
		flags |= stateClosed
	}
	dst = append(dst, stateVersion, flags)
	dst = binary.AppendUvarint(dst, s.LSN)
	dst = encodeCounts(dst, s.counts)
	dst = binary.AppendUvarint(dst, s.Seq)
	dst = binary.AppendUvarint(dst, s.Purged)
	dst = binary.AppendUvarint(dst, s.Epoch)
	dst = binary.AppendUvarint(dst, s.Applied)
	dst = binary.AppendUvarint(dst, s.AppliedTerm)
	dst = binary.AppendUvarint(dst, uint64(len(s.Group)))
	dst = append(dst, s.Group...)
	if s.Split != nil {
		dst = binary.AppendUvarint(dst, uint64(len(s.Split.At)))
		dst = append(dst, s.Split.At...)
		dst = binary.AppendUvarint(dst, uint64(s.Split.Left))
		dst = binary.AppendUvarint(dst, uint64(s.Split.Right))
	}
	return dst
}

var errBadState = errors.New("partition: bad state record")

func decodeState(v []byte) (state, error) {
	f := fields{v: v, ok: true}
	if f.byte() != stateVersion {
		return state{}, errBadState
	}
	flags := f.byte()
	s := state{LSN: f.uvarint()}
	s.counts = counts{Items: f.varint(), Bytes: f.varint()}
	s.Seq, s.Purged, s.Epoch = f.uvarint(), f.uvarint(), f.uvarint()
	s.Applied, s.AppliedTerm = f.uvarint(), f.uvarint()
	if g := f.bytes(); len(g) > 0 {
		s.Group = append([]byte(nil), g...)
	}
	if flags&stateSplit != 0 {
		s.Split = &splitPlan{At: epk.EPK(f.bytes()), Left: f.uint32(), Right: f.uint32()}
	}
	s.Closed = flags&stateClosed != 0
	if !f.ok || len(f.v) != 0 || flags&^(stateSplit|stateClosed) != 0 {
		return state{}, errBadState
	}
	return s, nil
}

// Creation sequences. A partition hands out the sequences of the items it creates from its
// own range: its id in the top bits and a count in the low seqBits. Sequences are therefore
// unique in the container without a counter shared by its partitions (which may live on
// different machines), and a child of a split, whose id is larger than any of its ancestors',
// hands out sequences above every one it inherited, so its creation order only grows.
// Sequences below 1<<seqBits were handed out by layout 3's container-wide counter.
const (
	seqBits = 40
	// MaxID is the largest partition id: the ids of a container's partitions fill the bits
	// of a sequence above seqBits.
	MaxID = 1<<(64-seqBits) - 1
)

// nextSeq is the creation sequence the next item partition id creates gets, after st.
func nextSeq(st state, id uint32) (uint64, error) {
	n := max(st.Seq+1, uint64(id)<<seqBits+1)
	if id > MaxID || n>>seqBits != uint64(id) {
		return 0, fault.New(fault.Internal, "partition %d has handed out every creation sequence of its range", id)
	}
	return n, nil
}
