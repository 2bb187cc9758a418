package query

import (
	"iter"
	"sort"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// OrderedReader is a part of a source that can list its items in the order of their value at
// a path, from its range index. With bounds (encoded values [from, to), from a filter on the
// same path) it lists only those. Without, it answers ok false, before calling fn, when its
// index cannot give that order completely (an item has no value there, or an array or object).
type OrderedReader interface {
	ScanOrdered(path string, from, to []byte, desc bool, fn func(pos Position, doc []byte, indexed []byte) (bool, error)) (ok bool, err error)
}

// orderPath is the index path an ORDER BY can be read from: one key on a property of the root,
// over items one for one (no JOIN, grouping or DISTINCT). "" when it cannot.
func (p *Prepared) orderPath() string {
	q := p.q
	if len(q.OrderBy) != 1 || p.grouped || q.Select.Distinct || q.From == nil || len(q.From.Joins) > 0 || q.From.Source.In {
		return ""
	}
	if _, ok := q.From.Source.Expr.(Ident); !ok {
		return ""
	}
	segs, ok := rootPath(q.OrderBy[0].Expr, q.From.Source.Alias)
	if !ok {
		return ""
	}
	return value.TermPath(segs)
}

// ordered reads an ORDER BY query from the parts' range indexes in order, merging the parts
// k ways, and stops after need results (need < 0: all). ok is false when some part's index
// cannot give the order; the caller then reads everything and sorts.
func (p *Prepared) ordered(ev *evaluator, parts []Reader, path string, from, to []byte, need int) (results []result, ok bool, err error) {
	desc := p.q.OrderBy[0].Desc
	type head struct {
		res result
		seq uint64
	}
	var nexts []func() (head, bool)
	var stops []func()
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	okFlags := make([]bool, len(parts))
	errs := make([]error, len(parts))
	for i, part := range parts {
		or, isOrdered := part.(OrderedReader)
		if !isOrdered {
			return nil, false, nil
		}
		// The items of part in index order; runs that the index records equally are sorted
		// by their full key, then by creation, as a full sort would leave them.
		seq := iter.Seq[head](func(yield func(head) bool) {
			var run []head
			var runValue []byte
			flush := func() bool {
				sort.SliceStable(run, func(a, b int) bool {
					if c := value.Compare(run[a].res.keys[0], run[b].res.keys[0]); c != 0 {
						return (c < 0) != desc
					}
					return run[a].seq < run[b].seq
				})
				for _, h := range run {
					if !yield(h) {
						return false
					}
				}
				run = run[:0]
				return true
			}
			stopped := false
			okFlags[i], errs[i] = or.ScanOrdered(path, from, to, desc, func(pos Position, doc []byte, indexed []byte) (bool, error) {
				if len(run) > 0 && string(indexed) != string(runValue) {
					if !flush() {
						stopped = true
						return false, nil
					}
				}
				runValue = append(runValue[:0], indexed...)
				ev.stats.ItemsLoaded++
				ev.stats.BytesLoaded += len(doc)
				v, err := value.Parse(doc)
				if err != nil {
					return false, fault.New(fault.Internal, "stored item %d is not valid JSON: %w", pos.Seq, err)
				}
				err = p.rows(ev, v, func(r row) (bool, error) {
					res, ok, err := p.result(ev, r)
					if ok {
						run = append(run, head{res, pos.Seq})
					}
					return true, err
				})
				return err == nil, err
			})
			if !stopped && errs[i] == nil {
				flush()
			}
		})
		next, stop := iter.Pull(seq)
		nexts = append(nexts, next)
		stops = append(stops, stop)
	}
	heads := make([]head, len(parts))
	live := make([]bool, len(parts))
	for i := range parts {
		heads[i], live[i] = nexts[i]()
		if errs[i] != nil {
			return nil, false, errs[i]
		}
		if !live[i] && !okFlags[i] {
			return nil, false, nil // this part's index cannot give the order
		}
	}
	for need < 0 || len(results) < need {
		best := -1
		for i := range heads {
			if !live[i] {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			c := value.Compare(heads[i].res.keys[0], heads[best].res.keys[0])
			if c != 0 && (c < 0) != desc {
				best = i
			}
		}
		if best < 0 {
			break
		}
		results = append(results, heads[best].res)
		heads[best], live[best] = nexts[best]()
		if errs[best] != nil {
			return nil, false, errs[best]
		}
	}
	return results, true, nil
}
