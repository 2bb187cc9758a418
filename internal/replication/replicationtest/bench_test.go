package replicationtest

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/storage"
)

// BenchmarkReplicatedCreates measures 1 KB creates on three replicas in one process, each node
// on its own Pebble on this machine's disk: the writes a second, their latency (p50, p99),
// and the syncs a second of each node, over as many groups as asked, by 64 writers. A node's
// syncs stay far below its writes because one sync serves a round of every group's appends.
//
//	go test -run '^$' -bench ReplicatedCreates -benchtime 20000x ./internal/replication/replicationtest/
func BenchmarkReplicatedCreates(b *testing.B) {
	for _, groups := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("groups=%d", groups), func(b *testing.B) { benchRaft(b, 3, groups) })
	}
}

// BenchmarkSingleNode compares the two ways a single node could run a partition, side by side
// in one run, with the same creates as BenchmarkReplicatedCreates: the direct path, which
// partita serve takes (the partition's log is its own apply batch, synced once per group of
// commands), and a one-replica Raft group (every command appended to the Raft log, synced,
// then applied in the next round).
//
//	go test -run '^$' -bench SingleNode -benchtime 20000x -count 3 ./internal/replication/replicationtest/
func BenchmarkSingleNode(b *testing.B) {
	b.Run("path=direct", benchDirect)
	b.Run("path=raft", func(b *testing.B) { benchRaft(b, 1, 1) })
}

// benchRaft drives creates into groups that divide the EPK space, each replicated on nodes.
func benchRaft(b *testing.B, nodes, groups int) {
	h, err := NewOnDisk(nodes, b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	// The groups divide the EPK space between them, as a container's partitions do.
	ranges := epk.InitialRanges(epk.SchemeV2, groups)
	members := make([]replication.NodeID, nodes)
	for i := range members {
		members[i] = replication.NodeID(i + 1)
	}
	for i, r := range ranges {
		if err := h.StartGroup(uint32(i+1), r, members...); err != nil {
			b.Fatal(err)
		}
	}
	h.Stabilize()
	stop := make(chan struct{})
	go func() { // Raft's clock, at its usual pace
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				h.TickAsync()
			}
		}
	}()
	defer close(stop)
	syncs0 := make([]uint64, nodes)
	for i, n := range h.Nodes() {
		syncs0[i] = n.Host.Syncs()
	}
	elapsed := drive(b, func(op partition.Operation) error {
		g := Group(uint32(1 + slices.IndexFunc(ranges, func(r epk.Range) bool { return r.Contains(op.EPK) })))
		_, err := h.Execute(g, 10*time.Second, op)
		return err
	})
	var syncs uint64
	for i, n := range h.Nodes() {
		syncs = max(syncs, n.Host.Syncs()-syncs0[i])
	}
	b.ReportMetric(float64(syncs)/elapsed.Seconds(), "syncs/s/node")
}

// benchDirect drives the same creates into one partition on the direct path.
func benchDirect(b *testing.B) {
	db, err := storage.Open(b.TempDir(), storage.Options{CacheSize: 8 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	p, err := partition.Open(partition.Config{DB: db, Container: Container, ID: 1, Range: epk.All,
		ContainerRID: containerRID, MaxLogicalBytes: 1 << 30, KeepImages: true})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	drive(b, func(op partition.Operation) error {
		_, err := p.Execute(op)
		return err
	})
}

// drive runs b.N creates of 1 KB items from 64 writers through exec, reports the writes a
// second and their latency (p50, p99), and returns the time they took.
func drive(b *testing.B, exec func(partition.Operation) error) time.Duration {
	const writers = 64
	var next atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	b.ResetTimer()
	began := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					break
				}
				pk := fmt.Sprintf("pk-%d", i%997)
				body := fmt.Appendf(nil, `{"id":"i-%d-%d","pk":%q,"pad":"%0900d"}`, w, i, pk, i)
				item, key, err := document.Parse(body, [][]string{{"pk"}})
				if err != nil {
					b.Error(err)
					return
				}
				start := time.Now()
				if err := exec(partition.Operation{Kind: partition.Create, EPK: epk.SchemeV2.Hash(key), ID: item.ID, Item: item}); err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, time.Since(start))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "writes/s")
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	return elapsed
}

// TestIdleGroupsCostLittle starts three nodes with many groups, lets them quiesce, and
// measures the CPU the process spends while the hosts tick, in the background, at their usual
// pace: quiesced groups are not ticked, so it stays near what three idle hosts cost. It runs
// with -idle.groups set (docs/benchmarks.md), not in CI.
func TestIdleGroupsCostLittle(t *testing.T) {
	if *idleGroups == 0 {
		t.Skip("set -idle.groups to run it")
	}
	h, err := New(3, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ranges := epk.InitialRanges(epk.SchemeV2, *idleGroups)
	for i, r := range ranges {
		if err := h.StartGroup(uint32(i+1), r, 1, 2, 3); err != nil {
			t.Fatal(err)
		}
	}
	h.Stabilize()
	h.Tick(10)
	for _, n := range h.Nodes() {
		t.Logf("node %d: %d groups awake of %d", n.ID, n.Host.Awake(), *idleGroups)
	}
	measure := func(ticking bool) time.Duration {
		var before, after syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			if ticking {
				h.TickAsync()
			}
		}
		syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		cpu := func(r syscall.Rusage) time.Duration {
			return time.Duration(r.Utime.Nano() + r.Stime.Nano())
		}
		return cpu(after) - cpu(before)
	}
	base := measure(false)
	ticking := measure(true)
	t.Logf("%d groups on 3 nodes, quiesced: %v of CPU in 10 s ticking every 100 ms (%v without ticks)", *idleGroups, ticking, base)
}
