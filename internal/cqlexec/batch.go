package cqlexec

import (
	"context"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/fault"
)

// A batch's statements share one write time. Those that write one partition of one table are
// applied as one command, so they are atomic and isolated together, conditions included; a
// batch over several partitions applies each partition's part atomically, one after the other
// (Cassandra's logged batches promise that every part is eventually applied, not isolation).

// batchPlan is a checked BEGIN BATCH ... APPLY BATCH sent as one statement.
type batchPlan struct {
	kind  cql.BatchKind
	using cql.Using
	parts []*writePlan
}

// analyzeBatch checks a batch statement.
func analyzeBatch(sch *schema, s *Session, p *Prepared, st *cql.Batch) error {
	p.Params = make([]Column, len(st.Markers()))
	bp := &batchPlan{kind: st.Kind, using: st.Using}
	for _, sub := range st.Statements {
		wp, err := planWrite(sch, s, p, sub)
		if err != nil {
			return err
		}
		if wp.using.Timestamp != nil && st.Using.Timestamp != nil {
			return cql.Invalid(fault.Pos{}, "Timestamp must be set either on BATCH or individual statements")
		}
		bp.parts = append(bp.parts, wp)
	}
	if err := checkBatch(st.Kind, bp.parts); err != nil {
		return err
	}
	if st.Using.Timestamp != nil {
		typeMarkers(p, nil, st.Using.Timestamp, cqlvalue.Native(cqlvalue.Bigint), "[timestamp]")
	}
	p.plan = bp
	for _, wp := range bp.parts {
		if wp.conditional() {
			p.Columns = lwtColumns(wp)
		}
	}
	return nil
}

// checkBatch applies the rules on what a batch of kind may hold.
func checkBatch(kind cql.BatchKind, parts []*writePlan) error {
	var cond *writePlan
	for _, wp := range parts {
		switch {
		case kind == cql.BatchCounter && !wp.t.counter:
			return cql.Invalid(fault.Pos{}, "Cannot include non-counter statement in a counter batch")
		case kind != cql.BatchCounter && wp.t.counter:
			return cql.Invalid(fault.Pos{}, "Cannot include a counter statement in a logged batch")
		}
		if wp.conditional() {
			if cond != nil && cond.t != wp.t {
				return cql.Invalid(fault.Pos{}, "Batch with conditions cannot span multiple tables")
			}
			cond = wp
		}
	}
	return nil
}

// executeBatchStatement runs a prepared BEGIN BATCH statement.
func (x *Executor) executeBatchStatement(s *Session, p *Prepared, o Options) (*Result, error) {
	bp := p.plan.(*batchPlan)
	b, err := newBinder(p, o.Values, o.Names)
	if err != nil {
		return nil, err
	}
	binders := make([]*binder, len(bp.parts))
	for i := range binders {
		binders[i] = b
	}
	ts, err := x.writeTime(b, bp.using, o)
	if err != nil {
		return nil, err
	}
	return x.runBatch(o.ctx(), bp.parts, binders, ts)
}

// executeBatch runs a BATCH message's entries.
func (x *Executor) executeBatch(s *Session, kind cql.BatchKind, entries []BatchEntry, o Options) (*Result, error) {
	var parts []*writePlan
	var binders []*binder
	for _, e := range entries {
		wp, ok := e.Prepared.plan.(*writePlan)
		if !ok {
			return nil, cql.Invalid(fault.Pos{}, "Only INSERT, UPDATE and DELETE statements are allowed in a batch, not %q", e.Prepared.Text)
		}
		b, err := newBinder(e.Prepared, e.Values, nil)
		if err != nil {
			return nil, err
		}
		parts = append(parts, wp)
		binders = append(binders, b)
	}
	if err := checkBatch(kind, parts); err != nil {
		return nil, err
	}
	ts := o.Timestamp
	if !o.HasTimestamp {
		ts = x.timestamp()
	}
	return x.runBatch(o.ctx(), parts, binders, ts)
}

// partKey groups a batch's mutations: one table's partition.
type partKey struct {
	t   *table
	key string
}

// runBatch binds every statement and applies the mutations partition by partition.
func (x *Executor) runBatch(ctx context.Context, parts []*writePlan, binders []*binder, ts int64) (*Result, error) {
	groups := map[partKey]*mutation{}
	var order []partKey
	conditional := false
	for i, wp := range parts {
		if err := x.fresh(wp.t); err != nil {
			return nil, err
		}
		wts := ts
		if wp.using.Timestamp != nil {
			var err error
			if wts, err = x.writeTime(binders[i], wp.using, Options{Timestamp: ts, HasTimestamp: true}); err != nil {
				return nil, err
			}
		}
		muts, err := x.mutations(binders[i], wp, wts)
		if err != nil {
			return nil, err
		}
		conditional = conditional || wp.conditional()
		for _, m := range muts {
			k := partKey{t: wp.t, key: string(m.pl.prefix)}
			g := groups[k]
			if g == nil {
				groups[k] = m
				order = append(order, k)
				continue
			}
			g.rows = append(g.rows, m.rows...)
			g.spans = append(g.spans, m.spans...)
			g.conds = append(g.conds, m.conds...)
		}
	}
	if conditional && len(order) > 1 {
		return nil, cql.Invalid(fault.Pos{}, "Batch with conditions cannot span multiple partitions")
	}
	res := &Result{Kind: ResultVoid}
	if len(order) > 1 { // all or nothing (dryrun.go)
		for _, k := range order {
			charge, err := x.dryRun(k.t, []*mutation{groups[k]})
			res.Charge += charge
			if err != nil {
				return nil, err
			}
		}
	}
	for _, k := range order {
		r, err := x.apply(ctx, k.t, []*mutation{groups[k]}, conditional)
		if err != nil {
			return nil, err
		}
		charge := res.Charge + r.Charge
		if r.Kind == ResultRows {
			res = r
		}
		res.Charge = charge
	}
	return res, nil
}
