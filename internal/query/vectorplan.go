package query

import "github.com/partita-db/partita/internal/value"

// VectorSearcher is a part of a source that can find its items nearest a vector from a vector
// index over a path (an approximate one: quantizedFlat or diskANN).
type VectorSearcher interface {
	// SearchVectors calls fn with up to k items whose vector at path (a term path) is nearest
	// vec by the distance function, nearest first, searching with a candidate list of
	// listSize (0: the index's default for k). ok is false, before fn is called, when the
	// part has no index over path for that distance function that covers its items.
	SearchVectors(path string, vec []float32, distance string, k, listSize int, fn func(pos Position, doc []byte) (bool, error)) (ok bool, err error)
}

// maxVectorCandidates bounds how many candidates a part's vector index is asked for when a
// filter keeps fewer than TOP of them: past it the part is read whole, which the filter then
// narrows exactly.
const maxVectorCandidates = 4096

// fromVectorIndex answers a vector search (SELECT TOP k ... ORDER BY VectorDistance(c.path,
// vector)) from the parts' vector indexes: each part gives its nearest candidates, the query's
// WHERE, projection and exact scores run on them as on any item, and the parts' best k are
// merged. When a filter leaves fewer than k of a part's candidates, the part is asked for four
// times as many, and read whole past maxVectorCandidates; a part without an index for the
// search is read whole too. ok is false when the query is not such a search: the caller then
// reads every item.
func (p *Prepared) fromVectorIndex(ev *evaluator, src Reader, noIndex bool) (all []value.Value, ok bool, err error) {
	q := p.q
	s, isSplit := src.(Splitter)
	if noIndex || !isSplit || p.derived != nil || p.grouped || q.Select.Distinct || q.Select.Top == nil || q.Offset != nil ||
		q.From == nil || len(q.From.Joins) > 0 || q.From.Source.In || len(q.OrderBy) != 1 {
		return nil, false, nil
	}
	if _, ok := q.From.Source.Expr.(Ident); !ok {
		return nil, false, nil
	}
	o := q.OrderBy[0]
	c, isCall := o.Expr.(Call)
	if !isCall || c.UDF || c.Name != "VECTORDISTANCE" {
		return nil, false, nil
	}
	segs, isPath := rootPath(c.Args[0], q.From.Source.Alias)
	if !isPath {
		return nil, false, nil
	}
	if len(c.Args) >= 3 {
		if brute, err := ev.eval(c.Args[2], nil); err != nil || brute.Kind() != value.Boolean || brute.Bool() {
			return nil, false, err // brute force asked for (or not a constant): read every item
		}
	}
	opts := value.Undef()
	if len(c.Args) == 4 {
		if opts, err = ev.eval(c.Args[3], nil); err != nil {
			return nil, false, err
		}
	}
	settings, err := ev.vectorSettings(c, opts)
	if err != nil {
		return nil, false, err
	}
	emb, declared := ev.env.Vectors.Lookup(segs)
	if !declared || emb.DataType != settings.dataType || o.Directed && o.Desc != settings.mostSimilarFirst() {
		return nil, false, nil
	}
	qv, err := ev.eval(c.Args[1], nil)
	if err != nil {
		return nil, false, err
	}
	vec, isVec := vectorValue(qv, settings.dataType)
	k := p.count(ev, q.Select.Top)
	if !isVec || k == 0 {
		return nil, false, nil
	}
	path := value.TermPath(segs)
	merged := &partial{}
	used := false
	for _, part := range s.Parts() {
		vs, can := part.(VectorSearcher)
		if !can {
			return nil, false, nil
		}
		var pa *partial
		for want := k; ; want *= 4 {
			found := 0
			pa, err = p.gather(ev, func(emit func(row) (bool, error)) error {
				ok, err := vs.SearchVectors(path, vec, settings.distance, want, settings.listMultiplier*want, func(pos Position, doc []byte) (bool, error) {
					found++
					ev.stats.ItemsLoaded++
					v, err := p.decode(ev, pos, doc)
					if err != nil {
						return false, err
					}
					return true, p.rows(ev, v, emit)
				})
				if err == nil && !ok {
					found = -1
				}
				return err
			})
			switch {
			case err != nil:
				return nil, false, err
			case found >= 0 && (len(pa.results) >= k || found < want):
				// enough passed the filter, or the index has no more to give
				used = true
			case found < 0 || want*4 > maxVectorCandidates:
				// no index here, or a filter too narrow for one: read the part's items
				if pa, err = p.gather(ev, p.scanInput(ev, part)); err != nil {
					return nil, false, err
				}
			default:
				continue
			}
			break
		}
		merged.merge(pa)
	}
	if used {
		ev.stats.Index.Vector = path
	}
	all, err = p.finish(ev, merged)
	return all, err == nil, err
}
