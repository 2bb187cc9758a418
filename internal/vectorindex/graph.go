package vectorindex

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Config is a graph index's shape. The zero value of each tuning field picks its default.
type Config struct {
	// Metric is the vector embedding's distanceFunction.
	Metric Metric
	// Dimensions is the vectors' length; every vector inserted or searched must have it.
	Dimensions int
	// MaxDegree (R) bounds every node's out-edges. More edges find neighbours more
	// reliably, at the cost of record size and of work per insert and per search step.
	MaxDegree int
	// BuildListSize (L) is the candidate list of the search an insert runs to find the new
	// node's neighbours: Cosmos DB's indexingSearchListSize.
	BuildListSize int
	// Alpha (α ≥ 1) is RobustPrune's slack: a candidate is dropped when an already chosen
	// neighbour is α times closer to it than the new node is. α > 1 keeps some longer
	// edges, which let a search cross the graph in few steps.
	Alpha float64
	// TrainSize is how many vectors the graph holds (raw) before it trains its quantizer
	// on them and switches to quantized codes. Negative: never quantize.
	TrainSize int
}

// Defaults for the Config fields left zero.
const (
	DefaultMaxDegree     = 32
	DefaultBuildListSize = 100
	DefaultAlpha         = 1.2
	DefaultTrainSize     = 1000
)

// Index is a Vamana graph over a store it does not own: every operation reads through the
// Reader it is given and returns what to write. An Index holds only its configuration and
// is safe for concurrent use; the rules on who may call what when are the store's (see
// the package documentation).
type Index struct {
	cfg    Config
	alpha2 float32 // α², since the graph's distances are squared Euclidean or 1 − cos
}

// New checks a configuration, fills in its defaults and returns the index.
func New(cfg Config) (*Index, error) {
	if !cfg.Metric.valid() {
		return nil, fmt.Errorf("vectorindex: invalid metric %d", int(cfg.Metric))
	}
	if cfg.Dimensions <= 0 {
		return nil, errors.New("vectorindex: dimensions must be positive")
	}
	if cfg.MaxDegree == 0 {
		cfg.MaxDegree = DefaultMaxDegree
	}
	if cfg.BuildListSize == 0 {
		cfg.BuildListSize = DefaultBuildListSize
	}
	if cfg.Alpha == 0 {
		cfg.Alpha = DefaultAlpha
	}
	if cfg.TrainSize == 0 {
		cfg.TrainSize = DefaultTrainSize
	}
	if cfg.MaxDegree < 2 || cfg.BuildListSize < 1 || cfg.Alpha < 1 {
		return nil, fmt.Errorf("vectorindex: invalid graph parameters R=%d L=%d α=%g", cfg.MaxDegree, cfg.BuildListSize, cfg.Alpha)
	}
	cfg.BuildListSize = max(cfg.BuildListSize, cfg.MaxDegree)
	return &Index{cfg: cfg, alpha2: float32(cfg.Alpha * cfg.Alpha)}, nil
}

// Config returns the configuration with its defaults filled in.
func (ix *Index) Config() Config { return ix.cfg }

// cand is a node met by a search: its distance to the query, and what of its record the
// search needs later (the code to compare it again, the edges to expand it).
type cand struct {
	id      uint64
	dist    float32
	code    []byte
	nbrs    []uint64
	deleted bool
}

type fetchFunc func(id uint64) (Node, bool, error)

// beam is the state of one greedy search, reused across searches to spare allocations.
type beam struct {
	met     []cand  // every node compared, in order: the list points into it
	list    []entry // the L closest met so far, closest first
	seen    idSet   // every id met
	visited []cand  // the expanded nodes, in order, when asked for
	q       query   // the query being searched
	pq      query   // a node prepared as a query, for pruning
	buf     []float32
}

// entry is a place in the candidate list: small, since insertions shift the list.
type entry struct {
	dist     float32
	i        int32 // into met
	expanded bool
}

// search is the greedy search of the Vamana paper: keep the L closest nodes met so far,
// expand the closest one not yet expanded (compare the query with all its neighbours), and
// stop when all L have been expanded. onEval, when set, sees every node compared.
func (b *beam) search(fetch fetchFunc, q *query, start uint64, L int, keepVisited bool, onEval func(id uint64, d float32, deleted bool)) error {
	b.met = b.met[:0]
	b.list = b.list[:0]
	b.visited = b.visited[:0]
	b.seen.reset(L * 4) // it grows as needed
	slot, _ := b.seen.add(start)
	n, ok, err := fetch(start)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("vectorindex: entry point %d has no record", start)
	}
	first := cand{id: start, dist: q.dist(n.Code), code: n.Code, nbrs: n.Neighbors, deleted: n.Deleted}
	b.seen.vals[slot] = first.dist
	if onEval != nil {
		onEval(first.id, first.dist, first.deleted)
	}
	b.met = append(b.met, first)
	b.list = append(b.list, entry{dist: first.dist})
	cur := 0
	for cur < len(b.list) {
		b.list[cur].expanded = true
		c := &b.met[b.list[cur].i]
		if keepVisited {
			b.visited = append(b.visited, *c)
		}
		nbrs := c.nbrs
		next := cur + 1
		for _, id := range nbrs {
			slot, added := b.seen.add(id)
			if !added {
				continue
			}
			n, ok, err := fetch(id)
			if err != nil {
				return err
			}
			if !ok {
				continue // an edge to a record that is gone: skip it
			}
			d := q.dist(n.Code)
			b.seen.vals[slot] = d
			if onEval != nil {
				onEval(id, d, n.Deleted)
			}
			if pos := b.insert(d, L); pos >= 0 {
				b.list[pos].i = int32(len(b.met))
				b.met = append(b.met, cand{id: id, dist: d, code: n.Code, nbrs: n.Neighbors, deleted: n.Deleted})
				next = min(next, pos)
			}
		}
		cur = next
		for cur < len(b.list) && b.list[cur].expanded {
			cur++
		}
	}
	return nil
}

// insert makes room in the bounded list for a node at distance d, in distance order, and
// returns its position, or −1 when it is no closer than the L-th.
func (b *beam) insert(d float32, L int) int {
	n := len(b.list)
	if n >= L && d >= b.list[n-1].dist {
		return -1
	}
	// Binary search for the first element farther than d (ties keep arrival order).
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if b.list[mid].dist <= d {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if n < L {
		b.list = append(b.list, entry{})
	}
	copy(b.list[lo+1:], b.list[lo:len(b.list)-1])
	b.list[lo] = entry{dist: d}
	return lo
}

// op is one mutation in progress: the records it read (cached, so each is fetched once)
// and the ones it changed (copies), which become its Changes.
type op struct {
	ix      *Index
	r       Reader
	meta    Meta
	meta0   Meta
	quant   Quantizer
	trained bool
	nodes   map[uint64]*Node // read or written; nil: no record
	dirty   map[uint64]bool  // true: write the record; false: delete it
	b       beam
	pset    idSet
	sel     []query // prune's chosen neighbours, prepared
	ents    []edgeEnd
}

// ops recycles the scratch of mutations (maps, the search's tables), which would
// otherwise be most of what an insert allocates.
var ops = sync.Pool{New: func() any {
	return &op{nodes: map[uint64]*Node{}, dirty: map[uint64]bool{}}
}}

// newOp starts a mutation; release it when its Changes have been taken.
func (ix *Index) newOp(r Reader) (*op, error) {
	meta, err := r.Meta()
	if err != nil {
		return nil, err
	}
	quant, err := r.Quantizer()
	if err != nil {
		return nil, err
	}
	if quant != nil && quant.Dimensions() != ix.cfg.Dimensions {
		return nil, fmt.Errorf("vectorindex: the stored quantizer has %d dimensions, the index %d", quant.Dimensions(), ix.cfg.Dimensions)
	}
	o := ops.Get().(*op)
	o.ix, o.r, o.meta, o.meta0, o.quant, o.trained = ix, r, meta, meta, quant, false
	return o, nil
}

// release returns the op's scratch to the pool. The Changes it produced own their slices
// (records are copied before they are changed), so nothing handed out is reused.
func (o *op) release() {
	clear(o.nodes)
	clear(o.dirty)
	o.ix, o.r, o.quant = nil, nil, nil
	o.b.met = o.b.met[:0]
	o.b.list = o.b.list[:0]
	o.b.visited = o.b.visited[:0]
	ops.Put(o)
}

// get returns the current record of id (nil when there is none). It is read-only: change
// records through mutable.
func (o *op) get(id uint64) (*Node, error) {
	if n, ok := o.nodes[id]; ok {
		return n, nil
	}
	n, ok, err := o.r.Node(id)
	if err != nil {
		return nil, err
	}
	var p *Node
	if ok {
		p = &n
	}
	o.nodes[id] = p
	return p, nil
}

// fetch is get for searches: it reads records the op has not touched straight from the
// Reader without caching them, since a search meets thousands of nodes and keeps few.
func (o *op) fetch(id uint64) (Node, bool, error) {
	if n, ok := o.nodes[id]; ok {
		if n == nil {
			return Node{}, false, nil
		}
		return *n, true, nil
	}
	return o.r.Node(id)
}

// mutable returns a record of id that the op may change and will write; nil when there is
// none.
func (o *op) mutable(id uint64) (*Node, error) {
	n, err := o.get(id)
	if err != nil || n == nil {
		return nil, err
	}
	if !o.dirty[id] {
		c := *n
		c.Neighbors = slices.Clone(n.Neighbors)
		n = &c
		o.nodes[id] = n
		o.dirty[id] = true
	}
	return n, nil
}

// put writes a whole record.
func (o *op) put(n Node) {
	o.nodes[n.ID] = &n
	o.dirty[n.ID] = true
}

// remove deletes a record.
func (o *op) remove(id uint64) {
	o.nodes[id] = nil
	o.dirty[id] = false
}

func (o *op) changes() Changes {
	var ch Changes
	for id, write := range o.dirty {
		if write {
			ch.Put = append(ch.Put, *o.nodes[id])
		} else {
			ch.Delete = append(ch.Delete, id)
		}
	}
	sortChanges(&ch)
	if o.meta != o.meta0 {
		m := o.meta
		ch.Meta = &m
	}
	if o.trained {
		ch.Quantizer = o.quant
	}
	return ch
}

func sortChanges(ch *Changes) {
	slices.SortFunc(ch.Put, func(a, b Node) int { return cmp.Compare(a.ID, b.ID) })
	slices.Sort(ch.Delete)
}

// idSet is a set of ids, each with a distance, for one search: open addressing with
// linear probing, cleared in constant time by bumping a generation number instead of
// zeroing the table. The distances let an insert reuse what its search computed.
type idSet struct {
	keys []uint64
	vals []float32
	gens []uint32
	gen  uint32
	n    int
	mask uint64
}

func (s *idSet) reset(hint int) {
	size := 256
	for size < 2*hint {
		size <<= 1
	}
	if len(s.keys) < size {
		s.alloc(size)
	}
	s.gen++
	if s.gen == 0 { // wrapped: old generations could alias, so clear for real
		clear(s.gens)
		s.gen = 1
	}
	s.n = 0
}

func (s *idSet) alloc(size int) {
	s.keys = make([]uint64, size)
	s.vals = make([]float32, size)
	s.gens = make([]uint32, size)
	s.mask = uint64(size - 1)
	s.gen = 0
}

func (s *idSet) slot(id uint64) uint64 { return (id * 0x9E3779B97F4A7C15) >> 32 & s.mask }

// add inserts id (with distance +Inf) and reports whether it was absent; i is its slot,
// valid until the next add.
func (s *idSet) add(id uint64) (i uint64, added bool) {
	if 2*(s.n+1) > len(s.keys) {
		s.grow()
	}
	for i = s.slot(id); ; i = (i + 1) & s.mask {
		if s.gens[i] != s.gen {
			s.gens[i] = s.gen
			s.keys[i] = id
			s.vals[i] = float32(math.Inf(1))
			s.n++
			return i, true
		}
		if s.keys[i] == id {
			return i, false
		}
	}
}

// dist returns the distance recorded for id; ok is false when id is not in the set.
func (s *idSet) dist(id uint64) (d float32, ok bool) {
	if len(s.keys) == 0 {
		return 0, false
	}
	for i := s.slot(id); ; i = (i + 1) & s.mask {
		if s.gens[i] != s.gen {
			return 0, false
		}
		if s.keys[i] == id {
			return s.vals[i], true
		}
	}
}

func (s *idSet) grow() {
	oldKeys, oldVals, oldGens, oldGen := s.keys, s.vals, s.gens, s.gen
	s.alloc(max(256, 2*len(oldKeys)))
	s.gen = 1
	s.n = 0
	for i, g := range oldGens {
		if g == oldGen {
			j, _ := s.add(oldKeys[i])
			s.vals[j] = oldVals[i]
		}
	}
}
