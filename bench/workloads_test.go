package main

import (
	"context"
	"slices"
	"testing"
	"time"
)

// slowReads is a Client whose reads take a fixed time; nothing else is used by the tests.
type slowReads struct {
	Client
	d time.Duration
}

func (c slowReads) Read(ctx context.Context, pk, id string) (Result, error) {
	time.Sleep(c.d)
	return Result{Charge: 1}, nil
}

func TestPacedRunKeepsItsRate(t *testing.T) {
	cfg := &Config{Concurrency: 8, Duration: time.Second, Keys: 10, Items: 100, Rate: 500}
	rec, _ := run("read", cfg, slowReads{d: time.Millisecond})
	if n := len(rec.Lat); n < 450 || n > 510 {
		t.Fatalf("%d reads in a second paced at 500/s", n)
	}
}

// A server slower than the schedule is charged for the queue it causes: with one worker,
// reads of 4 ms paced at 1,000/s fall further behind with every read, and the latencies say so
// (a closed loop would report 4 ms throughout).
func TestPacedRunCountsTheQueue(t *testing.T) {
	cfg := &Config{Concurrency: 1, Duration: 500 * time.Millisecond, Keys: 10, Items: 100, Rate: 1000}
	rec, _ := run("read", cfg, slowReads{d: 4 * time.Millisecond})
	slices.Sort(rec.Lat)
	if last := rec.Lat[len(rec.Lat)-1]; last < 100*time.Millisecond {
		t.Fatalf("worst latency %v; the queue was not counted", last)
	}
}
