package partition

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/rid"
	"github.com/partita-db/partita/internal/ru"
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
	// Seq hands out creation sequences; every partition of the container shares it.
	Seq *Sequence
	// Index says which paths the range index records; nil records every path.
	Index *indexing.Policy
	// Lineage is the partition's ancestors, oldest first: the partitions whose logs hold the
	// changes made before the splits that produced it.
	Lineage []uint32
	// KeepImages keeps the versions that changes replace or delete, for the all-versions
	// change feed.
	KeepImages bool
	// DefaultTTL is the container's default time to live (see SetDefaultTTL); TTLOff when off.
	DefaultTTL int64
	// Now, when set, is the clock in Unix seconds that writes stamp and expiry is judged by
	// (tests fake it); nil is the system clock.
	Now func() int64
	// Unique is the container's unique key policy; nil when it has none, which costs writes
	// nothing.
	Unique *uniquekey.Policy
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
	seq        *Sequence
	// ix is the indexing policy the index follows, and the rebuild in flight (reindex.go);
	// only the writer goroutine stores it, between groups of commands.
	ix atomic.Pointer[indexState]
	// logs are the partitions whose logs hold this partition's changes: its ancestors, oldest
	// first, then itself.
	logs       []uint32
	keepImages bool

	// published is the state as of the last committed group; the writer goroutine owns the
	// authoritative copy and stores here after each commit.
	published atomic.Pointer[state]
	// applied is the LSN of the last committed command; it only grows, and is stored only
	// once that command is visible to reads.
	applied atomic.Uint64

	// budget is the partition's share of its container's throughput.
	budget ru.Budget
	// hot counts request units per logical partition, to name the hottest.
	hot hotTracker
	// capture, while a split copies this partition's index, records the index changes of
	// every command committed since the copy's snapshot. Owned by the writer goroutine.
	capture *capture

	// mayUnindexed is set once the partition may hold an item kept out of the index (see
	// unindexed.go); until then writes and scans need not look for one.
	mayUnindexed atomic.Bool

	// failed is set once a batch failed to sync; every later write is refused with it.
	failed atomic.Pointer[fault.Error]

	// closeMu orders Close after every Execute that has started sending to queue.
	closeMu sync.RWMutex
	closed  bool
	queue   chan *request
	stopped chan struct{}

	// defaultTTL is the container's default time to live (TTLOff, TTLNoDefault or seconds);
	// it changes when the container is replaced, and reads and writes load it each time.
	defaultTTL atomic.Int64
	clock      func() int64 // nil: the system clock; see now
	// unique is the container's unique key policy, fixed at creation; nil for none.
	unique *uniquekey.Policy
}

// Open opens a partition and starts its writer. Its state is read from storage; a partition
// that never committed a command starts at LSN 0 (or at startLSN, for the children of a split).
func Open(cfg Config, startLSN uint64) (*Partition, error) {
	if cfg.Seq == nil {
		return nil, fault.New(fault.Internal, "partition: a partition needs its container's Sequence")
	}
	p := &Partition{
		db:         cfg.DB,
		container:  cfg.Container,
		id:         cfg.ID,
		rng:        cfg.Range,
		rid:        cfg.ContainerRID,
		selfPrefix: cfg.SelfPrefix,
		maxLogical: cfg.MaxLogicalBytes,
		seq:        cfg.Seq,
		logs:       append(slices.Clone(cfg.Lineage), cfg.ID),
		keepImages: cfg.KeepImages,
		unique:     cfg.Unique,
		queue:      make(chan *request, 1024),
		stopped:    make(chan struct{}),
		clock:      cfg.Now,
	}
	p.defaultTTL.Store(cfg.DefaultTTL)
	ix, err := loadIndexState(p.db, p.container, p.id, cfg.Index)
	if err != nil {
		return nil, err
	}
	p.ix.Store(ix)
	st := state{LSN: startLSN}
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
	p.seq.atLeast(st.Seq)
	p.published.Store(&st)
	p.applied.Store(st.LSN)
	go p.run(st)
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

// Close stops accepting writes, lets queued writes finish and stops the writer. Reads keep
// working until the storage is closed.
func (p *Partition) Close() {
	p.closeMu.Lock()
	if !p.closed {
		p.closed = true
		close(p.queue)
	}
	p.closeMu.Unlock()
	<-p.stopped
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
	var buf [256]byte
	key := storage.ItemKey(buf[:0], p.container, string(e), id)
	v, gen, cached := p.db.Rows.Lookup(key)
	if !cached {
		sv, closer, err := p.db.Get(key)
		if storage.IsNotFound(err) {
			return Doc{}, notFound()
		}
		if err != nil {
			return Doc{}, fault.New(fault.Internal, "reading item: %v", err)
		}
		seq, err := storage.DecodeSeq(sv)
		closer.Close()
		if err != nil {
			return Doc{}, fault.New(fault.Internal, "reading item: %v", err)
		}
		v, closer, err = p.db.Get(storage.DocKey(key[len(key):], p.container, seq))
		if storage.IsNotFound(err) {
			return Doc{}, notFound() // deleted between the two reads
		}
		if err != nil {
			return Doc{}, fault.New(fault.Internal, "reading item: %v", err)
		}
		defer closer.Close()
		p.db.Rows.Fill(key, v, gen)
	}
	d, err := decodeValue(v)
	if err != nil {
		return Doc{}, fault.New(fault.Internal, "%v", err)
	}
	if p.liveness().expired(d.json) {
		return Doc{}, notFound()
	}
	// Pebble's buffer is only valid until closer.Close.
	return Doc{JSON: append(dst, d.json...), LSN: d.lsn}, nil
}

// Scan calls fn, in creation order, for every item of the partition whose EPK lies in one of
// ranges (sorted and disjoint) and whose creation sequence is at least from, until fn returns
// false. The slices passed to fn are only valid during the call.
//
// When the ranges cover the partition, the scan walks its creation order; otherwise it
// gathers the items of the ranges' logical partitions and sorts them, which costs a read of
// every item key in the ranges per call.
func (p *Partition) Scan(ranges []epk.Range, from uint64, fn func(d Doc) bool) error {
	clipped := p.clip(ranges)
	if len(clipped) == 0 {
		return nil
	}
	snap := p.db.NewSnapshot()
	defer snap.Close()
	docs, err := p.docReader(snap)
	if err != nil {
		return err
	}
	defer docs.close()
	if len(clipped) == 1 && clipped[0] == p.rng {
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
			if more, err := docs.visit(seq, fn); !more || err != nil {
				return err
			}
		}
		return it.Error()
	}
	seqs, err := p.seqsIn(snap, clipped, from)
	if err != nil {
		return err
	}
	for _, seq := range seqs {
		if more, err := docs.visit(seq, fn); !more || err != nil {
			return err
		}
	}
	return nil
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

// seqsIn lists, sorted, the creation sequences (from on) of the items whose EPK is in ranges.
func (p *Partition) seqsIn(snap *storage.Snapshot, ranges []epk.Range, from uint64) ([]uint64, error) {
	var seqs []uint64
	for _, r := range ranges {
		lo, hi := storage.ItemSpan(p.container, string(r.Min), string(r.Max))
		it, err := snap.NewIter(lo, hi)
		if err != nil {
			return nil, err
		}
		for it.First(); it.Valid(); it.Next() {
			seq, err := storage.DecodeSeq(it.Value())
			if err != nil {
				it.Close()
				return nil, err
			}
			if seq >= from {
				seqs = append(seqs, seq)
			}
		}
		if err := it.Close(); err != nil {
			return nil, err
		}
	}
	slices.Sort(seqs)
	return seqs, nil
}

// docReader reads documents by creation sequence, cheaply when the sequences ascend: its
// iterator steps forward instead of searching again.
type docReader struct {
	p   *Partition
	it  *storage.Iter
	key []byte
	// live hides expired items: get reports them absent. Readers that want them clear it.
	live liveness
}

func (p *Partition) docReader(snap *storage.Snapshot) (*docReader, error) {
	lo, hi := storage.ContainerDocSpan(p.container)
	it, err := snap.NewIter(lo, hi)
	if err != nil {
		return nil, err
	}
	return &docReader{p: p, it: it, live: p.liveness()}, nil
}

// get returns the document seq, decoded; its slices are valid until the next get.
func (r *docReader) get(seq uint64) (stored, bool, error) {
	r.key = storage.DocKey(r.key[:0], r.p.container, seq)
	if !r.it.SeekGE(r.key) || !bytes.Equal(r.it.Key(), r.key) {
		return stored{}, false, r.it.Error() // deleted since the entry that named it was read
	}
	d, err := decodeValue(r.it.Value())
	if err == nil && r.live.expired(d.json) {
		return stored{}, false, nil
	}
	return d, err == nil, err
}

// visit hands the document seq, when it is live, to fn; more is false once fn asks to stop
// or get failed.
func (r *docReader) visit(seq uint64, fn func(d Doc) bool) (more bool, err error) {
	d, ok, err := r.get(seq)
	if err != nil {
		return false, err
	}
	return !ok || fn(d.doc(seq)), nil
}

func (r *docReader) close() { r.it.Close() }

// errClosed refuses operations once the partition is closing; the client may retry, and a
// split's children (or a restarted server) will take them.
var errClosed = fault.New(fault.Unavailable, "The partition is shutting down; retry the request")

func notFound() error {
	return fault.New(fault.NotFound, "Entity with the specified id does not exist in the system.")
}
