package engine

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sort"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/value"
)

// QueryResult is a page of query results with what it cost.
type QueryResult struct {
	query.Page
	Charge float64
	// Partitions are the partitions the query read, with their LSNs, for session tokens.
	Partitions map[uint32]uint64
}

// QueryRanges are the EPK ranges a query reads: those of the partition key values its WHERE
// pins, or the whole space.
func (c *Container) QueryRanges(p *query.Prepared, params map[string]value.Value) []epk.Range {
	if keys, ok := p.PartitionKeys(c.paths, params); ok {
		return c.keyRanges(keys, epk.All)
	}
	return []epk.Range{epk.All}
}

// Query runs a prepared query over the items whose EPK lies in r. When the query's WHERE
// pins partition key values, only their logical partitions are read.
func (c *Container) Query(p *query.Prepared, r epk.Range, opts query.Options) (QueryResult, error) {
	return c.QueryAt(context.Background(), ReadConsistency{}, p, r, opts)
}

// QueryAt is Query for a client's read at rc. A page that met a replica of this node as it was
// discarded (removed from its group, or replaced by a snapshot) is read again over the
// partitions routed then: nothing of it went to the client. ctx carries the request's
// priority (ru.WithPriority).
func (c *Container) QueryAt(ctx context.Context, rc ReadConsistency, p *query.Prepared, r epk.Range, opts query.Options) (QueryResult, error) {
	pri := ru.PriorityOf(ctx)
	for attempt := 1; ; attempt++ {
		rt := c.routes.Load()
		res, err := c.queryAt(rc, pri, p, r, opts)
		if !partition.Closed(err) || attempt == maxQueryAttempts || !c.routingChanges(rt) {
			return res, err
		}
	}
}

// maxQueryAttempts bounds how many times QueryAt reads a page that met a discarded replica.
const maxQueryAttempts = 4

// routingChanges waits, up to routeWait, until the container's routing is no longer rt, and
// reports whether it changed.
func (c *Container) routingChanges(rt *routing) bool {
	for deadline := time.Now().Add(routeWait); c.routes.Load() == rt; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

func (c *Container) queryAt(rc ReadConsistency, pri ru.Priority, p *query.Prepared, r epk.Range, opts query.Options) (QueryResult, error) {
	c.splitMu.RLock()
	defer c.splitMu.RUnlock()
	if _, err := c.checkOrderBy(p); err != nil {
		return QueryResult{Charge: ru.Miss()}, err
	}
	opts.Vectors, opts.FullText = c.search.vectors, c.search.fullText
	ranges := []epk.Range{r}
	if keys, ok := p.PartitionKeys(c.paths, opts.Params); ok {
		ranges = c.keyRanges(keys, r)
	}
	if opts.UDF == nil {
		opts.UDF = c.udfs()
	}
	src := &partitionSource{ranges: ranges, index: c.policy(), c: c, rc: rc}
	var local []*partition.Partition
	src.parts, local = c.queryParts(ranges)
	if rc.Level == Session {
		src.parts, local = c.sessionParts(src.parts, rc)
	}
	prioritize(src.parts, pri)
	if err := c.admit(pri, local...); err != nil {
		return QueryResult{}, err
	}
	page, err := p.Run(src, opts)
	res := QueryResult{Page: page, Partitions: map[uint32]uint64{}}
	for _, part := range src.parts {
		res.Partitions[part.ID()] = part.lsn()
	}
	res.Charge = ru.Query(page.Stats.ItemsLoaded, page.Stats.BytesLoaded, page.Stats.Results, len(src.parts)) * rc.readFactor()
	if len(local) > 0 {
		// Their share: a partition held elsewhere is charged where it is read (serveRead).
		spend(res.Charge*float64(len(local))/float64(len(src.parts)), pri, local...)
	}
	return res, err
}

// PartitionRange returns the EPK range of the partition with the given id, or 410/1002 when
// no such partition exists any more (it was split): the client must re-read the ranges.
func (c *Container) PartitionRange(id uint32) (epk.Range, error) {
	rt := c.routes.Load()
	for _, p := range rt.parts {
		if p.ID() == id {
			return p.Range(), nil
		}
	}
	for _, rr := range rt.remote {
		if rr.id == id {
			return rr.r, nil
		}
	}
	return epk.Range{}, fault.RangeGone()
}

// keyRanges turns the partition key values a query pins into sorted, disjoint EPK ranges
// within r.
func (c *Container) keyRanges(keys [][]value.Value, r epk.Range) []epk.Range {
	var out []epk.Range
	for _, k := range keys {
		key := make(epk.Key, len(k))
		for i, v := range k {
			switch v.Kind() {
			case value.String:
				key[i] = epk.String(v.Str())
			case value.Number:
				key[i] = epk.Number(v.Num())
			case value.Boolean:
				key[i] = epk.Bool(v.Bool())
			default:
				key[i] = epk.Null()
			}
		}
		kr, err := c.KeyRange(key)
		if err != nil {
			return []epk.Range{r} // an unusable key: read everything, the WHERE still filters
		}
		kr.Min, kr.Max = max(kr.Min, r.Min), min(kr.Max, r.Max)
		if kr.Min < kr.Max {
			out = append(out, kr)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Min < out[j].Min })
	merged := out[:0]
	for _, kr := range out {
		if n := len(merged); n > 0 && kr.Min <= merged[n-1].Max {
			merged[n-1].Max = max(merged[n-1].Max, kr.Max)
			continue
		}
		merged = append(merged, kr)
	}
	return merged
}

// partitionSource reads ranges of EPKs (sorted, disjoint) across the partitions that hold
// them, in item order: partitions in range order, each in creation order.
type partitionSource struct {
	ranges []epk.Range
	parts  []queryPart // sorted by range
	index  *indexing.Policy
	c      *Container
	rc     ReadConsistency
}

// at is the reader of local partition p at the query's consistency.
func (s *partitionSource) at(p *partition.Partition) partition.Reader { return s.c.reader(p, s.rc) }

// queryParts are the partitions that hold some of ranges, in range order, and which of them
// are this node's replicas.
func (c *Container) queryParts(ranges []epk.Range) (parts []queryPart, local []*partition.Partition) {
	overlaps := func(pr epk.Range) bool {
		return slices.ContainsFunc(ranges, func(kr epk.Range) bool { return pr.Max > kr.Min && pr.Min < kr.Max })
	}
	rt := c.routes.Load()
	for _, p := range rt.parts {
		if overlaps(p.Range()) {
			parts = append(parts, queryPart{local: p})
			local = append(local, p)
		}
	}
	if len(rt.remote) == 0 {
		return parts, local
	}
	for _, rr := range rt.remote {
		if overlaps(rr.r) {
			parts = append(parts, queryPart{remote: &remotePart{c: c, rr: rr}})
		}
	}
	slices.SortFunc(parts, func(a, b queryPart) int { return cmp.Compare(a.Range().Min, b.Range().Min) })
	return parts, local
}

// prioritize gives the parts held elsewhere the priority pri of the request they are read
// for: the nodes that hold them admit it.
func prioritize(parts []queryPart, pri ru.Priority) {
	for _, q := range parts {
		if q.remote != nil {
			q.remote.pri = pri
		}
	}
}

// sessionParts replaces, among a Session query's or read feed's parts, each of this node's
// replicas that readsElsewhere by a replica on another node. It returns the parts, and which
// of them are still this node's.
func (c *Container) sessionParts(parts []queryPart, rc ReadConsistency) ([]queryPart, []*partition.Partition) {
	var local []*partition.Partition
	for i, q := range parts {
		p := q.local
		if p == nil {
			continue
		}
		if c.readsElsewhere(p, rc) {
			parts[i] = queryPart{remote: &remotePart{c: c, rr: remoteRange{id: p.ID(), r: p.Range()}}}
			continue
		}
		local = append(local, p)
	}
	return parts, local
}

// readsElsewhere reports whether a read of this node's replica p at rc goes to a replica on
// another node: at Session, when p has not reached the session's tokens within
// partition.SessionWait and another node holds the partition, as a point read does
// (readItem). The local replica may be cut off from its leader, where another can serve.
func (c *Container) readsElsewhere(p *partition.Partition, rc ReadConsistency) bool {
	if rc.Level != Session || c.e.cluster == nil {
		return false
	}
	pc := c.partitionConsistency(p.ID(), rc)
	pc.Refuse = true
	err := p.At(pc).Await()
	return errors.Is(err, partition.ErrSessionNotAvailable) && len(c.holders(remoteRange{id: p.ID()})) > 1
}

// queryPart is a partition a query reads: this node's replica, or one on another node.
type queryPart struct {
	local  *partition.Partition
	remote *remotePart
}

func (q queryPart) Range() epk.Range {
	if q.local != nil {
		return q.local.Range()
	}
	return q.remote.rr.r
}

func (q queryPart) ID() uint32 {
	if q.local != nil {
		return q.local.ID()
	}
	return q.remote.rr.id
}

// lsn is the partition's LSN, for the session token: as of the last batch another node sent
// for a remote one.
func (q queryPart) lsn() uint64 {
	if q.local != nil {
		return q.local.Stats().LSN
	}
	return q.remote.lsn
}

func (s *partitionSource) Scan(from *query.Resume, fn func(query.Position, []byte) (bool, error)) error {
	return s.read(from, "items", nil, func(p *partition.Partition, start uint64, f func(partition.Doc) bool) error {
		return s.at(p).ScanIndexed(s.ranges, start, f) // items kept out of the index are not queried
	}, fn)
}

// read walks the source's partitions in range order, each with scan from the sequence from
// says (a remote one with a remote read of the index range ix, or of its items when nil),
// until fn returns false or an error.
func (s *partitionSource) read(from *query.Resume, what string, ix *query.IndexRange, scan func(p *partition.Partition, start uint64, f func(partition.Doc) bool) error, fn func(query.Position, []byte) (bool, error)) error {
	for _, p := range s.parts {
		pr := p.Range()
		start, ok := from.Start(string(pr.Min), string(pr.Max))
		if !ok {
			continue
		}
		var ferr error
		stopped := false
		f := func(d partition.Doc) bool {
			more, err := fn(query.Position{Min: string(pr.Min), Max: string(pr.Max), Seq: d.Seq}, d.JSON)
			if err != nil || !more {
				ferr, stopped = err, true
				return false
			}
			return true
		}
		var err error
		if p.local != nil {
			err = scan(p.local, start, f)
		} else {
			err = p.remote.read(&nodecall.Read{Index: (*nodecall.IndexRange)(ix), Consistency: consistencyToWire(s.rc)}, s.ranges, start, f)
		}
		if err != nil {
			return readFailed(what, err)
		}
		if stopped {
			return ferr
		}
	}
	return nil
}

// Count answers for a source of one partition that the ranges cover whole: its item count is
// kept exactly with every commit (and computed for the children of a split).
func (s *partitionSource) Count() (int64, bool) {
	if len(s.parts) != 1 {
		return 0, false
	}
	if rp := s.parts[0].remote; rp != nil {
		return rp.count(s.ranges) // where the partition is held
	}
	return countOf(s.at(s.parts[0].local), s.parts[0].local, s.ranges)
}

// countOf is the item count of p when ranges cover it whole and its stored count is exact:
// that count holds expired items, and items kept out of the index.
func countOf(rd partition.Reader, p *partition.Partition, ranges []epk.Range) (int64, bool) {
	if p.Hides() || !p.AllIndexed() {
		return 0, false
	}
	pr := p.Range()
	for _, r := range ranges {
		if r.Min <= pr.Min && r.Max >= pr.Max {
			// A replica's count is as fresh as a read of its items only once it has applied
			// what its group acknowledged (a no-op on a single node).
			if rd.Await() != nil {
				return 0, false // the items are read instead, which refuses as reads do
			}
			return p.Stats().Items, true
		}
	}
	return 0, false
}

// Parts splits the source by physical partition, so that a query can read them in parallel.
func (s *partitionSource) Parts() []query.Reader {
	parts := make([]query.Reader, len(s.parts))
	for i, p := range s.parts {
		parts[i] = &partitionSource{ranges: s.ranges, parts: []queryPart{p}, index: s.index, c: s.c, rc: s.rc}
	}
	return parts
}

// Indexes reports whether the container's range index records path.
func (s *partitionSource) Indexes(path string) bool { return s.index.Indexes(path) }

// ScanIndex reads, in item order, the items of the source's ranges that an index range holds.
// A partition whose index a policy change is rebuilding for the path is scanned whole instead
// (the query checks its WHERE on every item it is given).
func (s *partitionSource) ScanIndex(ir query.IndexRange, from *query.Resume, fn func(query.Position, []byte) (bool, error)) error {
	return s.read(from, "the index", &ir, func(p *partition.Partition, start uint64, f func(partition.Doc) bool) error {
		return scanIndex(s.at(p), p, &ir, s.ranges, start, f)
	}, fn)
}

// scanIndex reads, from rd (a reader of p), the items of ranges from the sequence start that
// the index range ir holds: all those a query may read when p does not trust its index for
// the path (not the items kept out of the index, which a query reads from neither).
func scanIndex(rd partition.Reader, p *partition.Partition, ir *query.IndexRange, ranges []epk.Range, start uint64, f func(partition.Doc) bool) error {
	switch {
	case !p.IndexTrusted(ir.Path):
		return rd.ScanIndexed(ranges, start, f)
	case ir.Values != nil:
		return rd.IndexScanValues(ir.Path, ir.Values, ranges, start, f)
	default:
		return rd.IndexScan(ir.Path, ir.Lo, ir.Hi, ranges, start, f)
	}
}

var _ query.CorpusReader = (*partitionSource)(nil)

// FullTextStats sums the BM25 statistics of the source's partitions from their full-text
// indexes (see query.CorpusReader). It cannot tell when a partition is on another node, or
// cannot tell itself (partition.FullTextStats): the query then reads the items.
func (s *partitionSource) FullTextStats(path string, tokens []string) (query.TextStats, bool, error) {
	out := query.TextStats{Freq: make([]int64, len(tokens))}
	if len(s.ranges) != 1 {
		return out, false, nil // pinned partition key values: not whole partitions
	}
	for _, q := range s.parts {
		if q.local == nil {
			return out, false, nil
		}
		st, ok, err := s.at(q.local).FullTextStats(path, tokens, s.ranges[0])
		if err != nil {
			return out, false, readFailed("the full-text index", err)
		}
		if !ok {
			return out, false, nil
		}
		out.Items += st.Items
		out.Tokens += st.Tokens
		for i, n := range st.Freq {
			out.Freq[i] += n
		}
	}
	return out, true, nil
}

// ScanOrdered lists a single partition's items in the order of their value at path, from its
// range index, when the index can give that order (see query.OrderedReader). A partition on
// another node cannot (its items are sorted here instead).
func (s *partitionSource) ScanOrdered(scan query.OrderedScan, fn func(query.Position, []byte, []byte) (bool, error)) (bool, error) {
	if len(s.parts) != 1 || len(s.ranges) != 1 || s.parts[0].local == nil || !s.index.Indexes(scan.Path) || !s.parts[0].local.IndexTrusted(scan.Path) {
		return false, nil
	}
	p := s.parts[0].local
	pr := p.Range()
	var ferr error
	r := partition.OrderedRead{Path: scan.Path, Range: s.ranges[0], Desc: scan.Desc, From: scan.From, To: scan.To, Resume: scan.Resume, Need: scan.Need}
	if scan.After != nil {
		r.Passed = scan.After.Passed(string(pr.Min), string(pr.Max))
	}
	ok, err := s.at(p).IndexOrdered(r, func(d partition.Doc, indexed []byte) bool {
		more, err := fn(query.Position{Min: string(pr.Min), Max: string(pr.Max), Seq: d.Seq}, d.JSON, indexed)
		if err != nil {
			ferr = err
		}
		return more && err == nil
	})
	if err != nil {
		return ok, fault.New(fault.Internal, "reading the index: %w", err)
	}
	return ok, ferr
}

// SearchVectors finds a single partition's items nearest vec from its vector index over path
// (see query.VectorSearcher). A partition on another node, or one without a complete index for
// path, answers ok false: the query reads its items.
func (s *partitionSource) SearchVectors(path string, vec []float32, distance string, k, listSize int, fn func(query.Position, []byte) (bool, error)) (bool, error) {
	if len(s.parts) != 1 || len(s.ranges) != 1 || s.parts[0].local == nil {
		return false, nil
	}
	p := s.parts[0].local
	pr := p.Range()
	var ferr error
	ok, err := s.at(p).SearchVectors(partition.VectorSearch{Path: path, Vector: vec, Distance: distance, K: k, ListSize: listSize}, s.ranges[0], func(d partition.Doc, _ float64) bool {
		more, err := fn(query.Position{Min: string(pr.Min), Max: string(pr.Max), Seq: d.Seq}, d.JSON)
		if err != nil {
			ferr = err
		}
		return more && err == nil
	})
	if err != nil {
		return ok, readFailed("the vector index", err)
	}
	return ok, ferr
}

// readFailed is the error of a read of what (items, the index) that failed: its own when it
// has a kind (a replica that cannot serve the read answers 503, and the client retries), an
// internal one otherwise.
func readFailed(what string, err error) error {
	var f *fault.Error
	if errors.As(err, &f) {
		return f
	}
	return fault.New(fault.Internal, "reading %s: %w", what, err)
}
