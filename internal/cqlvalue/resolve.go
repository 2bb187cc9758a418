package cqlvalue

import (
	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/fault"
)

// UDTResolver finds a user type by keyspace (empty when the statement did not name one) and
// name; it returns an error (an *cql.InvalidError, such as "Unknown type ks.name") when there is
// none. The *Type it returns is not modified.
type UDTResolver func(keyspace, name string) (*Type, error)

// FromAST resolves a type as the parser gives it, enforcing the rules Cassandra (3.11/4)
// enforces on types, with its messages:
//
//   - frozen<> only on collections, tuples and user types, and it freezes everything inside;
//   - a collection that is not frozen may not hold a collection or user type that is not
//     frozen (frozen<list<list<int>>> is fine: freezing reaches inside);
//   - counters nowhere inside collections or tuples (counter is only a column's own type);
//   - durations not in sets nor as map keys (they have no order);
//   - tuple components are frozen.
//
// udt may be nil when user types are not supported: any user type is then unknown.
func FromAST(t *cql.Type, udt UDTResolver) (*Type, error) {
	return resolve(t, udt, false)
}

func resolve(t *cql.Type, udt UDTResolver, frozen bool) (*Type, error) {
	switch t.Kind {
	case cql.TypeNative:
		k, ok := nativeByName[t.Name]
		if !ok {
			return nil, cql.Invalid(fault.Pos{}, "Unknown type %s", t.Name)
		}
		return Native(k), nil
	case cql.TypeFrozen:
		inner := t.Args[0]
		if inner.Kind == cql.TypeNative {
			return nil, cql.Invalid(fault.Pos{}, "frozen<> is only allowed on collections, tuples, and user-defined types (got %s)", inner)
		}
		return resolve(inner, udt, true)
	case cql.TypeList, cql.TypeSet, cql.TypeMap:
		return resolveCollection(t, udt, frozen)
	case cql.TypeTuple:
		r := &Type{Kind: Tuple, Frozen: true, Elems: make([]*Type, len(t.Args))}
		for i, a := range t.Args {
			if isCounter(a) {
				return nil, cql.Invalid(fault.Pos{}, "Counters are not allowed inside tuples")
			}
			e, err := resolve(a, udt, true)
			if err != nil {
				return nil, err
			}
			r.Elems[i] = e
		}
		return r, nil
	case cql.TypeUser:
		if udt == nil {
			return nil, cql.Invalid(fault.Pos{}, "Unknown type %s", t)
		}
		u, err := udt(t.Keyspace, t.Name)
		if err != nil {
			return nil, err
		}
		if frozen {
			return FrozenOf(u), nil
		}
		c := *u
		c.Frozen = false
		return &c, nil
	}
	return nil, cql.Invalid(fault.Pos{}, "Unknown type %s", t)
}

func resolveCollection(t *cql.Type, udt UDTResolver, frozen bool) (*Type, error) {
	// shown is how Cassandra prints the type in its messages: frozen<...> when frozen.
	shown := t.String()
	if frozen {
		shown = "frozen<" + shown + ">"
	}
	kind := map[cql.TypeKind]Kind{cql.TypeList: List, cql.TypeSet: Set, cql.TypeMap: Map}[t.Kind]
	for i, a := range t.Args {
		if isCounter(a) {
			return nil, cql.Invalid(fault.Pos{}, "Counters are not allowed inside collections: %s", shown)
		}
		if a.Kind == cql.TypeNative && a.Name == "duration" {
			if kind == Set {
				return nil, cql.Invalid(fault.Pos{}, "Durations are not allowed inside sets: %s", shown)
			}
			if kind == Map && i == 0 {
				return nil, cql.Invalid(fault.Pos{}, "Durations are not allowed as map keys: %s", shown)
			}
		}
		if !frozen {
			switch a.Kind {
			case cql.TypeList, cql.TypeSet, cql.TypeMap:
				return nil, cql.Invalid(fault.Pos{}, "Non-frozen collections are not allowed inside collections: %s", shown)
			case cql.TypeUser:
				return nil, cql.Invalid(fault.Pos{}, "Non-frozen UDTs are not allowed inside collections: %s", shown)
			}
		}
	}
	r := &Type{Kind: kind, Frozen: frozen, Elems: make([]*Type, len(t.Args))}
	for i, a := range t.Args {
		e, err := resolve(a, udt, frozen)
		if err != nil {
			return nil, err
		}
		r.Elems[i] = e
	}
	return r, nil
}

func isCounter(t *cql.Type) bool { return t.Kind == cql.TypeNative && t.Name == "counter" }
