package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// minHeap is the live heap below which the runtime's own heap minimum (4 MiB times the GC
// percentage over 100) sets the goal; dividing by less than it would overshoot the headroom.
const minHeap = 4 << 20

// percent is the GC percentage that puts the heap goal at about live+headroom bytes, and never
// below floor.
func percent(live, headroom uint64, floor int) int {
	p := int(headroom * 100 / max(live, minHeap))
	return max(p, floor)
}

// Start paces the collector by headroom bytes over the live heap with at least floor percent,
// beginning with the next collection, until stop is called; stop restores the percentage
// that was set before.
func Start(headroom uint64, floor int) (stop func()) {
	p := &pacer{headroom: headroom, floor: floor, set: floor, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	before := debug.SetGCPercent(floor)
	p.arm()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.stopped = true
		debug.SetGCPercent(before)
	}
}

type pacer struct {
	headroom uint64
	floor    int
	// mu orders adjust against stop, so that no adjust changes the percentage after stop
	// restored it.
	mu      sync.Mutex
	stopped bool
	set     int // the percentage adjust last set
	sample  []metrics.Sample
}

// arm makes adjust run once the next collection has finished: the finalizer of an object
// nothing refers to runs after the cycle that finds it unreachable. The object holds a
// pointer so that it is not batched with others by the tiny allocator, whose objects'
// finalizers may never run.
func (p *pacer) arm() {
	runtime.SetFinalizer(&sentinel{p}, func(s *sentinel) { s.p.adjust() })
}

type sentinel struct{ p *pacer }

func (p *pacer) adjust() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	metrics.Read(p.sample)
	want := percent(p.sample[0].Value.Uint64(), p.headroom, p.floor)
	// Small changes are not worth the heap lock SetGCPercent takes.
	if want > p.set+p.set/8 || want < p.set-p.set/8 {
		debug.SetGCPercent(want)
		p.set = want
	}
	p.arm()
}
