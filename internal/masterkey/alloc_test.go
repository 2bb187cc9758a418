//go:build !race

// The race detector makes sync.Pool drop items at random, so allocations are only counted
// without it.

package masterkey

import "testing"

// The gateway verifies every request with AppendSignature: it must not allocate.
func TestAppendSignatureAllocatesNothing(t *testing.T) {
	k, _ := Parse(emulatorKey)
	var buf [Size]byte
	sign := func() {
		k.AppendSignature(buf[:0], "GET", "docs", "dbs/d/colls/c/docs/x", "Sun, 22 Nov 2026 08:00:00 GMT")
	}
	sign() // fills the pool
	if n := testing.AllocsPerRun(100, sign); n > 0 {
		t.Fatalf("AppendSignature allocates %.1f times per signature", n)
	}
}
