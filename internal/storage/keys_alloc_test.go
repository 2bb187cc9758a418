//go:build !race

package storage

import "testing"

// The keys a write stages are encoded into a buffer the caller reuses, with no allocation of
// their own: a create stages seven of them or more.
func TestKeyEncodersAllocateNothing(t *testing.T) {
	buf := make([]byte, 0, 256)
	term := IndexTerm(nil, "/a/b", []byte{0x04, 'x', 0})
	for name, f := range map[string]func(){
		"document": func() { buf = DocKey(buf[:0], 1, "0123456789ABCDEF0123456789ABCDEF", 42) },
		"item":     func() { buf = ItemKey(buf[:0], 1, "0123456789ABCDEF0123456789ABCDEF", "item-42") },
		"order":    func() { buf = OrderKey(buf[:0], 1, 2, 42) },
		"index":    func() { buf = IndexKey(buf[:0], 1, 2, term, 42) },
		"log":      func() { buf = LogKey(buf[:0], 1, 2, 42, 0) },
		"image":    func() { buf = ImageKey(buf[:0], 1, "0123456789ABCDEF0123456789ABCDEF", 42, 0) },
		"logical":  func() { buf = LogicalKey(buf[:0], 1, "0123456789ABCDEF0123456789ABCDEF") },
	} {
		if n := testing.AllocsPerRun(100, f); n > 0 {
			t.Errorf("the %s key allocates %.1f times", name, n)
		}
	}
}
