package partition

import (
	"encoding/binary"
	"io"
	"sync"
	"sync/atomic"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/rid"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/storage"
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

	// failed is set once a batch failed to sync; every later write is refused with it.
	failed atomic.Pointer[fault.Error]

	// closeMu orders Close after every Execute that has started sending to queue.
	closeMu sync.RWMutex
	closed  bool
	queue   chan *request
	stopped chan struct{}
}

// Open opens a partition and starts its writer. Its state is read from storage; a partition
// that never committed a command starts at LSN 0 (or at startLSN, for the children of a split).
func Open(cfg Config, startLSN uint64) (*Partition, error) {
	p := &Partition{
		db:         cfg.DB,
		container:  cfg.Container,
		id:         cfg.ID,
		rng:        cfg.Range,
		rid:        cfg.ContainerRID,
		selfPrefix: cfg.SelfPrefix,
		maxLogical: cfg.MaxLogicalBytes,
		queue:      make(chan *request, 1024),
		stopped:    make(chan struct{}),
	}
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
	// Created orders items by creation within a logical partition (the item half of its
	// _rid); Cosmos returns the items of a logical partition in this order.
	Created uint64
}

// ETag is the etag of the version.
func (d Doc) ETag() string { return ETag(d.LSN) }

// Read returns the item (e, id), or NotFound. Its JSON is appended to dst.
func (p *Partition) Read(e epk.EPK, id string, dst []byte) (Doc, error) {
	var buf [256]byte
	key := storage.DocKey(buf[:0], p.container, string(e), id)
	v, gen, cached := p.db.Rows.Lookup(key)
	if !cached {
		var closer io.Closer
		var err error
		v, closer, err = p.db.Get(key)
		if storage.IsNotFound(err) {
			return Doc{}, notFound()
		}
		if err != nil {
			return Doc{}, fault.New(fault.Internal, "reading item: %v", err)
		}
		defer closer.Close()
		p.db.Rows.Fill(key, v, gen)
	}
	_, lsn, json, err := decodeValue(v)
	if err != nil {
		return Doc{}, fault.New(fault.Internal, "%v", err)
	}
	// Pebble's buffer is only valid until closer.Close.
	return Doc{JSON: append(dst, json...), LSN: lsn}, nil
}

// Cursor is a position in a container's (EPK, id) order, independent of partitions, so it
// stays meaningful when the partition it was taken in splits.
type Cursor struct {
	EPK epk.EPK
	ID  string
	// Inclusive starts at the cursor's own item instead of after it.
	Inclusive bool
}

// Scan calls fn for every item of the partition whose EPK is within r, in (EPK, id) order,
// starting after the cursor when one is given, until fn returns false. The slices passed to fn
// are only valid during the call.
func (p *Partition) Scan(r epk.Range, after *Cursor, fn func(e epk.EPK, id string, d Doc) bool) error {
	lo, hi := max(r.Min, p.rng.Min), min(r.Max, p.rng.Max)
	if lo >= hi {
		return nil
	}
	start, end := storage.DocSpan(p.container, string(lo), string(hi))
	if after != nil {
		k := storage.DocKey(nil, p.container, string(after.EPK), after.ID)
		if !after.Inclusive {
			k = append(k, 0) // the smallest key above the cursor's
		}
		if string(k) > string(start) {
			start = k
		}
	}
	it, err := p.db.NewIter(start, end)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		e, id, err := storage.ParseDocKey(it.Key())
		if err != nil {
			return err
		}
		docRID, lsn, json, err := decodeValue(it.Value())
		if err != nil {
			return err
		}
		if !fn(epk.EPK(e), id, Doc{JSON: json, LSN: lsn, Created: binary.BigEndian.Uint64(docRID[:])}) {
			break
		}
	}
	return it.Error()
}

// errClosed refuses operations once the partition is closing; the client may retry, and a
// split's children (or a restarted server) will take them.
var errClosed = fault.New(fault.Unavailable, "The partition is shutting down; retry the request")

func notFound() error {
	return fault.New(fault.NotFound, "Entity with the specified id does not exist in the system.")
}
