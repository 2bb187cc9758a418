package partition

import (
	"bytes"
	"encoding"
	"iter"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/searchpolicy"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/value"
	"github.com/partita-db/partita/internal/vectorindex"
)

// Vector indexes. A path that the indexing policy gives a quantizedFlat or diskANN index (and
// the container's vector embedding policy declares) has a graph in the partition's own key
// span (storage's vector family), maintained in the batch of every write that changes an item:
// a node per item whose value at the path is a vector of the declared length, keyed by the
// item's creation sequence. So the graph and the items never disagree, after a crash too.
//
// A graph covers the partition only from a moment it was empty: the complete marker is
// written by the first write staged while the partition holds no item. Until then (an index
// added to a partition that has items, the children of a split, a data directory from before
// vector indexes), the partition keeps no graph for the path and vector searches read every
// item, exactly. A policy that drops the index deletes its graph.
//
// Staging reads the graph as the batches before it committed it, through an Overlay that holds
// what this batch decided so far; graph mutations are deterministic, so every replica that
// applies the same writes holds the same graph.

// vectorSpec is one vector index the partition keeps a graph for.
type vectorSpec struct {
	typ      string   // quantizedFlat or diskANN
	path     string   // in term-path form, as storage keys it
	segs     []string // the embedding's property names
	dataType vectorindex.DataType
	ix       *vectorindex.Index
}

// vectorSpecs are the graphs pol asks for, given the container's vector embedding policy.
func vectorSpecs(vec *searchpolicy.VectorPolicy, pol *indexing.Policy) []vectorSpec {
	var out []vectorSpec
	for _, vi := range pol.VectorIndexes() {
		if vi.Type == "flat" {
			continue // exact search reads the items themselves
		}
		if emb, ok := vec.LookupPath(vi.Path); ok {
			m, err1 := vectorindex.ParseMetric(emb.Distance)
			dt, err2 := vectorindex.ParseDataType(emb.DataType)
			cfg := vectorindex.Config{Metric: m, Dimensions: emb.Dimensions, BuildListSize: vi.SearchListSize}
			ix, err3 := vectorindex.New(cfg)
			if err1 == nil && err2 == nil && err3 == nil {
				out = append(out, vectorSpec{typ: vi.Type, path: value.TermPath(emb.Segs), segs: emb.Segs, dataType: dt, ix: ix})
			}
		}
	}
	return out
}

// vectorSpecAt is the graph pol asks for over path (in term-path form), if any.
func (p *Partition) vectorSpecAt(pol *indexing.Policy, path string) (vectorSpec, bool) {
	for _, s := range vectorSpecs(p.vectors, pol) {
		if s.path == path {
			return s, true
		}
	}
	return vectorSpec{}, false
}

// vectorOf is the vector at spec's path of an item's JSON; ok is false when it holds none (no
// value, not an array of numbers the data type takes, or not of the declared length).
func (s vectorSpec) vectorOf(doc []byte) ([]float32, bool) {
	v, err := value.Parse(doc)
	if err != nil {
		return nil, false
	}
	for _, seg := range s.segs {
		v = v.Get(seg)
	}
	nums, ok := v.Numbers()
	if !ok || len(nums) != s.ix.Config().Dimensions {
		return nil, false
	}
	return vectorindex.Convert(s.dataType, nums)
}

// The committed state of each vector index is mirrored in memory (a graphMirror): whether
// the graph is complete or being built, read from its markers the first time anything asks,
// and the graph itself (a vectorindex.MemStore), loaded by one scan of its records the first
// time the writer or a search needs it. The writer reads the graph for every insert and
// searches for every step, where a storage read and decode per node would cost several times
// the graph's own work. Every batch that commits applies its changes to the mirror, under
// vecMu, so that a load and a commit never miss each other. The graph costs about its
// records' size in memory: a node's code (4 bytes per dimension until the graph holds
// vectorindex.DefaultTrainSize vectors, 1 after) and its edges (8 bytes each).

// graphMirror is the committed state of one vector index of the partition.
type graphMirror struct {
	// complete is set when the graph holds every item with a vector (the complete marker).
	complete bool
	// build is the progress of the build in flight (the build record); nil when none runs.
	// While one runs, writes maintain the graph and searches do not use it.
	build *graphBuild
	// g is the graph; nil until loaded. A graph that is neither complete nor being built
	// has no records, so it loads as an empty one.
	g *vectorindex.MemStore
}

// graphBuild is the progress of a graph build (vectorbuild.go): every item created before
// cursor is in the graph; done counts the items passed.
type graphBuild struct {
	cursor uint64
	done   int64
}

// graph returns the mirror of the committed state of the index over path, with its graph
// loaded when nodes is set. The result is a copy: the mirror itself changes under vecMu.
func (p *Partition) graph(path string, nodes bool) (graphMirror, error) {
	p.vecMu.Lock()
	defer p.vecMu.Unlock()
	m := p.mirrors[path]
	if m != nil && (m.g != nil || !nodes) {
		return *m, nil
	}
	snap, err := p.snapshot()
	if err != nil {
		return graphMirror{}, err
	}
	defer snap.Close()
	get := func(kind byte) ([]byte, bool, error) {
		v, err := snap.Get(nil, storage.VectorKey(nil, p.container, p.id, path, kind, 0))
		if storage.IsNotFound(err) {
			return nil, false, nil
		}
		return v, err == nil, err
	}
	if m == nil {
		m = new(graphMirror)
		var err error
		if _, m.complete, err = get(storage.VectorComplete); err != nil {
			return graphMirror{}, err
		}
		if v, ok, err := get(storage.VectorBuild); err != nil {
			return graphMirror{}, err
		} else if ok {
			if m.build, err = decodeGraphBuild(v); err != nil {
				return graphMirror{}, err
			}
		}
	}
	if nodes {
		var ch vectorindex.Changes
		if v, ok, err := get(storage.VectorMeta); err != nil {
			return graphMirror{}, err
		} else if ok {
			ch.Meta = new(vectorindex.Meta)
			if err := ch.Meta.UnmarshalBinary(v); err != nil {
				return graphMirror{}, err
			}
		}
		if v, ok, err := get(storage.VectorQuantizer); err != nil {
			return graphMirror{}, err
		} else if ok {
			if ch.Quantizer, err = vectorindex.UnmarshalQuantizer(v); err != nil {
				return graphMirror{}, err
			}
		}
		lo, hi := storage.VectorNodeSpan(p.container, p.id, path)
		it, err := snap.NewIter(lo, hi)
		if err != nil {
			return graphMirror{}, err
		}
		defer it.Close()
		for it.First(); it.Valid(); it.Next() {
			id, _ := storage.ParseVectorNodeKey(it.Key())
			n, err := vectorindex.UnmarshalNode(id, append([]byte(nil), it.Value()...))
			if err != nil {
				return graphMirror{}, err
			}
			ch.Put = append(ch.Put, n)
		}
		if err := it.Error(); err != nil {
			return graphMirror{}, err
		}
		m.g = vectorindex.NewMemStore()
		m.g.Apply(ch)
	}
	if p.mirrors == nil {
		p.mirrors = map[string]*graphMirror{}
	}
	p.mirrors[path] = m
	return *m, nil
}

// mirrorCommitted applies to the mirrors what a committed batch wrote to the graphs, and
// forgets those of dropped graphs.
func (p *Partition) mirrorCommitted(gs []*batchGraph, dropped []string) {
	p.vecMu.Lock()
	defer p.vecMu.Unlock()
	defer func() {
		for _, path := range dropped {
			delete(p.mirrors, path)
		}
	}()
	for _, g := range gs {
		m := p.mirrors[g.spec.path]
		if m == nil {
			continue // not loaded: the next load reads what this batch committed
		}
		m.complete, m.build = g.complete, g.build
		if m.g != nil && g.dirty {
			m.g.Apply(g.o.Changes())
		}
	}
}

// batchGraph is what one apply batch does to one graph: the mutations staged so far, over the
// committed graph, and its state as of them.
type batchGraph struct {
	spec     vectorSpec
	base     vectorindex.Scanner // the committed graph's mirror
	o        *vectorindex.Overlay
	complete bool
	build    *graphBuild
	// marked is set when this batch writes the complete marker, and built when it writes or
	// deletes the build record.
	marked, built bool
	// dirty is set once a mutation changed the overlay.
	dirty bool
}

// graphs returns the batch's graphs for the policy it stages under, opening them the first
// time.
func (a *applyBatch) graphs() ([]*batchGraph, error) {
	if a.vec != nil || a.p.vectors == nil {
		return a.vec, nil
	}
	for _, spec := range vectorSpecs(a.p.vectors, a.ix.pol) {
		m, err := a.p.graph(spec.path, true)
		if err != nil {
			return nil, err
		}
		a.vec = append(a.vec, &batchGraph{spec: spec, base: m.g, o: vectorindex.NewOverlay(m.g), complete: m.complete, build: m.build})
	}
	if a.vec == nil {
		a.vec = []*batchGraph{} // looked up once
	}
	return a.vec, nil
}

// stageVectors adds to the batch's graphs what c's changes do to the items' vectors. A graph
// that writes do not maintain yet starts being kept, complete, when c finds the partition
// empty.
func (a *applyBatch) stageVectors(c *Command) error {
	gs, err := a.graphs()
	if err != nil || len(gs) == 0 {
		return err
	}
	for _, g := range gs {
		if !g.complete && a.st.Items == 0 {
			g.markComplete()
		}
		if !g.complete && g.build == nil {
			continue
		}
		for i := range c.Changes {
			ch := &c.Changes[i]
			var vec []float32
			ok := false
			if !ch.Delete {
				if d, err := decodeValue(ch.Value); err == nil {
					vec, ok = g.spec.vectorOf(d.json)
				}
			}
			if err := g.put(ch.Seq, vec, ok); err != nil {
				return err
			}
		}
		if err := g.maintain(); err != nil {
			return err
		}
	}
	return nil
}

// markComplete makes the graph complete as of the batch: the complete marker is written and
// the build record, if any, deleted.
func (g *batchGraph) markComplete() {
	g.complete, g.marked = true, true
	if g.build != nil {
		g.build, g.built = nil, true
	}
}

// put makes the graph hold vec for the item seq (when ok) or nothing (when not).
func (g *batchGraph) put(seq uint64, vec []float32, ok bool) error {
	node, had, err := g.o.Node(seq)
	if err != nil {
		return err
	}
	var delta vectorindex.Changes
	switch {
	case ok:
		if had && !node.Deleted && g.sameVector(node, vec) {
			return nil // a write that left the vector as it was (a patch of another field)
		}
		delta, err = g.spec.ix.Insert(g.o, seq, vec)
	case had && !node.Deleted:
		delta, err = g.spec.ix.Delete(g.o, seq)
	default:
		return nil
	}
	if err != nil {
		return err
	}
	g.o.Apply(delta)
	g.dirty = true
	return nil
}

// maintain runs the graph's maintenance pass when one is due.
func (g *batchGraph) maintain() error {
	meta, err := g.o.Meta()
	if err != nil || !meta.ShouldConsolidate() {
		return nil
	}
	delta, err := g.spec.ix.Consolidate(overlayScanner{g})
	if err != nil {
		return err
	}
	g.o.Apply(delta)
	g.dirty = true
	return nil
}

// sameVector reports whether node already holds vec: its code is vec's.
func (g *batchGraph) sameVector(node vectorindex.Node, vec []float32) bool {
	q, err := g.o.Quantizer()
	if err != nil {
		return false
	}
	code, err := vectorindex.EncodeVector(g.spec.ix.Config().Metric, q, vec)
	return err == nil && bytes.Equal(code, node.Code)
}

// liveCodes are the codes of a graph's live nodes, for an exact scan of them.
func liveCodes(g vectorindex.Scanner) iter.Seq2[uint64, []byte] {
	return func(yield func(uint64, []byte) bool) {
		g.Scan(func(n vectorindex.Node) bool { return n.Deleted || yield(n.ID, n.Code) })
	}
}

// overlayScanner scans a batch's graph: the committed nodes with the batch's over them.
type overlayScanner struct{ g *batchGraph }

func (s overlayScanner) Node(id uint64) (vectorindex.Node, bool, error) { return s.g.o.Node(id) }
func (s overlayScanner) Meta() (vectorindex.Meta, error)                { return s.g.o.Meta() }
func (s overlayScanner) Quantizer() (vectorindex.Quantizer, error)      { return s.g.o.Quantizer() }
func (s overlayScanner) Scan(fn func(vectorindex.Node) bool) error {
	pending := s.g.o.Changes()
	seen := map[uint64]bool{}
	for _, id := range pending.Delete {
		seen[id] = true
	}
	for _, n := range pending.Put {
		seen[n.ID] = true
		if !fn(n) {
			return nil
		}
	}
	return s.g.base.Scan(func(n vectorindex.Node) bool { return seen[n.ID] || fn(n) })
}

// writeVectors writes what the batch's graphs decided, before the batch commits, and has the
// mirrors follow once it has.
func (a *applyBatch) writeVectors() error {
	if len(a.vec) > 0 || len(a.dropped) > 0 {
		p, gs, dropped := a.p, a.vec, a.dropped
		a.effects = append(a.effects, func() { p.mirrorCommitted(gs, dropped) })
		a.dropped = nil
	}
	key := func(g *batchGraph, kind byte, id uint64) []byte {
		return storage.VectorKey(a.key[:0], a.p.container, a.p.id, g.spec.path, kind, id)
	}
	for _, g := range a.vec {
		if g.marked {
			if err := a.b.Set(key(g, storage.VectorComplete, 0), nil); err != nil {
				return err
			}
		}
		if g.built {
			var err error
			if g.build == nil {
				err = a.b.Delete(key(g, storage.VectorBuild, 0))
			} else {
				err = a.b.Set(key(g, storage.VectorBuild, 0), g.build.encode())
			}
			if err != nil {
				return err
			}
		}
		if !g.dirty {
			continue
		}
		ch := g.o.Changes()
		for _, id := range ch.Delete {
			if err := a.b.Delete(key(g, storage.VectorNode, id)); err != nil {
				return err
			}
		}
		var buf []byte
		for _, n := range ch.Put {
			buf = vectorindex.AppendNode(buf[:0], n)
			if err := a.b.Set(key(g, storage.VectorNode, n.ID), buf); err != nil {
				return err
			}
		}
		if ch.Meta != nil {
			if err := a.setEncoded(key(g, storage.VectorMeta, 0), ch.Meta); err != nil {
				return err
			}
		}
		if ch.Quantizer != nil {
			if err := a.setEncoded(key(g, storage.VectorQuantizer, 0), ch.Quantizer); err != nil {
				return err
			}
		}
	}
	return nil
}

// setEncoded sets key to m's binary encoding.
func (a *applyBatch) setEncoded(key []byte, m encoding.BinaryMarshaler) error {
	b, err := m.MarshalBinary()
	if err != nil {
		return err
	}
	return a.b.Set(key, b)
}

// dropVectors deletes the graphs that policy from has and policy to does not (or no longer
// keeps a graph for), and forgets the batch's open graphs, which followed from.
func (a *applyBatch) dropVectors(from, to *indexing.Policy) error {
	if a.p.vectors == nil {
		return nil
	}
	kept := map[string]bool{}
	for _, s := range vectorSpecs(a.p.vectors, to) {
		kept[s.path] = true
	}
	for _, s := range vectorSpecs(a.p.vectors, from) {
		if kept[s.path] {
			continue
		}
		lo, hi := storage.VectorSpan(a.p.container, a.p.id, s.path)
		if err := a.b.DeleteRange(lo, hi); err != nil {
			return err
		}
		a.dropped = append(a.dropped, s.path)
	}
	if err := a.writeVectors(); err != nil {
		return err
	}
	a.vec = nil
	return nil
}

// VectorSearch is a search of a partition's vector index (SearchVectors).
type VectorSearch struct {
	Path     string    // the indexed path, in term-path form
	Vector   []float32 // the query vector, of the index's data type
	Distance string    // the query's distance function: the index's, or the search is exact
	K        int       // how many items to return
	ListSize int       // the candidate list; 0 for the index's default for K
}

// SearchVectors calls fn with up to s.K items of r nearest s.Vector by the graph over s.Path,
// nearest first, with their exact scores. ok is false, before calling fn, when the partition
// keeps no complete graph for the path under the distance function asked: the caller then
// reads every item.
func (rd Reader) SearchVectors(s VectorSearch, r epk.Range, fn func(d Doc, score float64) bool) (ok bool, err error) {
	p := rd.p
	clipped := p.clip([]epk.Range{r})
	if len(clipped) == 0 {
		return true, nil
	}
	spec, ok := p.vectorSpecAt(p.ix.Load().pol, s.Path)
	if !ok || spec.ix.Config().Metric.String() != s.Distance || len(s.Vector) != spec.ix.Config().Dimensions {
		return false, nil
	}
	if err := p.await(rd.c); err != nil {
		return false, err
	}
	snap, err := p.snapshot()
	if err != nil {
		return false, err
	}
	defer snap.Close()
	m, err := p.graph(s.Path, true)
	if !m.complete || err != nil {
		return false, err
	}
	g := m.g
	docs, err := p.docReader(snap)
	if err != nil {
		return false, err
	}
	defer docs.close()
	orders, err := p.orderReader(snap)
	if err != nil {
		return false, err
	}
	defer orders.close()
	found := map[uint64]Doc{}
	whole := clipped[0] == p.rng
	opts := vectorindex.SearchOptions{
		K: s.K, ListSize: s.ListSize,
		Vector: func(id uint64) ([]float32, error) {
			e, ok, err := orders.epk(id)
			if err != nil || !ok || !whole && !clipped[0].Contains(epk.EPK(e)) {
				return nil, err
			}
			e = append([]byte(nil), e...)
			d, ok, err := docs.get(e, id)
			if err != nil || !ok {
				return nil, err
			}
			vec, ok := spec.vectorOf(d.json)
			if !ok {
				return nil, nil
			}
			found[id] = Doc{JSON: append([]byte(nil), d.json...), LSN: d.lsn(), Seq: id, epk: e, id: append([]byte(nil), d.id...)}
			return vec, nil
		},
	}
	var results []vectorindex.Result
	if spec.typ == "quantizedFlat" {
		// Every code compared, the best re-ranked: no graph walk, as the service's index does.
		var q vectorindex.Quantizer
		if q, err = g.Quantizer(); err == nil {
			results, err = vectorindex.QuantizedFlat(spec.ix.Config().Metric, q, s.Vector, liveCodes(g), opts)
		}
	} else {
		results, err = spec.ix.Search(g, s.Vector, opts)
	}
	if err != nil {
		return true, err
	}
	for _, res := range results {
		if d, ok := found[res.ID]; ok && !fn(d, res.Score) {
			break
		}
	}
	return true, nil
}
