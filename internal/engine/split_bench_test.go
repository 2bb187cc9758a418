package engine

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkSplit fills one physical partition with PARTITA_SPLIT_BENCH_BYTES of 1 KB items
// (default 100 MB; the published figure uses 1 GB), then splits it while a writer keeps
// writing to the same partition, and reports the split's duration and the worst write latency
// the writer saw. Run with -benchtime 1x.
func BenchmarkSplit(b *testing.B) {
	size := int64(100 << 20)
	if s := os.Getenv("PARTITA_SPLIT_BENCH_BYTES"); s != "" {
		size, _ = strconv.ParseInt(s, 10, 64)
	}
	for b.Loop() {
		e, c := newContainer(b, Options{}, ContainerSpec{})
		pad := strings.Repeat("x", 880)
		n := int(size / 1024)
		var wg sync.WaitGroup
		for w := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += 16 {
					body := fmt.Sprintf(`{"id":"%d","pk":"k%d","n":%d,"pad":%q}`, i, i%10000, i, pad)
					if _, err := c.CreateItem([]byte(body), ItemOptions{}); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		p := c.partitions()[0]
		at, ok, err := p.SplitPoint()
		if err != nil || !ok {
			b.Fatal(err)
		}
		var worst atomic.Int64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				if _, err := c.CreateItem([]byte(fmt.Sprintf(`{"id":"during-%d","pk":"k%d"}`, i, i%10000)), ItemOptions{}); err != nil {
					b.Error(err)
					return
				}
				if d := int64(time.Since(start)); d > worst.Load() {
					worst.Store(d)
				}
			}
		}()
		time.Sleep(100 * time.Millisecond)
		start := time.Now()
		if err := e.split(c, p.ID(), at); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		time.Sleep(100 * time.Millisecond)
		close(stop)
		<-done
		b.ReportMetric(float64(p.Stats().Bytes)/(1<<20), "MB-split")
		b.ReportMetric(took.Seconds(), "split-s")
		b.ReportMetric(float64(worst.Load())/1e6, "worst-write-ms")
	}
}
