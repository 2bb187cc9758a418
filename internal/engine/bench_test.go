package engine

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// body1KB is a 1 KB item (before system properties) with the given id and key.
func body1KB(id, pk string) []byte {
	b := item(id, pk, `,"pad":"`)
	pad := 1024 - len(b) - 2
	return append(append(b, strings.Repeat("x", pad)...), `"}`...)
}

func loadItems(b *testing.B, c *Container, n int) {
	for i := range n {
		if _, err := c.UpsertItem(body1KB(fmt.Sprint(i), fmt.Sprint(i%1000)), ItemOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPointRead1KB(b *testing.B) {
	_, c := newContainer(b, Options{}, ContainerSpec{})
	const n = 10000
	loadItems(b, c, n)
	b.Run("single", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := c.ReadItem(key(fmt.Sprint(i%n%1000)), fmt.Sprint(i%n)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := int(next.Add(1)) % n
				if _, err := c.ReadItem(key(fmt.Sprint(i%1000)), fmt.Sprint(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkSyncedWrite1KB creates 1 KB items, each acknowledged only after its batch is synced.
func BenchmarkSyncedWrite1KB(b *testing.B) {
	b.Run("single", func(b *testing.B) {
		_, c := newContainer(b, Options{}, ContainerSpec{})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := c.CreateItem(body1KB(fmt.Sprint(i), fmt.Sprint(i%1000)), ItemOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Replacing the same 1,000 items over and over: with the all-versions change feed on,
	// every replace also writes the version it replaces into the log; with it off, it does not.
	for _, retention := range []time.Duration{0, 24 * time.Hour} {
		b.Run(fmt.Sprintf("upserts-writers=64-retention=%v", retention), func(b *testing.B) {
			_, c := newContainer(b, Options{ChangeFeedRetention: retention}, ContainerSpec{})
			b.ReportAllocs()
			b.SetParallelism(32)
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := next.Add(1) % 1000
					if _, err := c.UpsertItem(body1KB(fmt.Sprint(i), fmt.Sprint(i%100)), ItemOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
	b.Run("writers=64", func(b *testing.B) {
		_, c := newContainer(b, Options{}, ContainerSpec{})
		b.ReportAllocs()
		b.SetParallelism(32) // 2 cores x 32 = 64 concurrent writers
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := next.Add(1)
				if _, err := c.CreateItem(body1KB(fmt.Sprint(i), fmt.Sprint(i%1000)), ItemOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
