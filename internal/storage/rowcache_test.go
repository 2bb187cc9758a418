package storage

import (
	"fmt"
	"testing"
)

func TestRowCache(t *testing.T) {
	c := NewRowCache(16 * 4096)
	k := []byte("k")
	if _, gen, ok := c.Lookup(k); ok {
		t.Fatal("hit in an empty cache")
	} else {
		c.Fill(k, []byte("v1"), gen)
	}
	if v, _, ok := c.Lookup(k); !ok || string(v) != "v1" {
		t.Fatalf("after Fill: %q %v", v, ok)
	}
	// A reader that looked up before a write's invalidation must not cache what it read.
	c.Invalidate(k)
	_, gen, _ := c.Lookup(k)
	c.Invalidate(k)
	c.Fill(k, []byte("stale"), gen)
	if v, _, ok := c.Lookup(k); ok {
		t.Fatalf("a fill from before an invalidation was kept: %q", v)
	}
	// The cache stays within its size, shard by shard.
	for i := range 10000 {
		key := []byte(fmt.Sprintf("key-%d", i))
		_, gen, _ := c.Lookup(key)
		c.Fill(key, make([]byte, 100), gen)
	}
	for i := range c.shards {
		if s := &c.shards[i]; s.bytes > c.perShard || s.bytes <= 0 {
			t.Fatalf("shard %d holds %d bytes of %d", i, s.bytes, c.perShard)
		}
	}
	var nilCache *RowCache
	nilCache.Fill(k, []byte("v"), 0)
	nilCache.Invalidate(k)
	if _, _, ok := nilCache.Lookup(k); ok {
		t.Fatal("a nil cache hit")
	}
}
