package replication_test

import (
	"errors"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/replication"
)

// A learner added to a group whose log was compacted catches up by a streamed snapshot: its
// state is the leader's afterwards, the snapshot went in several sstables and chunks of at
// most a megabyte, not inline, and no file of it is left.
func TestStreamedSnapshotCatchUp(t *testing.T) {
	c := newKVCluster(t, true)
	n1, n2 := c.start(1), c.start(2)
	c.bootstrap(n1)
	c.load(n1, 40<<20, 1000)
	c.addLearner(n1, n2)
	c.caughtUp(n1, n2, time.Minute)
	sent, _, maxChunk := n1.tr.StreamedSnapshots()
	_, received, _ := n2.tr.StreamedSnapshots()
	if sent != 1 || received != 1 {
		t.Fatalf("%d snapshots streamed, %d received; want one", sent, received)
	}
	if maxChunk > 1<<20 {
		t.Fatalf("a chunk of %d bytes", maxChunk)
	}
	if s, in := n2.host.Snapshots(); in != 1 {
		t.Fatalf("the learner installed %d snapshots (sent %d)", in, s)
	}
	noLeftovers(t, n2)
}

// Without the hook (a cluster that may hold nodes of the release before), snapshots go inline
// in their envelope, as before, and the learner catches up the same.
func TestInlineSnapshotWithoutTheHook(t *testing.T) {
	c := newKVCluster(t, false)
	n1, n2 := c.start(1), c.start(2)
	c.bootstrap(n1)
	c.load(n1, 4<<20, 1000)
	c.addLearner(n1, n2)
	c.caughtUp(n1, n2, time.Minute)
	if sent, _, _ := n1.tr.StreamedSnapshots(); sent != 0 {
		t.Fatalf("%d snapshots streamed without the hook", sent)
	}
	if sent, _ := n1.host.Snapshots(); sent == 0 {
		t.Fatal("no snapshot sent")
	}
	if _, in := n2.host.Snapshots(); in != 1 {
		t.Fatalf("the learner installed %d snapshots", in)
	}
}

// A stream that breaks midway leaves nothing on the receiver, and Raft, told that the
// snapshot failed, sends it again: the next one completes.
func TestStreamedSnapshotBrokenMidway(t *testing.T) {
	c := newKVCluster(t, true)
	n1, n2 := c.start(1), c.start(2)
	c.bootstrap(n1)
	c.load(n1, 20<<20, 1000)
	var left atomic.Int64
	left.Store(5 << 20)
	c.fault = func(attempt int, w io.Writer) io.Writer {
		if attempt > 1 {
			return w
		}
		return writerFunc(func(p []byte) (int, error) {
			if left.Add(-int64(len(p))) < 0 {
				return 0, errCut
			}
			return w.Write(p)
		})
	}
	c.addLearner(n1, n2)
	c.caughtUp(n1, n2, time.Minute)
	if left.Load() >= 0 {
		t.Fatal("the first stream was not broken")
	}
	if n := n1.streamer.streamed(); n < 2 {
		t.Fatalf("%d streams", n)
	}
	if _, received, _ := n2.tr.StreamedSnapshots(); received != 1 {
		t.Fatalf("%d snapshots received whole", received)
	}
	noLeftovers(t, n2)
}

// pauseFirst makes the first snapshot node 1 streams stop after some megabytes until release
// is closed, and closes paused then.
func pauseFirst(c *kvCluster) (paused, release chan struct{}) {
	paused, release = make(chan struct{}), make(chan struct{})
	var left atomic.Int64
	left.Store(5 << 20)
	var once sync.Once
	c.fault = func(attempt int, w io.Writer) io.Writer {
		if attempt > 1 {
			return w
		}
		return writerFunc(func(p []byte) (int, error) {
			if left.Add(-int64(len(p))) < 0 {
				once.Do(func() { close(paused) })
				<-release
			}
			return w.Write(p)
		})
	}
	return paused, release
}

// receiving waits until n is receiving a snapshot: files of it are in its store.
func receiving(t *testing.T, n *kvNode) []string {
	t.Helper()
	var dirs []string
	waitFor(t, "the learner to receive", func() bool {
		var err error
		dirs, err = n.db.SSTDirs()
		if err != nil {
			t.Fatal(err)
		}
		return len(dirs) > 0
	})
	return dirs
}

// The sender's node dies while it streams: the receiver drops what it received, and its
// replica holds nothing of the snapshot.
func TestStreamedSnapshotSenderDies(t *testing.T) {
	c := newKVCluster(t, true)
	n1, n2 := c.start(1), c.start(2)
	c.bootstrap(n1)
	c.load(n1, 20<<20, 1000)
	paused, release := pauseFirst(c)
	c.addLearner(n1, n2)
	<-paused
	receiving(t, n2)
	n1.tr.Close() // the node's connections drop at once, as when it is killed
	close(release)
	n1.stop()
	noLeftovers(t, n2)
	if got := stateOf(t, n2.db); got != "0 items of 0 bytes, hash cbf29ce484222325" {
		t.Fatalf("the learner holds %s", got)
	}
}

// The receiver restarts while a snapshot streams to it: the stream fails, files that a crash
// would have left are removed when its host opens the store, and the leader's next snapshot
// completes.
func TestStreamedSnapshotReceiverRestarts(t *testing.T) {
	c := newKVCluster(t, true)
	n1, n2 := c.start(1), c.start(2)
	c.bootstrap(n1)
	c.load(n1, 20<<20, 1000)
	paused, release := pauseFirst(c)
	c.addLearner(n1, n2)
	<-paused
	receiving(t, n2)
	n2.stop()
	// What a process killed while it received would have left (a stop removes its own).
	db, err := reopen(c, 2)
	if err != nil {
		t.Fatal(err)
	}
	d, err := db.NewSSTDir()
	if err != nil {
		t.Fatal(err)
	}
	f, err := d.Create()
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("the start of an sstable"))
	f.Close()
	left, _ := db.SSTDirs()
	db.Close()
	close(release)
	n2 = c.start(2)
	now, err := n2.db.SSTDirs()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range now {
		for _, l := range left {
			if d == l {
				t.Fatalf("the files of a snapshot received before the restart are still there (%s)", d)
			}
		}
	}
	c.caughtUp(n1, n2, time.Minute)
	noLeftovers(t, n2)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

var errCut = errors.New("the test cut the stream")

// What a streamed snapshot costs in memory does not grow with the replica: while a learner
// catches up on a replica of 96 MB, with both nodes in this process, the live heap grows by
// far less than that: 13 MB when it was written, where the same catch-up inline grew it by
// 343 MB (the sstables built in memory, the envelope, the receiver's reassembly and decoding).
// The heap is sampled, not timed: a sample that misses the peak only makes the test more
// lenient.
func TestStreamedSnapshotMemory(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("loads 96 MB; measures the heap, which the race detector inflates")
	}
	const size = 96 << 20
	c := newKVCluster(t, true)
	n1, n2 := c.start(1), c.start(2)
	c.bootstrap(n1)
	c.load(n1, size, 1000)
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	base := heapBytes()
	peak := peakHeap(func() {
		c.addLearner(n1, n2)
		c.caughtUp(n1, n2, 2*time.Minute)
	})
	growth := peak - base
	t.Logf("live heap %d MB before, peak %d MB while a %d MB replica streamed (+%d MB)", base>>20, peak>>20, size>>20, growth>>20)
	if growth > 32<<20 {
		t.Fatalf("the heap grew by %d MB while a %d MB replica streamed", growth>>20, size>>20)
	}
	if _, _, maxChunk := n1.tr.StreamedSnapshots(); maxChunk > 1<<20 {
		t.Fatalf("a chunk of %d bytes", maxChunk)
	}
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// peakHeap runs fn and returns the highest heap it saw meanwhile, sampled every millisecond.
func peakHeap(fn func()) uint64 {
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if h := heapBytes(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	return peak.Load()
}

var _ replication.SnapshotStreamer = (*faultyStreamer)(nil)
