package script

import (
	"fmt"
	"reflect"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
)

// guards caps the built-ins that build one large value, or walk one deep value, in a single
// native step, where the runtime's interrupt (checked between instructions) cannot stop them.
// It runs before the script is evaluated; the originals stay in its closure, out of the
// script's reach. Everything a check calls is taken before any script runs: a script may
// replace globals and prototype methods (String, Reflect.apply, Function.prototype.apply,
// Map.prototype.get), and a check that called them could be talked out of its answer. For
// the same reason an argument is converted once, and the converted value is what the original
// gets: a valueOf that answers small to the check and large to the original gains nothing.
//
// What is left uncapped is what calls back into script code on the way (a toString, a
// callback, a proxy's trap): the interrupt stops those between calls.
var guards = fmt.Sprintf(`(function (nestsDeeper, plainArray) {
	var MAXA = %d, MAXS = %d, MAXD = %d;
	var apply = Reflect.apply, construct = Reflect.construct, define = Object.defineProperty,
		create = Object.create, str = String, num = Number, floor = Math.floor, isArray = Array.isArray,
		NewMap = Map, mapGet = Map.prototype.get, mapSet = Map.prototype.set, mapHas = Map.prototype.has,
		JSONObj = JSON, RangeErr = RangeError, SyntaxErr = SyntaxError, TypeErr = TypeError, Obj = Object;
	function lengthOf(n) { n = num(n); return n > 0 ? floor(n) : 0; }
	function tooLong() { throw new RangeErr("Invalid string length"); }
	function tooMany() { throw new RangeErr("Invalid array length"); }
	// put defines an element: an assignment would find a setter a script put on Array.prototype
	// (and a descriptor inheriting from Object.prototype, a get a script put there).
	function put(a, i, v) {
		var d = create(null);
		d.value = v;
		d.writable = d.enumerable = d.configurable = true;
		define(a, i, d);
	}
	// replace puts make(original) in place of obj[name], under the original's name.
	function replace(obj, name, make) {
		var f = make(obj[name]);
		define(f, "name", { configurable: true, value: name });
		define(obj, name, { configurable: true, writable: true, value: f });
	}
	replace(String.prototype, "repeat", function (orig) {
		return function (count) {
			if (this == null) return apply(orig, this, arguments); // its TypeError
			var s = str(this), n = num(count);
			if (s.length * lengthOf(n) > MAXS) tooLong();
			return apply(orig, s, [n]);
		};
	});
	var pad = function (orig) {
		return function (maxLength, fill) {
			if (this == null) return apply(orig, this, arguments);
			var s = str(this), n = num(maxLength);
			if (lengthOf(n) > MAXS) tooLong();
			return apply(orig, s, [n, fill]);
		};
	};
	replace(String.prototype, "padStart", pad);
	replace(String.prototype, "padEnd", pad);
	replace(String.prototype, "concat", function (orig) {
		return function () {
			if (this == null) return apply(orig, this, arguments);
			var s = str(this), rest = [], total = s.length;
			for (var i = 0; i < arguments.length; i++) {
				var part = str(arguments[i]);
				if ((total += part.length) > MAXS) tooLong();
				put(rest, i, part);
			}
			return apply(orig, s, rest);
		};
	});
	// split is given a limit just past the cap, so the native split stops there.
	replace(String.prototype, "split", function (orig) {
		return function (separator, limit) {
			if (this == null) return apply(orig, this, arguments);
			var lim = limit === undefined ? MAXA + 1 : num(limit) >>> 0;
			var out = apply(orig, this, [separator, lim > MAXA + 1 ? MAXA + 1 : lim]);
			if (out.length > MAXA) tooMany();
			return out;
		};
	});
	var long = function (a) { if (a != null && lengthOf(a.length) > MAXA) tooMany(); };
	// joined checks what joining a's elements with sep would make. Strings are copied natively,
	// so a few copies of a long one make a result of any size; other elements convert through
	// script code (toString), or are short (numbers).
	function joined(a, sep) {
		long(a);
		var n = lengthOf(a.length), total = n > 1 ? sep.length * (n - 1) : 0;
		for (var i = 0; i < n && total <= MAXS; i++) {
			var e = a[i];
			if (typeof e === "string") total += e.length;
		}
		if (total > MAXS) tooLong();
	}
	replace(Array.prototype, "join", function (orig) {
		return function (separator) {
			if (this == null) return apply(orig, this, arguments);
			var sep = separator === undefined ? "," : str(separator);
			joined(this, sep);
			return apply(orig, this, [sep]);
		};
	});
	replace(Array.prototype, "toLocaleString", function (orig) {
		return function () {
			if (this != null) joined(this, ",");
			return apply(orig, this, arguments);
		};
	});
	replace(Array.prototype, "fill", function (orig) {
		return function () { long(this); return apply(orig, this, arguments); };
	});
	replace(Array, "from", function (orig) {
		return function (items) { long(items); return apply(orig, this, arguments); };
	});
	// The methods that walk an array-like natively, index by index, up to its length (an
	// array's length may be set to 2^32-1 with no element, and any object may claim a length):
	// past the cap they would loop for minutes without a script instruction to interrupt.
	// push and pop touch one index; the methods that call a callback on every index are
	// stopped between the calls, but those that skip holes (forEach, map, ...) would not be.
	// On a genuine array (plainArray: not a proxy) the length is a data property, read once;
	// anything else (an array-like, a proxy) might answer the check small and the method
	// large, so the method walks a copy made from one reading instead; the methods that
	// change their receiver are refused on them.
	function snapshot(o) {
		var obj = Obj(o), n = lengthOf(obj.length);
		if (n > MAXA) tooMany();
		var c = [];
		c.length = n;
		for (var i = 0; i < n; i++) if (i in obj) put(c, i, obj[i]);
		return c;
	}
	var mutating = { copyWithin: true, reverse: true, shift: true, sort: true, splice: true, unshift: true };
	["at", "concat", "copyWithin", "entries", "every", "filter", "find", "findIndex", "findLast",
	 "findLastIndex", "flat", "flatMap", "forEach", "includes", "indexOf", "keys", "lastIndexOf",
	 "map", "reduce", "reduceRight", "reverse", "shift", "slice", "some", "sort", "splice",
	 "unshift", "values"].forEach(function (name) {
		if (typeof Array.prototype[name] !== "function") return;
		replace(Array.prototype, name, function (orig) {
			return function () {
				if (this == null || plainArray(this)) {
					long(this);
					return apply(orig, this, arguments);
				}
				if (mutating[name]) throw new TypeErr("Array.prototype." + name + " changes its receiver, which here must be an array");
				return apply(orig, snapshot(this), arguments);
			};
		});
	});
	// String.raw walks its call site's raw strings up to their length.
	replace(String, "raw", function (orig) {
		return function (callSite) {
			if (callSite == null) return apply(orig, this, arguments);
			var raw = Obj(callSite).raw, rest = [{ raw: plainArray(raw) ? raw : snapshot(raw) }];
			if (plainArray(raw)) long(raw);
			for (var i = 1; i < arguments.length; i++) put(rest, i, arguments[i]);
			return apply(orig, this, rest);
		};
	});
	// JSON.parse recurses natively once per level of nesting: deep enough, it overflows the
	// goroutine's stack, which ends the process. nestsDeeper scans the text first (natively).
	replace(JSON, "parse", function (orig) {
		return function (text, reviver) {
			var s = str(text);
			if (nestsDeeper(s, MAXD)) throw new SyntaxErr("JSON.parse: the text nests objects and arrays more than " + MAXD + " deep");
			return apply(orig, JSONObj, [s, reviver]);
		};
	});
	// JSON.stringify checks each object it enters against all those it is inside (for cycles):
	// natively, quadratic in the depth, and beyond the interrupt's reach. Given a replacer,
	// it calls script code for every value, so the interrupt can stop it; the replacer also
	// bounds the depth, knowing each object's from its holder's. An array replacer (a list
	// of property names) is applied by the replacer too, by handing on a copy of each object
	// with only those properties, in that order (integer-like names come first, as in any
	// object: the one way this differs from the native list).
	function propertyList(list) {
		var keys = [], seen = new NewMap(), n = lengthOf(list.length);
		for (var i = 0; i < n; i++) {
			var e = list[i], k;
			if (typeof e === "string") k = e;
			else if (typeof e === "number" || e instanceof str || e instanceof num) k = str(e);
			else continue;
			if (!apply(mapHas, seen, [k])) {
				apply(mapSet, seen, [k, true]);
				put(keys, keys.length, k);
			}
		}
		return keys;
	}
	replace(JSON, "stringify", function (orig) {
		return function (value, replacer, space) {
			var user, keep;
			if (typeof replacer === "function") user = replacer;
			else if (isArray(replacer)) keep = propertyList(replacer);
			var depth = new NewMap();
			var guard = function (key, v) {
				if (user !== undefined) v = apply(user, this, [key, v]);
				if (typeof v === "object" && v !== null) {
					var d = (apply(mapGet, depth, [this]) || 0) + 1;
					if (d > MAXD) throw new RangeErr("JSON.stringify: the value nests objects and arrays more than " + MAXD + " deep");
					if (keep !== undefined && !isArray(v)) {
						var o = create(null);
						for (var i = 0; i < keep.length; i++) o[keep[i]] = v[keep[i]];
						v = o;
					}
					apply(mapSet, depth, [v, d]);
				}
				return v;
			};
			return apply(orig, JSONObj, [value, guard, space]);
		};
	});
	// The constructors that allocate by a length: the global and the prototype's constructor
	// property, by which a script could otherwise reach the original.
	var sized = function (C) {
		var guarded = new Proxy(C, {
			apply: function (t, self, a) { if (a.length === 1 && typeof a[0] === "number" && a[0] > MAXA) tooMany(); return apply(t, self, a); },
			construct: function (t, a, nt) { if (typeof a[0] === "number" && a[0] > MAXA) tooMany(); long(a[0]); return construct(t, a, nt); }
		});
		define(C.prototype, "constructor", { configurable: true, writable: true, value: guarded });
		return guarded;
	};
	var g = Function("return this")();
	["Array", "ArrayBuffer", "SharedArrayBuffer", "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array",
	 "Uint16Array", "Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"].forEach(function (n) {
		if (typeof g[n] === "function") g[n] = sized(g[n]);
	});
})`, maxArrayLength, maxStringLength, maxNesting)

var guardsProgram = goja.MustCompile("guards.js", guards, true)

// maxMatchTime bounds one match of a regular expression that needs backtracking (goja runs
// those with regexp2, the others with Go's linear regexp): a catastrophic pattern such as
// /^(a+)+\1$/ would otherwise run for hours inside one native call, where the interrupt cannot
// reach it. A match that runs out of time finds nothing, and the call's own time limit stops
// the script soon after.
const maxMatchTime = time.Second

func init() { regexp2.DefaultMatchTimeout = maxMatchTime }

func installGuards(rt *goja.Runtime) error {
	f, err := rt.RunProgram(guardsProgram)
	if err != nil {
		return err
	}
	install, ok := goja.AssertFunction(f)
	if !ok {
		return fmt.Errorf("the guards are not a function")
	}
	_, err = install(goja.Undefined(), rt.ToValue(func(fc goja.FunctionCall) goja.Value {
		return rt.ToValue(nestsDeeper(fc.Argument(0).String(), int(fc.Argument(1).ToInteger())))
	}), rt.ToValue(func(fc goja.FunctionCall) goja.Value {
		return rt.ToValue(plainArray(fc.Argument(0)))
	}))
	return err
}

// plainArray reports whether v is a genuine array, whose length is a data property: not a
// proxy (which may answer anything, differently each time) nor an array-like.
func plainArray(v goja.Value) bool {
	o, ok := v.(*goja.Object)
	return ok && o.ClassName() == "Array" && o.ExportType() != proxyType
}

var proxyType = reflect.TypeOf(goja.Proxy{})

// nestsDeeper reports whether the JSON text s opens more than max objects and arrays inside
// one another. Brackets in strings do not count. For text that is not JSON it counts what a
// parser would have read before it failed, which is all that matters: how deep it recurses.
func nestsDeeper(s string, max int) bool {
	depth, inString, escaped := 0, false, false
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '[' || b == '{':
			if depth++; depth > max {
				return true
			}
		case b == ']' || b == '}':
			depth--
		}
	}
	return false
}

// watchdog interrupts calls while the heap grows past their memory budget. Goja cannot count
// one runtime's allocations, so it watches the process's heap from when each call began:
// a runaway loop is stopped within a tick; an ordinary call never comes near the budget.
// Calls running at the same time as a runaway one see the same heap, and one that began
// earlier passes its budget first: so when a call passes its budget while others run, every
// running call is stopped with errMemoryBeside, and its caller runs it again, apart from the
// other reruns (Runner.Alone), where the one that spent the memory is stopped again and the
// others finish.
type watchdog struct {
	mu      sync.Mutex
	watched map[*goja.Runtime]budget
	running bool
}

type budget struct {
	// base is the lowest heap seen since the call began (the loop lowers it when garbage is
	// collected); the call is over its budget once the heap is more than max above it.
	base, max uint64
}

const watchTick = 10 * time.Millisecond

func newWatchdog() *watchdog { return &watchdog{watched: map[*goja.Runtime]budget{}} }

// heapBytes is the memory of live and not yet collected heap objects.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// add watches rt until the returned function is called.
func (w *watchdog) add(rt *goja.Runtime, max int64) (remove func()) {
	w.mu.Lock()
	w.watched[rt] = budget{base: heapBytes(), max: uint64(max)}
	if !w.running {
		w.running = true
		go w.loop()
	}
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		heap := heapBytes()
		if b := w.watched[rt]; heap > b.base && heap-b.base > b.max {
			// It leaves over its budget, and what it allocated is not collected yet: the
			// calls beside it are measured from here on, not charged with it.
			for r, o := range w.watched {
				if r != rt && o.base < heap {
					o.base = heap
					w.watched[r] = o
				}
			}
		}
		delete(w.watched, rt)
		w.mu.Unlock()
	}
}

// over reports whether the heap has grown past rt's budget since its call began, and whether
// other calls are running beside it.
func (w *watchdog) over(rt *goja.Runtime) (over, beside bool) {
	heap := heapBytes()
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.watched[rt]
	return ok && heap > b.base && heap-b.base > b.max, len(w.watched) > 1
}

// loop ticks while calls are watched, and stops when none is.
func (w *watchdog) loop() {
	t := time.NewTicker(watchTick)
	defer t.Stop()
	for range t.C {
		heap := heapBytes()
		w.mu.Lock()
		if len(w.watched) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		over := false
		for rt, b := range w.watched {
			if heap < b.base {
				// Garbage there when the call began was collected: the call's growth counts
				// from here, or it could allocate that much more than its budget.
				b.base = heap
				w.watched[rt] = b
			}
			over = over || heap-b.base > b.max
		}
		for rt := range w.watched {
			switch {
			case !over:
			case len(w.watched) > 1:
				rt.Interrupt(errMemoryBeside)
			default:
				rt.Interrupt(errMemory)
			}
		}
		w.mu.Unlock()
	}
}
