package script

import (
	"fmt"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// guards caps the built-ins that build one large value in a single native step, where the
// runtime's interrupt (checked between instructions) cannot stop them. It runs before the
// script is evaluated; the originals stay in its closure, out of the script's reach.
var guards = fmt.Sprintf(`(function () {
	var MAXA = %d, MAXS = %d;
	function lengthOf(n) { n = Number(n); return n > 0 ? Math.floor(n) : 0; }
	function wrap(proto, name, check) {
		var orig = proto[name];
		Object.defineProperty(proto, name, { configurable: true, writable: true, value: {
			[name]: function () { check(this, arguments); return orig.apply(this, arguments); }
		}[name] });
	}
	wrap(String.prototype, "repeat", function (s, a) {
		if (String(s).length * lengthOf(a[0]) > MAXS) throw new RangeError("Invalid string length");
	});
	var pad = function (s, a) { if (lengthOf(a[0]) > MAXS) throw new RangeError("Invalid string length"); };
	wrap(String.prototype, "padStart", pad);
	wrap(String.prototype, "padEnd", pad);
	var long = function (a) { if (a && lengthOf(a.length) > MAXA) throw new RangeError("Invalid array length"); };
	wrap(Array.prototype, "fill", function (a) { long(a); });
	wrap(Array.prototype, "join", function (a) { long(a); });
	wrap(Array, "from", function (_, a) { long(a[0]); });
	var sized = function (C) {
		return new Proxy(C, {
			apply: function (t, self, a) { if (a.length === 1 && typeof a[0] === "number" && a[0] > MAXA) throw new RangeError("Invalid array length"); return Reflect.apply(t, self, a); },
			construct: function (t, a, nt) { if (typeof a[0] === "number" && a[0] > MAXA) throw new RangeError("Invalid array length"); long(a[0]); return Reflect.construct(t, a, nt); }
		});
	};
	var g = Function("return this")();
	["Array", "ArrayBuffer", "SharedArrayBuffer", "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array",
	 "Uint16Array", "Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"].forEach(function (n) {
		if (typeof g[n] === "function") g[n] = sized(g[n]);
	});
})();`, maxArrayLength, maxStringLength)

var guardsProgram = goja.MustCompile("guards.js", guards, true)

func installGuards(rt *goja.Runtime) error {
	_, err := rt.RunProgram(guardsProgram)
	return err
}

// watchdog interrupts calls while the heap grows past their memory budget. Goja cannot count
// one runtime's allocations, so it watches the process's heap from when each call began:
// a runaway loop is stopped within a tick; an ordinary call never comes near the budget.
// Calls running at the same time as a runaway one may be stopped with it.
type watchdog struct {
	mu      sync.Mutex
	watched map[*goja.Runtime]budget
	running bool
}

type budget struct {
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
		delete(w.watched, rt)
		w.mu.Unlock()
	}
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
		for rt, b := range w.watched {
			if heap > b.base && heap-b.base > b.max {
				rt.Interrupt(errMemory)
			}
		}
		w.mu.Unlock()
	}
}
