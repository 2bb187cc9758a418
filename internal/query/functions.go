package query

import (
	"math"
	"time"

	"github.com/partita-db/partita/internal/fulltext"
	"github.com/partita-db/partita/internal/searchpolicy"
	"github.com/partita-db/partita/internal/value"
)

// This file holds the registry of scalar built-in functions and the argument helpers the
// families share. The families live in functions_math.go, functions_string.go,
// functions_array.go, functions_type.go, functions_date.go and functions_spatial.go.
//
// The rule that shapes every function here is Cosmos's: a built-in given an argument of the
// wrong type does not fail the query, it returns undefined (LOWER(5), ABS("x")). Arity is
// the one thing checked up front, by the planner, from minArgs and maxArgs. Aggregates
// (COUNT, SUM, AVG, MIN, MAX, COUNTIF) are the evaluator's, not registered here.

// Env is what functions may depend on beyond their arguments.
type Env struct {
	Now time.Time // the query's single "current time", fixed for the whole query
	// UDF calls the container's user-defined function name (udf.name(...)); nil when the
	// query runs where there are none.
	UDF func(name string, args []value.Value) (value.Value, error)
	// Vectors and FullText are the container's search policies (nil for none): the distance
	// function and language of the paths that search functions read (search.go).
	Vectors  *searchpolicy.VectorPolicy
	FullText *searchpolicy.FullTextPolicy
	// corpus are the statistics FullTextScore needs, by corpusKey, gathered before the
	// query runs (gatherCorpus).
	corpus map[string]*fulltext.Corpus
}

// builtin is one scalar system function.
type builtin struct {
	minArgs, maxArgs int // maxArgs < 0: variadic
	fn               func(env *Env, args []value.Value) value.Value
}

// builtins maps the upper-case function name to its implementation.
var builtins = mergeBuiltins(mathFunctions, stringFunctions, arrayFunctions, typeFunctions,
	dateFunctions, spatialFunctions)

// lookupBuiltin returns the function, or false when no such built-in exists.
func lookupBuiltin(name string) (builtin, bool) {
	b, ok := builtins[name]
	return b, ok
}

func mergeBuiltins(families ...map[string]builtin) map[string]builtin {
	all := map[string]builtin{}
	for _, f := range families {
		for name, b := range f {
			if _, dup := all[name]; dup {
				panic("query: built-in " + name + " registered twice")
			}
			all[name] = b
		}
	}
	return all
}

// fixed registers a function that takes exactly n arguments.
func fixed(n int, fn func(*Env, []value.Value) value.Value) builtin {
	return builtin{minArgs: n, maxArgs: n, fn: fn}
}

// ranged registers a function with optional trailing arguments.
func ranged(lo, hi int, fn func(*Env, []value.Value) value.Value) builtin {
	return builtin{minArgs: lo, maxArgs: hi, fn: fn}
}

// variadic registers a function that takes at least lo arguments.
func variadic(lo int, fn func(*Env, []value.Value) value.Value) builtin {
	return builtin{minArgs: lo, maxArgs: -1, fn: fn}
}

// pure adapts a function that needs no Env.
func pure(fn func([]value.Value) value.Value) func(*Env, []value.Value) value.Value {
	return func(_ *Env, args []value.Value) value.Value { return fn(args) }
}

var undef = value.Undef()

// numArg is args[i] when it is a number.
func numArg(args []value.Value, i int) (float64, bool) {
	if i >= len(args) || args[i].Kind() != value.Number {
		return 0, false
	}
	return args[i].Num(), true
}

// strArg is args[i] when it is a string.
func strArg(args []value.Value, i int) (string, bool) {
	if i >= len(args) || args[i].Kind() != value.String {
		return "", false
	}
	return args[i].Str(), true
}

// optBool reads an optional boolean flag: absent means def; present but not a boolean is a
// type error (ok false), which makes the function undefined, as for any mistyped argument.
func optBool(args []value.Value, i int, def bool) (b, ok bool) {
	if i >= len(args) {
		return def, true
	}
	if args[i].Kind() != value.Boolean {
		return false, false
	}
	return args[i].Bool(), true
}

// Cosmos keeps integers as 64-bit values, so an integer argument is any integral number in
// the int64 range. A float64 cannot hold 2^63-1: the literal 9223372036854775807 parses to
// 2^63, which must still count as an integer (IS_INTEGER of it is true in the samples), so the
// upper bound is inclusive and maps to MaxInt64.
const two63 = 9223372036854775808.0

func isInt64(f float64) bool {
	return f == math.Trunc(f) && f >= -two63 && f <= two63
}

func toInt64(f float64) int64 {
	if f >= two63 {
		return math.MaxInt64
	}
	return int64(f)
}

// intArg is args[i] when it is an integral number in the int64 range.
func intArg(args []value.Value, i int) (int64, bool) {
	f, ok := numArg(args, i)
	if !ok || !isInt64(f) {
		return 0, false
	}
	return toInt64(f), true
}

// countArg reads a count or position (LEFT, SUBSTRING, REPLICATE ...): any finite number,
// truncated toward zero and clamped so that arithmetic on it cannot overflow.
func countArg(args []value.Value, i int) (int, bool) {
	f, ok := numArg(args, i)
	if !ok || math.IsNaN(f) {
		return 0, false
	}
	const limit = 1 << 40
	f = math.Trunc(f)
	switch {
	case f > limit:
		return limit, true
	case f < -limit:
		return -limit, true
	}
	return int(f), true
}

func boolV(b bool) value.Value { return value.Bool(b) }

func numV(f float64) value.Value { return value.Num(f) }

func strV(s string) value.Value { return value.Str(s) }
