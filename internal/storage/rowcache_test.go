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
	// Once a write is in flight its key is a miss: a reader may see the new value in Pebble
	// before the write is released, and must not find the old one cached on its next read.
	c.Hold(k)
	if v, _, ok := c.Lookup(k); ok {
		t.Fatalf("a held key is still cached: %q", v)
	}
	c.Release(k)
	_, gen0, _ := c.Lookup(k)
	c.Fill(k, []byte("v1"), gen0)
	// A reader that looked up before a write was released must not cache what it read.
	_, gen, _ := c.Lookup(k)
	c.Hold(k)
	c.Release(k)
	c.Fill(k, []byte("stale"), gen)
	if v, _, ok := c.Lookup(k); ok {
		t.Fatalf("a fill from before a release was kept: %q", v)
	}
	// Two readers race a commit: one read the old value before it, the other the new value
	// after it (Pebble shows a batch before its sync ends). Neither may fill while the write
	// is held, or the old value could replace the new one after the new one was seen.
	_, before, _ := c.Lookup(k)
	c.Hold(k)
	c.Hold(k) // holds nest: a second write of the key in flight
	_, during, _ := c.Lookup(k)
	c.Fill(k, []byte("new"), during)
	c.Fill(k, []byte("old"), before)
	if v, _, ok := c.Lookup(k); ok {
		t.Fatalf("filled %q while a write was in flight", v)
	}
	c.Release(k)
	_, during, _ = c.Lookup(k)
	c.Fill(k, []byte("new"), during)
	if v, _, ok := c.Lookup(k); ok {
		t.Fatalf("filled %q while the second write was in flight", v)
	}
	c.Release(k)
	_, after, _ := c.Lookup(k)
	c.Fill(k, []byte("new"), after)
	if v, _, ok := c.Lookup(k); !ok || string(v) != "new" {
		t.Fatalf("after the writes were released: %q %v", v, ok)
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
	nilCache.Hold(k)
	nilCache.Release(k)
	if _, _, ok := nilCache.Lookup(k); ok {
		t.Fatal("a nil cache hit")
	}
}

// Forget drops the values cached in its spans, keeps the others, and refuses a Fill that looked
// up before it (which may carry a value read before the spans changed).
func TestRowCacheForget(t *testing.T) {
	c := NewRowCache(1 << 20)
	for _, k := range []string{"a1", "b1", "b2", "c1"} {
		_, gen, _ := c.Lookup([]byte(k))
		c.Fill([]byte(k), []byte("v"+k), gen)
	}
	_, stale, _ := c.Lookup([]byte("b3"))
	c.Forget([]Span{{Start: []byte("b"), End: []byte("c")}})
	for k, want := range map[string]bool{"a1": true, "b1": false, "b2": false, "c1": true} {
		if _, _, ok := c.Lookup([]byte(k)); ok != want {
			t.Errorf("%s cached after Forget: %v, want %v", k, ok, want)
		}
	}
	c.Fill([]byte("b3"), []byte("old"), stale)
	if _, _, ok := c.Lookup([]byte("b3")); ok {
		t.Error("a Fill that looked up before Forget was taken")
	}
}
