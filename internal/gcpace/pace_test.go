package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 1600},        // the runtime's 4 MiB minimum times 16 is the 64 MiB headroom
		{2 * mib, 1600},  // not 3200, which would put the goal at twice the headroom
		{8 * mib, 800},   // 8 MiB live + 64 MiB
		{16 * mib, 400},  // headroom and floor agree
		{512 * mib, 400}, // the floor: a large live heap grows by 400%, not by 64 MiB
	} {
		if got := percent(tc.live, 64*mib, 400); got != tc.want {
			t.Errorf("percent(%d MiB live) = %d, want %d", tc.live/mib, got, tc.want)
		}
	}
}

// TestStartPacesAfterEachCollection checks that the percentage follows the live heap from one
// collection to the next, and that stop restores the setting from before.
func TestStartPacesAfterEachCollection(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	const headroom = 64 << 20
	stop := Start(headroom, 150)
	if got := gogc(); got != 150 {
		t.Fatalf("right after Start: GOGC %d, want the floor 150", got)
	}

	runtime.GC() // little is live: the headroom sets the goal
	waitFor(t, func() bool { return gogc() == percent(live(), headroom, 150) && gogc() > 1000 })

	ballast := make([]byte, 256<<20) // 256 MiB live: the floor sets it
	runtime.GC()
	waitFor(t, func() bool { return gogc() == 150 })
	runtime.KeepAlive(ballast)

	stop()
	if got := gogc(); got != 100 {
		t.Fatalf("after stop: GOGC %d, want 100 as before Start", got)
	}
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if got := gogc(); got != 100 {
		t.Fatalf("a collection after stop changed GOGC to %d", got)
	}
}

func gogc() int { return int(read("/gc/gogc:percent")) }

func live() uint64 { return read("/gc/heap/live:bytes") }

func read(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitFor waits for the finalizer goroutine, which runs the pacer after a collection.
func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("GOGC %d with %d MiB live: the pacer did not follow the collection", gogc(), live()>>20)
}
