//go:build !race

// The race detector makes sync.Pool drop items at random, so allocations are only counted
// without it.

package cosmos

import "testing"

// A valid signature is checked without allocating: the check runs on every request.
func TestAuthenticateAllocatesNothing(t *testing.T) {
	k, now, date, res, good := authFixture(t)
	r := authRequest(good, date)
	check := func() {
		if err := k.authenticate(r, res, now); err != nil {
			t.Fatal(err)
		}
	}
	check() // fills the signer pool and the date cache
	if n := testing.AllocsPerRun(100, check); n > 0 {
		t.Fatalf("authenticate allocates %.1f times per request", n)
	}
}
