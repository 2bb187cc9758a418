package storage

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Write stalls are told at once, then summed into at most one line per interval.
func TestStallLog(t *testing.T) {
	var out bytes.Buffer
	clock := time.Unix(0, 0)
	s := &stallLog{log: slog.New(slog.NewTextHandler(&out, nil)), now: func() time.Time { return clock }}
	stall := func(d time.Duration) {
		s.begin(pebble.WriteStallBeginInfo{Reason: "memtable count limit reached"})
		clock = clock.Add(d)
		s.end()
	}
	lines := func() []string { return strings.Split(strings.TrimSpace(out.String()), "\n") }

	stall(300 * time.Millisecond)
	if l := lines(); len(l) != 1 || !strings.Contains(l[0], "stalls=1 waited=300ms") || !strings.Contains(l[0], "memtable count limit") {
		t.Fatalf("first stall: %q", out.String())
	}
	for range 5 { // within the interval: counted, not written
		clock = clock.Add(time.Second)
		stall(100 * time.Millisecond)
	}
	if l := lines(); len(l) != 1 {
		t.Fatalf("stalls within the interval were written: %q", out.String())
	}
	clock = clock.Add(stallInterval)
	stall(50 * time.Millisecond)
	if l := lines(); len(l) != 2 || !strings.Contains(l[1], "stalls=6 waited=550ms") {
		t.Fatalf("after the interval: %q", out.String())
	}
}
