package script

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"github.com/partita-db/partita/internal/fault"
)

// The collection's query chain: Cosmos DB's JavaScript query API, which stored procedures and
// triggers use instead of SQL. Each of filter, map, pluck, sortBy, sortByDescending and
// flatten runs over the documents of the call's logical partition at once, as a query:
//
//	__.filter(function (doc) { return doc.n > 1; }, function (err, feed, options) { ... });
//
// and chain() starts a pipeline of them that value() runs:
//
//	__.chain().filter(pred).sortBy(key).pluck("tags").flatten().value(function (err, feed) { ... });
//
// Each call that runs returns {isAccepted}: false, and nothing runs, once the call has used
// most of its budget, as with every collection operation. The callback gets the results as an
// array and {continuation} when options.pageSize cut them short; passing that continuation
// back (options.continuation) runs the chain again and returns the next page.
//
// The steps run here, in the call's runtime, over the documents a read of the partition
// returns; the service compiles what it can to its index, which changes the cost, not the
// results.

// chainStep is one step of a chain.
type chainStep struct {
	kind    string        // filter, map, pluck, sortBy, sortByDescending or flatten
	fn      goja.Callable // the predicate, transformation or sort key; nil for pluck, flatten
	prop    string        // pluck's property
	shallow bool          // flatten's isShallow
}

// installChain adds the query chain's methods to the collection object coll.
func (v *vm) installChain(coll *goja.Object) {
	for _, kind := range []string{"filter", "map", "pluck", "sortBy", "sortByDescending", "flatten"} {
		_ = coll.Set(kind, func(fc goja.FunctionCall) goja.Value {
			step, rest := v.chainStep(kind, fc.Arguments)
			return v.runChain([]chainStep{step}, rest)
		})
	}
	_ = coll.Set("chain", func(goja.FunctionCall) goja.Value { return v.newChain() })
}

// newChain is the object chain() returns: each step method adds a step and returns it; value()
// runs them.
func (v *vm) newChain() *goja.Object {
	o := v.rt.NewObject()
	var steps []chainStep
	for _, kind := range []string{"filter", "map", "pluck", "sortBy", "sortByDescending", "flatten"} {
		_ = o.Set(kind, func(fc goja.FunctionCall) goja.Value {
			step, _ := v.chainStep(kind, fc.Arguments)
			steps = append(steps, step)
			return o
		})
	}
	_ = o.Set("value", func(fc goja.FunctionCall) goja.Value {
		return v.runChain(slices.Clone(steps), fc.Arguments)
	})
	return o
}

// chainStep reads a step's own argument; the rest are its options and callback.
func (v *vm) chainStep(kind string, args []goja.Value) (chainStep, []goja.Value) {
	arg := goja.Undefined()
	if len(args) > 0 {
		arg = args[0]
	}
	step := chainStep{kind: kind}
	switch kind {
	case "pluck":
		if goja.IsUndefined(arg) || goja.IsNull(arg) {
			panic(v.rt.NewTypeError("pluck needs the name of the property to take"))
		}
		step.prop = arg.String()
	case "flatten":
		if _, isFunc := goja.AssertFunction(arg); isFunc || goja.IsUndefined(arg) {
			return step, args // flatten() or flatten(callback): deep
		}
		if o, ok := arg.(*goja.Object); ok && o.ClassName() == "Object" {
			return step, args // flatten(options, ...)
		}
		step.shallow = arg.ToBoolean()
	case "sortBy", "sortByDescending":
		if goja.IsUndefined(arg) {
			return step, args // the values themselves
		}
		fallthrough
	default:
		fn, ok := goja.AssertFunction(arg)
		if !ok {
			panic(v.rt.NewTypeError(kind + " needs a function"))
		}
		step.fn = fn
	}
	if len(args) == 0 {
		return step, nil
	}
	return step, args[1:]
}

// runChain runs steps over the partition's documents and hands the results to the callback
// among rest (after the options, if any).
func (v *vm) runChain(steps []chainStep, rest []goja.Value) goja.Value {
	coll := v.data()
	opts, cb := v.chainOptions(rest)
	accepted := v.rt.NewObject()
	if !v.current().accept() {
		_ = accepted.Set("isAccepted", false)
		return accepted
	}
	_ = accepted.Set("isAccepted", true)
	fo := feedOptions(opts)
	skip, err := chainOffset(fo.Continuation)
	var out []goja.Value
	if err == nil {
		out, err = v.chainInput(coll)
	}
	if err != nil {
		v.finish(cb, err, nil)
		return accepted
	}
	for _, s := range steps {
		out = v.chainApply(s, out)
	}
	next := ""
	switch {
	case skip >= len(out):
		out = nil
	case fo.PageSize > 0 && len(out)-skip > fo.PageSize:
		out = out[skip : skip+fo.PageSize]
		next = "chain:" + strconv.Itoa(skip+fo.PageSize)
	default:
		out = out[skip:]
	}
	v.finish(cb, nil, func() []goja.Value {
		info := v.rt.NewObject()
		if next != "" {
			_ = info.Set("continuation", next)
		}
		return []goja.Value{v.rt.NewArray(toAny(out)...), info}
	})
	return accepted
}

// chainOptions reads the options object and the callback among a chain call's last
// arguments, in either order.
func (v *vm) chainOptions(args []goja.Value) (*goja.Object, goja.Callable) {
	var opts *goja.Object
	var cb goja.Callable
	for _, a := range args {
		if f, ok := goja.AssertFunction(a); ok {
			cb = f
		} else if o, ok := a.(*goja.Object); ok && opts == nil {
			opts = o
		}
	}
	return opts, cb
}

// chainOffset reads a chain's continuation: how many results earlier pages returned.
func chainOffset(token string) (int, error) {
	if token == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(token, "chain:"))
	if !strings.HasPrefix(token, "chain:") || err != nil || n < 0 {
		return 0, fault.New(fault.BadRequest, "The continuation %q is not one a query chain returned", token)
	}
	return n, nil
}

// chainInput reads every document of the partition, a page at a time.
func (v *vm) chainInput(coll Collection) ([]goja.Value, error) {
	var out []goja.Value
	o := FeedOptions{}
	for {
		page, err := coll.ReadAll(o)
		if err != nil {
			return nil, err
		}
		for _, d := range page.Docs {
			out = append(out, v.fromJSON(d))
		}
		if page.Continuation == "" {
			return out, nil
		}
		o.Continuation = page.Continuation
	}
}

// chainApply runs one step over in.
func (v *vm) chainApply(s chainStep, in []goja.Value) []goja.Value {
	call := func(x goja.Value) goja.Value {
		r, err := s.fn(goja.Undefined(), x)
		if err != nil {
			panic(err)
		}
		return r
	}
	var out []goja.Value
	switch s.kind {
	case "filter":
		for _, x := range in {
			if call(x).ToBoolean() {
				out = append(out, x)
			}
		}
	case "map":
		for _, x := range in {
			out = append(out, call(x))
		}
	case "pluck":
		for _, x := range in {
			if o, ok := x.(*goja.Object); ok {
				out = append(out, o.Get(s.prop))
			} else {
				out = append(out, goja.Undefined())
			}
		}
	case "flatten":
		out = v.flatten(in, s.shallow, out)
	case "sortBy", "sortByDescending":
		keys := make([]goja.Value, len(in))
		idx := make([]int, len(in))
		for i, x := range in {
			idx[i], keys[i] = i, x
			if s.fn != nil {
				keys[i] = call(x)
			}
		}
		desc := s.kind == "sortByDescending"
		slices.SortStableFunc(idx, func(a, b int) int {
			c := compareKeys(keys[a], keys[b])
			if desc {
				return -c
			}
			return c
		})
		for _, i := range idx {
			out = append(out, in[i])
		}
	}
	return out
}

// flatten appends to out the elements of each array in in (and of the arrays within them,
// unless shallow), and whatever is not an array as it is.
func (v *vm) flatten(in []goja.Value, shallow bool, out []goja.Value) []goja.Value {
	for _, x := range in {
		o, ok := x.(*goja.Object)
		if !ok || o.ClassName() != "Array" {
			out = append(out, x)
			continue
		}
		n := int(o.Get("length").ToInteger())
		elems := make([]goja.Value, n)
		for i := range n {
			elems[i] = o.Get(strconv.Itoa(i))
		}
		if shallow {
			out = append(out, elems...)
		} else {
			out = v.flatten(elems, false, out)
		}
	}
	return out
}

// compareKeys orders sort keys: undefined and null first, then booleans, numbers and strings,
// each by value, then everything else as equal (a stable sort keeps their order).
func compareKeys(a, b goja.Value) int {
	ra, rb := keyRank(a), keyRank(b)
	if ra != rb {
		return ra - rb
	}
	switch ra {
	case 1:
		return boolInt(a.ToBoolean()) - boolInt(b.ToBoolean())
	case 2:
		x, y := a.ToFloat(), b.ToFloat()
		switch {
		case x < y || math.IsNaN(x) && !math.IsNaN(y):
			return -1
		case x > y || !math.IsNaN(x) && math.IsNaN(y):
			return 1
		}
		return 0
	case 3:
		return strings.Compare(a.String(), b.String())
	}
	return 0
}

func keyRank(x goja.Value) int {
	if x == nil || goja.IsUndefined(x) || goja.IsNull(x) {
		return 0
	}
	switch x.ExportType().Kind() {
	case reflect.Bool:
		return 1
	case reflect.Int64, reflect.Float64:
		return 2
	case reflect.String:
		return 3
	}
	return 4
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func toAny(vals []goja.Value) []any {
	out := make([]any, len(vals))
	for i, x := range vals {
		out[i] = x
	}
	return out
}
