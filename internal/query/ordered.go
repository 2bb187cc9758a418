package query

import (
	"encoding/json"
	"iter"
	"math"
	"sort"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// OrderedReader is a part of a source that can list its items in the order of their value at
// a path, from its range index (see OrderedScan). Without From, it answers ok false, before
// calling fn, when its index cannot give that order completely (an item has no value there,
// or an array or object), or when reading its items and sorting them costs less.
type OrderedReader interface {
	ScanOrdered(s OrderedScan, fn func(pos Position, doc []byte, indexed []byte) (bool, error)) (ok bool, err error)
}

// OrderedScan is what an OrderedReader lists.
type OrderedScan struct {
	Path string
	Desc bool
	// From and To, when From is not nil, are the encoded values [From, To) a filter on Path
	// allows; the reader lists only those.
	From, To []byte
	// Resume, when not nil, is the encoded value where the previous page stopped: the reader
	// starts there (ends there, descending), that value included.
	Resume []byte
	// After, with Resume, is the position of the previous page's last item when the index
	// records its value alone (value.IndexedAlone; nil otherwise): of the items of value
	// Resume, the reader may leave out those the pages up to it returned (After.Passed).
	After *Position
	// Need is how many items the caller wants at most (0: all).
	Need int
}

// orderAt is the position of an ORDER BY result read from the index, where the next page
// resumes: its key's value, the EPK range of its partition and its sequence there. Results
// come in order of key, then of partition, then of sequence (ties keep item order), so a
// position names one place in that order even after writes; and after splits, which only
// reorder ties within what was the position's partition.
type orderAt struct {
	Key json.RawMessage `json:"v"`
	Min []byte          `json:"m"` // bytes, not strings: an EPK need not be UTF-8
	Max []byte          `json:"x"`
	Seq uint64          `json:"q"`
	// key is Key parsed and pos Min, Max and Seq as a Position, set by ordered.
	key value.Value
	pos Position
}

// before reports whether a result of key k at pos comes at or before at, in the order of a
// query whose ORDER BY is descending when desc: so whether the pages up to at returned it.
func (at *orderAt) before(k value.Value, pos Position, desc bool) bool {
	c := value.Compare(k, at.key)
	if desc {
		c = -c
	}
	if c != 0 {
		return c < 0
	}
	return pos.Seq <= at.pos.Passed(pos.Min, pos.Max)
}

// Passed is how far the results up to at went among the items of at's value in the partition
// of EPK range [min, max): those of sequence at most Passed came (0: none, math.MaxUint64:
// all). Results of equal value come in order of partition range, then of sequence; so in at's
// partition, or (after a split) one of its parts, or one that holds it, up to at's sequence.
func (at Position) Passed(min, max string) uint64 {
	switch {
	case max <= at.Min:
		return math.MaxUint64 // a partition before at's
	case min >= at.Max:
		return 0 // a partition after at's
	}
	return at.Seq
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
// k ways, and stops after need results (need < 0: all), each with its position. With after,
// it reads from there on: the results at or before after are passed over. ok is false when
// some part's index cannot give the order; the caller then reads everything and sorts.
func (p *Prepared) ordered(ev *evaluator, parts []Reader, path string, from, to []byte, after *orderAt, need int) (results []result, at []Position, ok bool, err error) {
	desc := p.q.OrderBy[0].Desc
	var resume []byte
	var afterPos *Position
	if after != nil {
		if after.key, err = value.Parse(after.Key); err != nil {
			return nil, nil, false, nil // a forged token: read everything
		}
		after.pos = Position{Min: string(after.Min), Max: string(after.Max), Seq: after.Seq}
		resume, _ = value.AppendIndexed(nil, after.key)
		if value.IndexedAlone(after.key) {
			afterPos = &after.pos
		}
	}
	type head struct {
		res result
		pos Position
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
			return nil, nil, false, nil
		}
		// The items of part in index order; runs that the index records equally (long
		// strings with the same prefix) are sorted by their full key, then by creation, as a
		// full sort would leave them.
		seq := iter.Seq[head](func(yield func(head) bool) {
			var run []head
			var runValue []byte
			flush := func() bool {
				sort.SliceStable(run, func(a, b int) bool {
					if c := value.Compare(run[a].res.keys[0], run[b].res.keys[0]); c != 0 {
						return (c < 0) != desc
					}
					return run[a].pos.Seq < run[b].pos.Seq
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
			scan := OrderedScan{Path: path, Desc: desc, From: from, To: to, Resume: resume, After: afterPos, Need: max(need, 0)}
			okFlags[i], errs[i] = or.ScanOrdered(scan, func(pos Position, doc []byte, indexed []byte) (bool, error) {
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
					if ok && (after == nil || !after.before(res.keys[0], pos, desc)) {
						run = append(run, head{res, pos})
					}
					return true, err
				})
				// A run of a value the index records alone holds that value only, in creation
				// order already: pass it on at once.
				if err == nil && len(run) > 0 && value.IndexedAlone(run[0].res.keys[0]) && !flush() {
					stopped = true
					return false, nil
				}
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
			return nil, nil, false, errs[i]
		}
		if !live[i] && !okFlags[i] {
			return nil, nil, false, nil // this part's index cannot give the order
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
		at = append(at, heads[best].pos)
		heads[best], live[best] = nexts[best]()
		if errs[best] != nil {
			return nil, nil, false, errs[best]
		}
	}
	return results, at, true, nil
}
