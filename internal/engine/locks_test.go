package engine

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/epk"
)

// TestLockTableOrders checks the orderings the table promises: a script waits for the writes
// in flight on its logical partition, writes there wait for the script, and writes to another
// logical partition never wait. Orderings are checked with channels, not with durations.
func TestLockTableOrders(t *testing.T) {
	var lt lockTable
	a, b := epk.EPK("a"), epk.EPK("b")
	lt.lockWrite(a)
	held := make(chan struct{})
	go func() { lt.lockScript(a); close(held) }()
	select {
	case <-held:
		t.Fatal("the script took the partition while a write was in flight")
	case <-time.After(50 * time.Millisecond):
	}
	lt.lockWrite(b) // another logical partition: does not wait
	lt.unlockWrite(b)
	lt.unlockWrite(a)
	<-held
	wrote := make(chan struct{})
	go func() { lt.lockWrite(a); close(wrote) }()
	select {
	case <-wrote:
		t.Fatal("a write went in while the script held the partition")
	case <-time.After(50 * time.Millisecond):
	}
	lt.unlockScript(a)
	<-wrote
	lt.unlockWrite(a)
	for i := range lt.shards {
		if n := len(lt.shards[i].lps); n != 0 {
			t.Fatalf("shard %d keeps %d entries with nothing in flight", i, n)
		}
	}
}

// BenchmarkLockTable is what the table adds to every write (a synced write takes about a
// millisecond): one logical partition per writer, and all writers on one.
func BenchmarkLockTable(b *testing.B) {
	keys := make([]epk.EPK, 1000)
	for i := range keys {
		keys[i] = epk.EPK(fmt.Sprintf("%016x", i*7919))
	}
	for _, spread := range []int{1000, 1} {
		b.Run(fmt.Sprintf("logical-partitions=%d", spread), func(b *testing.B) {
			var lt lockTable
			var next atomic.Int64
			b.SetParallelism(32)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					e := keys[int(next.Add(1))%spread]
					lt.lockWrite(e)
					lt.unlockWrite(e)
				}
			})
		})
	}
}
