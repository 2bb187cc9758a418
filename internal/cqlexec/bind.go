package cqlexec

import (
	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/fault"
)

// Bind markers get their types from where they stand, when the statement is prepared: the
// column they are compared with or assigned to, an element of it, or the kind of number a
// clause takes (CQL's "[limit]", "[ttl]", "[timestamp]" pseudo-columns).

// typeMarkers records the type of every marker in term, which stands for a value of typ
// named name, in p.Params.
func typeMarkers(p *Prepared, t *table, term cql.Term, typ *cqlvalue.Type, name string) {
	switch term := term.(type) {
	case *cql.BindMarker:
		col := Column{Name: name, Type: typ}
		if t != nil {
			col.Keyspace, col.Table = t.ks, t.name
		}
		if term.Name != "" {
			col.Name = term.Name
		}
		p.Params[term.Index] = col
	case *cql.List:
		for _, e := range term.Elems {
			typeMarkers(p, t, e, elemType(typ, 0), name)
		}
	case *cql.Set:
		for _, e := range term.Elems {
			typeMarkers(p, t, e, elemType(typ, 0), name)
		}
	case *cql.Map:
		for _, e := range term.Entries {
			typeMarkers(p, t, e.Key, elemType(typ, 0), name)
			typeMarkers(p, t, e.Value, elemType(typ, 1), name)
		}
	case *cql.Tuple:
		for i, e := range term.Elems {
			typeMarkers(p, t, e, elemType(typ, i), name)
		}
	case *cql.TypeHint:
		typeMarkers(p, t, term.Term, typ, name)
	case *cql.FuncCall:
		for _, a := range term.Args {
			typeMarkers(p, t, a, typ, name)
		}
	}
}

// elemType is typ's i-th element type, or typ itself when it has none (a mistake the value's
// encoding reports).
func elemType(typ *cqlvalue.Type, i int) *cqlvalue.Type {
	if typ == nil || i >= len(typ.Elems) {
		return typ
	}
	return typ.Elems[i]
}

// binder resolves bind markers to the values of one execution.
type binder struct {
	p     *Prepared
	vals  []cqlvalue.Value
	names map[string]cqlvalue.Value
}

func newBinder(p *Prepared, values []cqlvalue.Value, names []string) (*binder, error) {
	b := &binder{p: p, vals: values}
	if names != nil {
		if len(names) != len(values) {
			return nil, fault.New(fault.BadRequest, "%d value names for %d values", len(names), len(values))
		}
		b.names = make(map[string]cqlvalue.Value, len(names))
		for i, n := range names {
			b.names[n] = values[i]
		}
		return b, nil
	}
	if len(values) != len(p.Params) {
		return nil, cql.Invalid(fault.Pos{}, "There were %d markers(?) in CQL but %d bound variables", len(p.Params), len(values))
	}
	return b, nil
}

// bind is the value of marker m.
func (b *binder) bind(m *cql.BindMarker) (cqlvalue.Value, error) {
	if b.names == nil {
		return b.vals[m.Index], nil
	}
	name := m.Name
	if name == "" {
		name = b.p.Params[m.Index].Name
	}
	v, ok := b.names[name]
	if !ok {
		return cqlvalue.Value{}, cql.Invalid(fault.Pos{}, "No value for the bind variable %s", name)
	}
	return v, nil
}

// value is term's value as type typ, for column name (in messages).
func (b *binder) value(term cql.Term, typ *cqlvalue.Type, name string) (cqlvalue.Value, error) {
	return cqlvalue.Encode(typ, name, term, b.bind)
}

// int is term's value as an integer of a clause (LIMIT, TTL, TIMESTAMP); ok is false when
// it is unset or null.
func (b *binder) int(term cql.Term, typ *cqlvalue.Type, name string) (n int64, ok bool, err error) {
	v, err := b.value(term, typ, name)
	if err != nil || v.Null || v.Unset {
		return 0, false, err
	}
	n, err = cqlvalue.Int64(typ, v.Bytes)
	return n, err == nil, err
}
