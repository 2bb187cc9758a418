package partition

import (
	"bytes"
	"cmp"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/rid"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/searchpolicy"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/uniquekey"
)

// Config describes a partition to Open.
type Config struct {
	DB        *storage.DB
	Container uint32    // the container's number in storage keys
	ID        uint32    // the partition key range id, unique within the container
	Range     epk.Range // the EPKs this partition owns
	// ContainerRID is the container's 8-byte resource id; items' _rid extend it.
	ContainerRID rid.Container
	// SelfPrefix is "dbs/<db rid>/colls/<container rid>/docs/", the start of items' _self.
	SelfPrefix string
	// MaxLogicalBytes caps the bytes of one logical partition.
	MaxLogicalBytes int64
	// Index is the container's indexing policy; nil records every path. A new partition's
	// index follows it; one with a record of its own follows the policy the record names
	// until a policy change reaches it (ChangePolicy), and uses Index itself when the two are
	// Equal, so that callers may compare policies by pointer.
	Index *indexing.Policy
	// KeepImages keeps the versions that changes replace or delete, for the all-versions
	// change feed.
	KeepImages bool
	// DefaultTTL is the container's default time to live (see SetDefaultTTL); TTLOff when off.
	DefaultTTL int64
	// KeyDeletes are the logical partitions being deleted (see SetKeyDeletes); nil: none.
	KeyDeletes map[epk.EPK]uint64
	// Now, when set, is the clock in Unix seconds that writes stamp and expiry is judged by
	// (tests fake it); nil is the system clock.
	Now func() int64
	// Unique is the container's unique key policy; nil when it has none, which costs writes
	// nothing.
	Unique *uniquekey.Policy
	// Vectors is the container's vector embedding policy; nil when it has none. The paths it
	// declares that the indexing policy gives an approximate index get a graph (vector.go).
	Vectors *searchpolicy.VectorPolicy
	// FullText is the container's full-text policy; nil when it has none. It gives the
	// language of the paths whose full-text indexes the range index holds (IndexTerms).
	FullText *searchpolicy.FullTextPolicy
	// OlderFullText is set for a container created by a build that wrote no full-text terms:
	// a partition whose indexing record does not say its entries hold them rebuilds them
	// (loadIndexState) before queries trust them.
	OlderFullText bool
	// OlderSystemPaths is set for a container created by a build whose entries left out _ts,
	// and id when the rules did: a partition whose indexing record does not say its entries
	// hold them rebuilds them (loadIndexState) before queries trust them.
	OlderSystemPaths bool
	// DistrustSystemPaths is set for a replica, in a cluster, of such a container: the index
	// is never trusted for the system paths the earlier build left out (IndexTrusted).
	DistrustSystemPaths bool
	// OnSplit, when set, adds to the batch of a split's commit what the partition's host keeps
	// of the two children (a replication group's first state), on every replica.
	OnSplit func(b *storage.Batch, children [2]Child) error
	// Replica, when set, makes the partition one replica of a replication group
	// (replicated.go); nil is a single node's partition, whose log is its own batches.
	Replica Replication
}

// Partition is one open physical partition.
type Partition struct {
	db         *storage.DB
	container  uint32
	id         uint32
	rng        epk.Range
	rid        rid.Container
	selfPrefix string
	maxLogical int64
	// ix is the indexing policy the index follows, and the rebuild in flight (reindex.go);
	// stored only when an entry that changes it is applied.
	ix atomic.Pointer[indexState]
	// mixedSystemPaths: a replica of a container created before the system paths were
	// indexed, whose group may have been led by a node of that build (Config.
	// DistrustSystemPaths, IndexTrusted).
	mixedSystemPaths bool
	keepImages       bool

	// log is where the writer's entries go to be made durable and applied: the single node's
	// batch (locallog.go) or a replication group.
	log entryLog
	// sm is the state as of the last entry applied, owned by the goroutine that applies.
	sm stateMachine
	// published is a copy of sm's state for everyone else, stored after each commit.
	published atomic.Pointer[state]
	// applied is the LSN of the last committed command; it only grows, and is stored only
	// once that command is visible to reads.
	applied atomic.Uint64

	// budget is the partition's share of its container's throughput.
	budget ru.Budget
	// hot counts request units per logical partition, to name the hottest.
	hot hotTracker
	// split is the split in flight on this replica: the backfill of the children's entries
	// and its capture (split.go).
	split splitter
	// onSplit adds to a split's commit what the partition's host keeps of the children
	// (Config.OnSplit); nil on a single node, whose engine adds the catalog itself.
	onSplit func(b *storage.Batch, children [2]Child) error

	// mayUnindexed is set once the partition may hold an item kept out of the index (see
	// unindexed.go); until then writes and scans need not look for one.
	mayUnindexed atomic.Bool

	// swept is set once retention has read this partition's whole log since it was opened
	// (PurgeLog): later passes read only the changes after the purge point.
	swept atomic.Bool

	// failed is set once a batch failed to sync; every later write is refused with it.
	failed atomic.Pointer[fault.Error]

	// closeMu orders Close after every Execute that has started sending to queue.
	closeMu sync.RWMutex
	closed  bool
	queue   chan *request
	stopped chan struct{}
	// closing is closed when Close begins: a writer waiting for its group gives up.
	closing chan struct{}
	// discarded is set, before Close, when storage is about to stop holding the partition's
	// state (its replica was removed, or a snapshot replaces it): a read that looked at
	// storage and finds it set afterwards may have seen the state deleted, and refuses.
	discarded atomic.Bool

	// defaultTTL is the container's default time to live (TTLOff, TTLNoDefault or seconds);
	// it changes when the container is replaced, and reads and writes load it each time.
	defaultTTL atomic.Int64
	// deleting is the set of logical partitions being deleted (keydelete.go); nil when none.
	deleting atomic.Pointer[keyDeletes]
	// expiry is the expiry index (expiryindex.go), nil until the reaper first asks for it.
	expiry atomic.Pointer[expiryIndex]
	// counts are the counts of index entries at the paths ORDER BY reads (ordercount.go).
	counts orderCounts
	clock  func() int64 // nil: the system clock; see now
	// unique is the container's unique key policy, fixed at creation; nil for none.
	unique *uniquekey.Policy
	// vectors is the container's vector embedding policy, fixed at creation; nil for none.
	vectors *searchpolicy.VectorPolicy
	// fullText is the container's full-text policy, fixed at creation; nil for none.
	fullText *searchpolicy.FullTextPolicy
	// mirrors are the committed states of the vector indexes, by path, loaded when first
	// needed (vector.go); vecMu orders their loads and the commits that change them.
	vecMu   sync.Mutex
	mirrors map[string]*graphMirror
}

// Open opens a partition and starts its writer. Its state is read from storage; a partition
// that never committed a command starts at LSN 0, or at the state start gives (the children of
// a split are written by the split's commit, and need none).
func Open(cfg Config) (*Partition, error) {
	p := &Partition{
		db:               cfg.DB,
		container:        cfg.Container,
		id:               cfg.ID,
		rng:              cfg.Range,
		rid:              cfg.ContainerRID,
		selfPrefix:       cfg.SelfPrefix,
		maxLogical:       cfg.MaxLogicalBytes,
		keepImages:       cfg.KeepImages,
		unique:           cfg.Unique,
		vectors:          cfg.Vectors,
		fullText:         cfg.FullText,
		mixedSystemPaths: cfg.DistrustSystemPaths,
		queue:            make(chan *request, 1024),
		stopped:          make(chan struct{}),
		closing:          make(chan struct{}),
		clock:            cfg.Now,
		onSplit:          cfg.OnSplit,
	}
	if cfg.ID > MaxID {
		return nil, fault.New(fault.Internal, "partition id %d is above the largest, %d", cfg.ID, MaxID)
	}
	p.log = localLog{p}
	if cfg.Replica != nil {
		p.log = newReplicatedLog(p, cfg.Replica)
	}
	p.defaultTTL.Store(cfg.DefaultTTL)
	p.SetKeyDeletes(cfg.KeyDeletes)
	ix, err := loadIndexState(p.db, p.container, p.id, cfg.Index, cfg.OlderFullText, cfg.OlderSystemPaths)
	if err != nil {
		return nil, err
	}
	p.ix.Store(ix)
	var st state
	v, err := p.db.GetCopy(nil, storage.PartitionKey(p.container, p.id))
	switch {
	case err == nil:
		if st, err = decodeState(v); err != nil {
			return nil, err
		}
	case !storage.IsNotFound(err):
		return nil, err
	}
	if err := p.loadUnindexed(); err != nil {
		return nil, err
	}
	p.sm.st = st
	p.published.Store(&st)
	p.applied.Store(st.LSN)
	if st.Split != nil {
		p.resumeSplit(st.Split)
	}
	go p.run()
	return p, nil
}

// Budget is the partition's request-unit budget.
func (p *Partition) Budget() *ru.Budget { return &p.budget }

// ID is the partition key range id.
func (p *Partition) ID() uint32 { return p.id }

// Range is the EPK range the partition owns.
func (p *Partition) Range() epk.Range { return p.rng }

// Stats is a snapshot of a partition's counters.
type Stats struct {
	LSN   uint64
	Items int64
	Bytes int64
}

// Stats returns the partition's counters as of its last committed write.
func (p *Partition) Stats() Stats {
	s := p.published.Load()
	return Stats{LSN: s.LSN, Items: s.Items, Bytes: s.Bytes}
}

func (p *Partition) logical(key []byte, e string) (counts, error) {
	v, closer, err := p.db.Get(storage.LogicalKey(key, p.container, e))
	if storage.IsNotFound(err) {
		return counts{}, nil
	}
	if err != nil {
		return counts{}, err
	}
	defer closer.Close()
	c, _, err := decodeCounts(v)
	return c, err
}

// Close stops accepting writes, lets queued writes finish and stops the writer and a split's
// build in flight (a restart resumes it). Reads keep working until the storage is closed.
func (p *Partition) Close() {
	p.closeMu.Lock()
	if !p.closed {
		p.closed = true
		close(p.queue)
		close(p.closing)
	}
	p.closeMu.Unlock()
	<-p.stopped
	p.stopBuild()
}

// Discard is Close for a replica whose stored state is about to be deleted or replaced: every
// read that looks at storage from now on refuses with errClosed (see Closed), so that none
// answers from a state half deleted. What a read saw before is what the replica had applied.
func (p *Partition) Discard() {
	p.discarded.Store(true)
	p.Close()
}

// gone is errClosed when the partition was discarded: a read calls it after it looked at
// storage, which then may no longer have held the partition's state.
func (p *Partition) gone() error {
	if p.discarded.Load() {
		return errClosed
	}
	return nil
}

// snapshot is a view of storage for a read of the partition, refused (errClosed) when the
// partition may no longer be there (gone).
func (p *Partition) snapshot() (*storage.Snapshot, error) {
	snap := p.db.NewSnapshot()
	if err := p.gone(); err != nil {
		snap.Close()
		return nil, err
	}
	return snap, nil
}

// Doc is a stored item version.
type Doc struct {
	JSON []byte
	LSN  uint64
	// Seq is the item's creation sequence: the items of a physical partition sort by it in
	// the order Cosmos returns them without ORDER BY. Read leaves it zero.
	Seq uint64
	// epk and id say which item it is, in scans; they point into storage's buffers, like
	// JSON, and the methods EPK and ID copy them only for callers that ask.
	epk, id []byte
}

// EPK is the item's effective partition key (scans only).
func (d Doc) EPK() epk.EPK { return epk.EPK(d.epk) }

// ID is the item's id (scans only).
func (d Doc) ID() string { return string(d.id) }

// ETag is the etag of the version.
func (d Doc) ETag() string { return ETag(d.LSN) }

// Read returns the item (e, id), or NotFound. Its JSON is appended to dst.
func (p *Partition) Read(e epk.EPK, id string, dst []byte) (Doc, error) {
	return p.readAt(Consistency{}, e, id, dst)
}

func (p *Partition) readAt(cons Consistency, e epk.EPK, id string, dst []byte) (Doc, error) {
	if err := p.await(cons); err != nil {
		return Doc{}, err
	}
	var buf [256]byte
	key := storage.ItemKey(buf[:0], p.container, string(e), id)
	v, gen, cached := p.db.Rows.Lookup(key)
	if !cached {
		var closer io.Closer
		var err error
		v, closer, err = p.readItem(key, e)
		if gerr := p.gone(); gerr != nil {
			err = gerr
		}
		if err != nil {
			if closer != nil {
				closer.Close()
			}
			return Doc{}, err
		}
		defer closer.Close()
		p.db.Rows.Fill(key, v, gen)
	}
	d, err := decodeValue(v)
	if err != nil {
		return Doc{}, fault.New(fault.Internal, "%w", err)
	}
	if p.liveness().expiredIn(string(e), d) {
		return Doc{}, notFound()
	}
	// Pebble's buffer is only valid until closer.Close.
	return Doc{JSON: append(dst, d.json...), LSN: d.lsn()}, nil
}

// readItem reads the document the item key key (of EPK e) names, without the row cache. The two
// reads are not one snapshot: when a command deleted the item and created it again (under a
// new creation sequence) between them, the first names a document the second no longer finds,
// and the item key is read again.
func (p *Partition) readItem(key []byte, e epk.EPK) ([]byte, io.Closer, error) {
	var prev uint64
	for {
		sv, closer, err := p.db.Get(key)
		if storage.IsNotFound(err) {
			return nil, nil, notFound()
		}
		if err != nil {
			return nil, nil, fault.New(fault.Internal, "reading item: %w", err)
		}
		seq, err := storage.DecodeSeq(sv)
		closer.Close()
		if err != nil {
			return nil, nil, fault.New(fault.Internal, "reading item: %w", err)
		}
		v, closer, err := p.db.Get(storage.DocKey(key[len(key):], p.container, string(e), seq))
		switch {
		case err == nil:
			return v, closer, nil
		case !storage.IsNotFound(err):
			return nil, nil, fault.New(fault.Internal, "reading item: %w", err)
		case seq == prev:
			return nil, nil, fault.New(fault.Internal, "item key names document %d, which is not stored", seq)
		}
		prev = seq
	}
}

// Scan calls fn, in creation order, for every item of the partition whose EPK lies in one of
// ranges (sorted and disjoint) and whose creation sequence is at least from, until fn returns
// false. The slices passed to fn are only valid during the call.
//
// When the ranges cover the partition, the scan walks its creation order; when they are one
// logical partition, its documents, which are kept in creation order; otherwise it gathers the
// keys of the documents in the ranges and sorts them, which costs a read of every key in the
// ranges per call.
func (p *Partition) Scan(ranges []epk.Range, from uint64, fn func(d Doc) bool) error {
	return p.scanAt(Consistency{}, ranges, from, fn)
}

func (p *Partition) scanAt(cons Consistency, ranges []epk.Range, from uint64, fn func(d Doc) bool) error {
	clipped := p.clip(ranges)
	if len(clipped) == 0 {
		return nil
	}
	if err := p.await(cons); err != nil {
		return err
	}
	snap, err := p.snapshot()
	if err != nil {
		return err
	}
	defer snap.Close()
	docs, err := p.docReader(snap)
	if err != nil {
		return err
	}
	defer docs.close()
	switch e, logical := logicalRange(clipped); {
	case len(clipped) == 1 && clipped[0] == p.rng:
		return p.scanOrder(snap, docs, from, func(e []byte, seq uint64) (bool, error) { return docs.visit(e, seq, fn) })
	case logical:
		return docs.scanLogical(e, from, fn)
	}
	keys, err := p.docKeysIn(snap, clipped, from)
	if err != nil {
		return err
	}
	for _, k := range keys.sorted() {
		if more, err := docs.visitKey(k, fn); !more || err != nil {
			return err
		}
	}
	return nil
}

// scanOrder calls fn with the EPK and sequence of each item of the partition's creation order
// from sequence from, until fn returns false or fails. The EPK is valid during the call only.
func (p *Partition) scanOrder(snap *storage.Snapshot, docs *docReader, from uint64, fn func(e []byte, seq uint64) (bool, error)) error {
	_, end := storage.OrderPartitionSpan(p.container, p.id)
	it, err := snap.NewIter(storage.OrderKey(nil, p.container, p.id, from), end)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		seq, err := storage.SeqOf(it.Key())
		if err != nil {
			return err
		}
		if more, err := fn(it.Value(), seq); !more || err != nil {
			return err
		}
	}
	return it.Error()
}

// clip returns the parts of ranges that the partition owns.
func (p *Partition) clip(ranges []epk.Range) []epk.Range {
	var out []epk.Range
	for _, r := range ranges {
		lo, hi := max(r.Min, p.rng.Min), min(r.Max, p.rng.Max)
		if lo < hi {
			out = append(out, epk.Range{Min: lo, Max: hi})
		}
	}
	return out
}

// logicalRange returns the EPK of the logical partition that ranges are, if they are one.
func logicalRange(ranges []epk.Range) (epk.EPK, bool) {
	if len(ranges) != 1 || ranges[0].Max != ranges[0].Min+"\x00" {
		return "", false
	}
	return ranges[0].Min, true
}

// docKeys are document keys gathered in one buffer, with their sequences.
type docKeys struct {
	buf  []byte
	refs []docKeyRef
}

type docKeyRef struct {
	seq        uint64
	start, end int
}

// sorted returns the keys in creation order; they are valid until the next call.
func (k *docKeys) sorted() [][]byte {
	slices.SortFunc(k.refs, func(a, b docKeyRef) int { return cmp.Compare(a.seq, b.seq) })
	out := make([][]byte, len(k.refs))
	for i, r := range k.refs {
		out[i] = k.buf[r.start:r.end]
	}
	return out
}

// docKeysIn gathers the keys of the documents whose EPK is in ranges and whose sequence is at
// least from.
func (p *Partition) docKeysIn(snap *storage.Snapshot, ranges []epk.Range, from uint64) (*docKeys, error) {
	keys := &docKeys{}
	for _, r := range ranges {
		lo, hi := storage.DocSpan(p.container, string(r.Min), string(r.Max))
		it, err := snap.NewIter(lo, hi)
		if err != nil {
			return nil, err
		}
		for it.First(); it.Valid(); it.Next() {
			seq, err := storage.SeqOf(it.Key())
			if err != nil {
				it.Close()
				return nil, err
			}
			if seq >= from {
				start := len(keys.buf)
				keys.buf = append(keys.buf, it.Key()...)
				keys.refs = append(keys.refs, docKeyRef{seq: seq, start: start, end: len(keys.buf)})
			}
		}
		if err := it.Close(); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// docReader reads documents by key, cheaply when the keys ascend: its iterator steps forward
// instead of searching again.
type docReader struct {
	p   *Partition
	it  *storage.Iter
	key []byte
	epk []byte // the EPK of the document last read
	// live hides expired items: get reports them absent. Readers that want them clear it.
	live liveness
}

func (p *Partition) docReader(snap *storage.Snapshot) (*docReader, error) {
	lo, hi := storage.DocSpan(p.container, string(p.rng.Min), string(p.rng.Max))
	it, err := snap.NewIter(lo, hi)
	if err != nil {
		return nil, err
	}
	return &docReader{p: p, it: it, live: p.liveness()}, nil
}

// get returns the document (e, seq), decoded; its slices are valid until the next get.
func (r *docReader) get(e []byte, seq uint64) (stored, bool, error) {
	r.key = storage.DocKey(r.key[:0], r.p.container, string(e), seq)
	return r.getKey(r.key)
}

// committedDoc reads the committed version of the item of EPK e created at seq, with *key as
// scratch; ok is false when the item is gone. Steps decided on the writer read so.
func (p *Partition) committedDoc(key *[]byte, e string, seq uint64) (d stored, ok bool, err error) {
	*key = storage.DocKey((*key)[:0], p.container, e, seq)
	v, err := p.db.GetCopy(nil, *key)
	if storage.IsNotFound(err) {
		return stored{}, false, nil
	}
	if err == nil {
		d, err = decodeValue(v)
	}
	return d, err == nil, err
}

// getKey is get of a document key.
func (r *docReader) getKey(key []byte) (stored, bool, error) {
	if !r.it.SeekGE(key) || !bytes.Equal(r.it.Key(), key) {
		return stored{}, false, r.it.Error() // deleted since the entry that named it was read
	}
	d, err := decodeValue(r.it.Value())
	if err == nil && r.live.gone != nil {
		var e string
		if e, _, err = storage.ParseDocKey(key); err != nil {
			return stored{}, false, err
		}
		if r.live.expiredIn(e, d) {
			return stored{}, false, nil
		}
	} else if err == nil && r.live.expiredJSON(d.json) {
		return stored{}, false, nil
	}
	return d, err == nil, err
}

// visit hands the document (e, seq), when it is live, to fn; more is false once fn asks to
// stop or get failed.
func (r *docReader) visit(e []byte, seq uint64, fn func(d Doc) bool) (more bool, err error) {
	d, ok, err := r.get(e, seq)
	if err != nil {
		return false, err
	}
	r.epk = append(r.epk[:0], e...)
	return !ok || fn(d.doc(r.epk, seq)), nil
}

// visitKey is visit of a document key.
func (r *docReader) visitKey(key []byte, fn func(d Doc) bool) (more bool, err error) {
	e, seq, err := storage.ParseDocKey(key)
	if err != nil {
		return false, err
	}
	return r.visit([]byte(e), seq, fn)
}

// scanLogical hands fn the live documents of the logical partition e from sequence from, in
// creation order: they are one span.
func (r *docReader) scanLogical(e epk.EPK, from uint64, fn func(d Doc) bool) error {
	lo, _ := storage.DocLogicalSpan(r.p.container, string(e), from)
	r.epk = append(r.epk[:0], e...)
	prefix := lo[:len(lo)-8]
	for ok := r.it.SeekGE(lo); ok && bytes.HasPrefix(r.it.Key(), prefix) && len(r.it.Key()) == len(lo); ok = r.it.Next() {
		d, err := decodeValue(r.it.Value())
		if err != nil {
			return err
		}
		if r.live.expired(r.epk, d) {
			continue
		}
		seq, _ := storage.SeqOf(r.it.Key())
		if !fn(d.doc(r.epk, seq)) {
			return nil
		}
	}
	return r.it.Error()
}

func (r *docReader) close() { r.it.Close() }

// orderReader finds the EPK of an item of the partition by its creation sequence, from its
// order entry; cheaply when the sequences ascend, as docReader.
type orderReader struct {
	p   *Partition
	it  *storage.Iter
	key []byte
}

func (p *Partition) orderReader(snap *storage.Snapshot) (*orderReader, error) {
	lo, hi := storage.OrderPartitionSpan(p.container, p.id)
	it, err := snap.NewIter(lo, hi)
	if err != nil {
		return nil, err
	}
	return &orderReader{p: p, it: it}, nil
}

// epk returns the EPK of item seq, valid until the next call; ok is false when the partition
// holds no such item.
func (r *orderReader) epk(seq uint64) (e []byte, ok bool, err error) {
	r.key = storage.OrderKey(r.key[:0], r.p.container, r.p.id, seq)
	if !r.it.SeekGE(r.key) || !bytes.Equal(r.it.Key(), r.key) {
		return nil, false, r.it.Error()
	}
	return r.it.Value(), true, nil
}

func (r *orderReader) close() { r.it.Close() }

// errClosed refuses operations once the partition is closing; the client may retry, and a
// split's children (or a restarted server) will take them.
var errClosed = fault.New(fault.Unavailable, "The partition is shutting down; retry the request")

func notFound() error {
	return fault.New(fault.NotFound, "Entity with the specified id does not exist in the system.")
}
