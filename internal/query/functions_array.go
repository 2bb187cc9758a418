package query

import (
	"sort"

	"github.com/partita-db/partita/internal/value"
)

// Array functions. A first argument that is not an array makes the result undefined
// (ARRAY_LENGTH(null)); element comparisons use deep JSON equality.
var arrayFunctions = map[string]builtin{
	"ARRAY_CONCAT": variadic(2, pure(arrayConcat)),
	"ARRAY_CONTAINS": ranged(2, 3, pure(func(args []value.Value) value.Value {
		partial, ok := optBool(args, 2, false)
		if !ok || args[0].Kind() != value.Array {
			return undef
		}
		return arrayHas(args[0], args[1], partial)
	})),
	"ARRAY_CONTAINS_ANY": variadic(2, pure(arrayContainsMany(false))),
	"ARRAY_CONTAINS_ALL": variadic(2, pure(arrayContainsMany(true))),
	"ARRAY_LENGTH": fixed(1, pure(func(args []value.Value) value.Value {
		if args[0].Kind() != value.Array {
			return undef
		}
		return numV(float64(args[0].Len()))
	})),
	"ARRAY_SLICE":   ranged(2, 3, pure(arraySlice)),
	"CHOOSE":        variadic(2, pure(choose)),
	"OBJECTTOARRAY": ranged(1, 3, pure(objectToArray)),
	"SETINTERSECT":  fixed(2, pure(setIntersect)),
	"SETUNION":      fixed(2, pure(setUnion)),
	"SETDIFFERENCE": fixed(2, pure(setDifference)),
	"SETEQUAL":      fixed(2, pure(setEqual)),
	"ARRAY_MAX":     fixed(1, pure(arrayExtreme(1))),
	"ARRAY_MIN":     fixed(1, pure(arrayExtreme(-1))),
	"ARRAY_SUM":     fixed(1, pure(arraySum)),
	"ARRAY_AVG":     fixed(1, pure(arrayAvg)),
	"ARRAY_MEDIAN":  fixed(1, pure(arrayMedian)),
}

// ARRAY_CONCAT joins two or more arrays; a non-array argument makes it undefined.
func arrayConcat(args []value.Value) value.Value {
	var out []value.Value
	for _, a := range args {
		if a.Kind() != value.Array {
			return undef
		}
		out = append(out, a.Elems()...)
	}
	if out == nil {
		out = []value.Value{}
	}
	return value.Arr(out)
}

// arrayHas is ARRAY_CONTAINS: whether arr has an element equal to v. With partial, an object
// v matches any object element that has all of v's properties with equal values
// (ARRAY_CONTAINS([{category: "shirts", color: "blue"}], {category: "shirts"}, true) is
// true). Searching for undefined is undefined: the comparison has no answer.
func arrayHas(arr, v value.Value, partial bool) value.Value {
	if v.IsUndefined() {
		return undef
	}
	for _, e := range arr.Elems() {
		if matches(e, v, partial) {
			return boolV(true)
		}
	}
	return boolV(false)
}

func matches(e, v value.Value, partial bool) bool {
	if !partial || v.Kind() != value.Object || e.Kind() != value.Object {
		return value.Equal(e, v)
	}
	for _, m := range v.Members() {
		if m.Val.IsUndefined() {
			continue
		}
		if got := e.Get(m.Key); got.IsUndefined() || !value.Equal(got, m.Val) {
			return false
		}
	}
	return true
}

// arrayContainsMany builds ARRAY_CONTAINS_ALL and ARRAY_CONTAINS_ANY: ARRAY_CONTAINS of each
// value, combined with AND or OR in three-valued logic. The reference shows
// ARRAY_CONTAINS_ANY([1, 2, 3, 4], 1, undefined) true but ARRAY_CONTAINS_ANY([1, 2, 3, 4], 5,
// undefined) undefined, and ARRAY_CONTAINS_ALL the mirror image.
func arrayContainsMany(all bool) func([]value.Value) value.Value {
	return func(args []value.Value) value.Value {
		if args[0].Kind() != value.Array {
			return undef
		}
		unknown := false
		for _, v := range args[1:] {
			r := arrayHas(args[0], v, false)
			if r.IsUndefined() {
				unknown = true
				continue
			}
			if r.Bool() != all {
				return r
			}
		}
		if unknown {
			return undef
		}
		return boolV(all)
	}
}

// ARRAY_SLICE(arr, start [, length]): a negative start counts from the end; the slice is
// clamped to the array, and a length of zero or less gives [].
func arraySlice(args []value.Value) value.Value {
	start, ok := countArg(args, 1)
	if !ok || args[0].Kind() != value.Array {
		return undef
	}
	elems := args[0].Elems()
	n := len(elems)
	if start < 0 {
		start = max(n+start, 0)
	}
	start = min(start, n)
	end := n
	if len(args) > 2 {
		l, ok := countArg(args, 2)
		if !ok {
			return undef
		}
		end = min(start+max(l, 0), n)
	}
	return value.Arr(append([]value.Value{}, elems[start:end]...))
}

// CHOOSE(i, e1, e2, ...) is the i-th expression, counting from 1; undefined out of range.
func choose(args []value.Value) value.Value {
	i, ok := intArg(args, 0)
	if !ok || i < 1 || i >= int64(len(args)) {
		return undef
	}
	return args[i]
}

// ObjectToArray(obj [, keyName [, valueName]]) turns each property into {k: name, v: value},
// with the field names replaceable.
func objectToArray(args []value.Value) value.Value {
	obj := args[0]
	if obj.Kind() != value.Object {
		return undef
	}
	kName, vName := "k", "v"
	var ok bool
	if len(args) > 1 {
		if kName, ok = strArg(args, 1); !ok {
			return undef
		}
	}
	if len(args) > 2 {
		if vName, ok = strArg(args, 2); !ok {
			return undef
		}
	}
	out := make([]value.Value, 0, obj.Len())
	for _, m := range obj.Members() {
		if m.Val.IsUndefined() {
			continue
		}
		out = append(out, value.Obj([]value.Member{{Key: kName, Val: strV(m.Key)}, {Key: vName, Val: m.Val}}))
	}
	return value.Arr(out)
}

// valueSet is a set of JSON values under deep equality.
type valueSet map[string]struct{}

func (s valueSet) has(v value.Value) bool {
	_, ok := s[value.Key(v)]
	return ok
}

// add reports whether v was new.
func (s valueSet) add(v value.Value) bool {
	k := value.Key(v)
	if _, ok := s[k]; ok {
		return false
	}
	s[k] = struct{}{}
	return true
}

func setOf(arr value.Value) valueSet {
	s := valueSet{}
	for _, e := range arr.Elems() {
		s.add(e)
	}
	return s
}

func twoArrays(args []value.Value) bool {
	return args[0].Kind() == value.Array && args[1].Kind() == value.Array
}

// SetIntersect(a, b) is the distinct elements of b that are also in a, in b's order: the
// samples give SetIntersect([1, 2, "A", "B"], ["A", 1]) as ["A", 1].
func setIntersect(args []value.Value) value.Value {
	if !twoArrays(args) {
		return undef
	}
	in := setOf(args[0])
	seen := valueSet{}
	out := []value.Value{}
	for _, e := range args[1].Elems() {
		if !e.IsUndefined() && in.has(e) && seen.add(e) {
			out = append(out, e)
		}
	}
	return value.Arr(out)
}

// SetUnion(a, b) is the distinct elements of a, then those of b not yet seen.
func setUnion(args []value.Value) value.Value {
	if !twoArrays(args) {
		return undef
	}
	seen := valueSet{}
	out := []value.Value{}
	for _, arr := range args[:2] {
		for _, e := range arr.Elems() {
			if !e.IsUndefined() && seen.add(e) {
				out = append(out, e)
			}
		}
	}
	return value.Arr(out)
}

// SetDifference(a, b) is the distinct elements of a that are not in b.
func setDifference(args []value.Value) value.Value {
	if !twoArrays(args) {
		return undef
	}
	in := setOf(args[1])
	seen := valueSet{}
	out := []value.Value{}
	for _, e := range args[0].Elems() {
		if !e.IsUndefined() && !in.has(e) && seen.add(e) {
			out = append(out, e)
		}
	}
	return value.Arr(out)
}

// SetEqual(a, b) compares the arrays as sets: order and duplicates do not matter.
func setEqual(args []value.Value) value.Value {
	if !twoArrays(args) {
		return undef
	}
	a, b := setOf(args[0]), setOf(args[1])
	if len(a) != len(b) {
		return boolV(false)
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return boolV(false)
		}
	}
	return boolV(true)
}

// arrayExtreme builds ARRAY_MAX (dir 1) and ARRAY_MIN (dir -1). Elements may be numbers,
// strings, booleans or null, compared across types in the order null < boolean < number <
// string (the documented priority); undefined elements are skipped. An array or object
// element, or no element at all, gives undefined.
func arrayExtreme(dir int) func([]value.Value) value.Value {
	return func(args []value.Value) value.Value {
		if args[0].Kind() != value.Array {
			return undef
		}
		best := undef
		for _, e := range args[0].Elems() {
			switch e.Kind() {
			case value.Undefined:
				continue
			case value.Array, value.Object:
				return undef
			}
			if best.IsUndefined() || value.Compare(e, best)*dir > 0 {
				best = e
			}
		}
		return best
	}
}

// numbersOf is the numbers of an array for ARRAY_SUM, ARRAY_AVG and ARRAY_MEDIAN: undefined
// elements are skipped, and any other non-number makes the function undefined.
func numbersOf(arr value.Value) ([]float64, bool) {
	if arr.Kind() != value.Array {
		return nil, false
	}
	out := make([]float64, 0, arr.Len())
	for _, e := range arr.Elems() {
		switch e.Kind() {
		case value.Undefined:
		case value.Number:
			out = append(out, e.Num())
		default:
			return nil, false
		}
	}
	return out, true
}

func arraySum(args []value.Value) value.Value {
	xs, ok := numbersOf(args[0])
	if !ok {
		return undef
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return numV(s)
}

func arrayAvg(args []value.Value) value.Value {
	xs, ok := numbersOf(args[0])
	if !ok || len(xs) == 0 {
		return undef
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return numV(s / float64(len(xs)))
}

// ARRAY_MEDIAN is the middle value, or the mean of the two middle values.
func arrayMedian(args []value.Value) value.Value {
	xs, ok := numbersOf(args[0])
	if !ok || len(xs) == 0 {
		return undef
	}
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return numV(xs[n/2])
	}
	return numV((xs[n/2-1] + xs[n/2]) / 2)
}
