package cqlvalue

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/fault"
)

// The collection operations of UPDATE and of filtering, on serialized values (protocol v4: an
// int32 count, then each element, or each key then its value, as an int32 length and bytes).
//
// A nil (or empty) collection argument is the null collection, which is also the empty one:
// Cassandra stores no empty collections. Results follow the same rule: an operation that leaves
// a collection empty returns nil, and the caller stores null. Sets and maps are kept sorted by
// Compare of their element (key) type, without duplicates; the inputs are assumed to be so
// (values built by Encode or Normalize are), the arguments of adds and puts need not be.
// Malformed serializations are refused with an *cql.InvalidError.

// Elements returns the elements of a list or set (the keys and values alternately of a map:
// use Entries); nil for the null collection.
func Elements(b []byte) ([][]byte, error) { return split(b, 1) }

// Entries returns the keys and values of a map; nil for the null map.
func Entries(b []byte) (keys, values [][]byte, err error) {
	items, err := split(b, 2)
	if err != nil {
		return nil, nil, err
	}
	for i := 0; i < len(items); i += 2 {
		keys = append(keys, items[i])
		values = append(values, items[i+1])
	}
	return keys, values, nil
}

func split(b []byte, per int) ([][]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	items, err := splitCollection(b, per)
	if err != nil {
		return nil, cql.Invalid(fault.Pos{}, "Invalid collection value: %v", err)
	}
	return items, nil
}

// join serializes items, nil when there are none.
func join(items [][]byte, per int) []byte {
	if len(items) == 0 {
		return nil
	}
	return joinCollection(items, per)
}

// ListAppend is l = l + add.
func ListAppend(list, add []byte) ([]byte, error) {
	a, err := Elements(list)
	if err != nil {
		return nil, err
	}
	b, err := Elements(add)
	if err != nil {
		return nil, err
	}
	return join(append(a, b...), 1), nil
}

// ListPrepend is l = add + l: add's elements, in their order, before l's.
func ListPrepend(list, add []byte) ([]byte, error) { return ListAppend(add, list) }

// ListRemove is l = l - remove: every occurrence of each element of remove goes. Elements are
// matched by their bytes, as Cassandra does. t is the list type.
func ListRemove(t *Type, list, remove []byte) ([]byte, error) {
	return removeElements(list, remove, bytes.Equal)
}

// removeElements drops from the collection c every element that matches one of remove's.
func removeElements(c, remove []byte, match func(a, b []byte) bool) ([]byte, error) {
	a, err := Elements(c)
	if err != nil {
		return nil, err
	}
	r, err := Elements(remove)
	if err != nil {
		return nil, err
	}
	kept := a[:0]
	for _, e := range a {
		if !slices.ContainsFunc(r, func(x []byte) bool { return match(x, e) }) {
			kept = append(kept, e)
		}
	}
	return join(kept, 1), nil
}

// ListGet is l[i]; ok is false when i is out of range.
func ListGet(list []byte, i int64) (v []byte, ok bool, err error) {
	a, err := Elements(list)
	if err != nil || i < 0 || i >= int64(len(a)) {
		return nil, false, err
	}
	return a[i], true, nil
}

// ListSetIndex is l[i] = v, with Cassandra's errors for a null list and an index out of range.
func ListSetIndex(list []byte, i int64, v []byte) ([]byte, error) {
	a, err := Elements(list)
	if err != nil {
		return nil, err
	}
	if len(a) == 0 {
		return nil, cql.Invalid(fault.Pos{}, "Attempted to set an element on a list which is null")
	}
	if i < 0 || i >= int64(len(a)) {
		return nil, cql.Invalid(fault.Pos{}, "List index %d out of bound, list has size %d", i, len(a))
	}
	a[i] = v
	return join(a, 1), nil
}

// ListDeleteIndex is DELETE l[i], with Cassandra's errors.
func ListDeleteIndex(list []byte, i int64) ([]byte, error) {
	a, err := Elements(list)
	if err != nil {
		return nil, err
	}
	if len(a) == 0 {
		return nil, cql.Invalid(fault.Pos{}, "Attempted to delete an element from a list which is null")
	}
	if i < 0 || i >= int64(len(a)) {
		return nil, cql.Invalid(fault.Pos{}, "List index %d out of bound, list has size %d", i, len(a))
	}
	return join(append(a[:i], a[i+1:]...), 1), nil
}

// SetAdd is s = s + add; t is the set type.
func SetAdd(t *Type, set, add []byte) ([]byte, error) {
	a, err := Elements(set)
	if err != nil {
		return nil, err
	}
	b, err := Elements(add)
	if err != nil {
		return nil, err
	}
	return join(sortUnique(t.Elems[0], append(a, b...)), 1), nil
}

// SetRemove is s = s - remove; t is the set type.
func SetRemove(t *Type, set, remove []byte) ([]byte, error) {
	return removeElements(set, remove, func(a, b []byte) bool { return Compare(t.Elems[0], a, b) == 0 })
}

func containsEqual(t *Type, items [][]byte, v []byte) bool {
	for _, it := range items {
		if Compare(t, it, v) == 0 {
			return true
		}
	}
	return false
}

// MapPut is m = m + entries (and m[k] = v, with entries a map of one entry): the entries'
// keys replace those of m; t is the map type.
func MapPut(t *Type, m, entries []byte) ([]byte, error) {
	ks, vs, err := Entries(m)
	if err != nil {
		return nil, err
	}
	ks2, vs2, err := Entries(entries)
	if err != nil {
		return nil, err
	}
	// sortMap keeps the last of equal keys: the new entries come after the old ones.
	keys, vals := sortMap(t.Elems[0], append(ks, ks2...), append(vs, vs2...))
	return join(interleave(keys, vals), 2), nil
}

// MapRemove is m = m - keys, keys being a serialized set of keys (and DELETE m[k], with a set of
// one); t is the map type.
func MapRemove(t *Type, m, keys []byte) ([]byte, error) {
	ks, vs, err := Entries(m)
	if err != nil {
		return nil, err
	}
	r, err := Elements(keys)
	if err != nil {
		return nil, err
	}
	var items [][]byte
	for i, k := range ks {
		if !containsEqual(t.Elems[0], r, k) {
			items = append(items, k, vs[i])
		}
	}
	return join(items, 2), nil
}

// MapGet is m[key]; ok is false when m has no such key. t is the map type.
func MapGet(t *Type, m, key []byte) (v []byte, ok bool, err error) {
	ks, vs, err := Entries(m)
	if err != nil {
		return nil, false, err
	}
	for i, k := range ks {
		if Compare(t.Elems[0], k, key) == 0 {
			return vs[i], true, nil
		}
	}
	return nil, false, nil
}

// Contains is CONTAINS: whether the list or set c has the element v, or the map c the value v.
// t is the collection type.
func Contains(t *Type, c, v []byte) (bool, error) {
	switch t.Kind {
	case List, Set:
		items, err := Elements(c)
		return err == nil && containsEqual(t.Elems[0], items, v), err
	case Map:
		_, vals, err := Entries(c)
		return err == nil && containsEqual(t.Elems[1], vals, v), err
	}
	return false, cql.Invalid(fault.Pos{}, "%s", fmt.Sprintf("Cannot use CONTAINS on non-collection type %s", t))
}

// ContainsKey is CONTAINS KEY: whether the map m has the key k. t is the map type.
func ContainsKey(t *Type, m, k []byte) (bool, error) {
	if t.Kind != Map {
		return false, cql.Invalid(fault.Pos{}, "%s", fmt.Sprintf("Cannot use CONTAINS KEY on non-map type %s", t))
	}
	_, ok, err := MapGet(t, m, k)
	return ok, err
}

func interleave(keys, vals [][]byte) [][]byte {
	items := make([][]byte, 0, 2*len(keys))
	for i := range keys {
		items = append(items, keys[i], vals[i])
	}
	return items
}
