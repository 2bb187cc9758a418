package query

import (
	"strings"

	"github.com/partita-db/partita/internal/value"
)

// grouper accumulates rows into groups (one group when there is no GROUP BY) and computes
// each group's aggregates.
type grouper struct {
	p      *Prepared
	ev     *evaluator
	order  []string
	groups map[string]*group
}

type group struct {
	first row // the group's first row, for the non-aggregate parts of the projection
	acc   []accumulator
}

func newGrouper(p *Prepared, ev *evaluator) *grouper {
	return &grouper{p: p, ev: ev, groups: map[string]*group{}}
}

func (g *grouper) add(r row) error {
	var key strings.Builder
	for _, e := range g.p.q.GroupBy {
		v, err := g.ev.eval(e, r)
		if err != nil {
			return err
		}
		key.WriteString(value.Key(v))
		key.WriteByte(0)
	}
	k := key.String()
	gr := g.groups[k]
	if gr == nil {
		gr = &group{first: r, acc: make([]accumulator, len(g.p.aggs))}
		g.groups[k] = gr
		g.order = append(g.order, k)
	}
	for i, a := range g.p.aggs {
		v, err := g.ev.eval(a.arg, r)
		if err != nil {
			return err
		}
		gr.acc[i].add(a.name, v)
	}
	return nil
}

// merge adds other's groups into g: the aggregates of groups with the same key combine, and
// a group keeps the first row of the part that saw it first (parts are merged in key order).
func (g *grouper) merge(other *grouper) {
	for _, k := range other.order {
		og := other.groups[k]
		gr := g.groups[k]
		if gr == nil {
			g.groups[k] = og
			g.order = append(g.order, k)
			continue
		}
		for i := range gr.acc {
			gr.acc[i].merge(g.p.aggs[i].name, &og.acc[i])
		}
	}
}

// each calls fn with every group's first row while the evaluator holds that group's
// aggregates. Without GROUP BY there is always exactly one group, even over no rows.
func (g *grouper) each(fn func(row) error) error {
	if len(g.p.q.GroupBy) == 0 && len(g.order) == 0 {
		g.order = append(g.order, "")
		g.groups[""] = &group{acc: make([]accumulator, len(g.p.aggs))}
	}
	for _, k := range g.order {
		gr := g.groups[k]
		g.ev.aggs = make([]value.Value, len(gr.acc))
		for i := range gr.acc {
			g.ev.aggs[i] = gr.acc[i].result(g.p.aggs[i].name)
		}
		if err := fn(gr.first); err != nil {
			return err
		}
	}
	g.ev.aggs = nil
	return nil
}

// accumulator is the running state of one aggregate.
type accumulator struct {
	count   int
	sum     float64
	invalid bool // SUM/AVG saw a defined non-number
	best    value.Value
	has     bool
}

func (a *accumulator) add(name string, v value.Value) {
	switch name {
	case "COUNT":
		if !v.IsUndefined() {
			a.count++
		}
	case "COUNTIF":
		if v.IsTrue() {
			a.count++
		}
	case "SUM", "AVG":
		switch {
		case v.Kind() == value.Number:
			a.sum += v.Num() // plainly, in item order, as Cosmos sums
			a.count++
		case !v.IsUndefined():
			a.invalid = true
		}
	case "MIN", "MAX":
		if v.IsUndefined() || v.Kind() == value.Array || v.Kind() == value.Object {
			return
		}
		c := value.Compare(v, a.best)
		if !a.has || name == "MIN" && c < 0 || name == "MAX" && c > 0 {
			a.best, a.has = v, true
		}
	}
}

// merge combines the partial state of the same aggregate over another part of the input.
func (a *accumulator) merge(name string, o *accumulator) {
	a.count += o.count
	a.sum += o.sum
	a.invalid = a.invalid || o.invalid
	if o.has {
		c := value.Compare(o.best, a.best)
		if !a.has || name == "MIN" && c < 0 || name == "MAX" && c > 0 {
			a.best, a.has = o.best, true
		}
	}
}

func (a *accumulator) result(name string) value.Value {
	switch name {
	case "COUNT", "COUNTIF":
		return value.Num(float64(a.count))
	case "SUM":
		if a.invalid {
			return value.Undef()
		}
		return value.Num(a.sum)
	case "AVG":
		if a.invalid || a.count == 0 {
			return value.Undef()
		}
		return value.Num((a.sum) / float64(a.count))
	}
	if !a.has {
		return value.Undef()
	}
	return a.best
}
