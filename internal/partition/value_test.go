package partition

import (
	"fmt"
	"testing"
)

func TestETag(t *testing.T) {
	for _, lsn := range []uint64{0, 1, 0xabc, 1<<48 - 1, 1 << 48, 0xfedcba9876543210} {
		want := fmt.Sprintf("00000000-0000-0000-%04x-%012x", uint16(lsn>>48), lsn&(1<<48-1))
		if got := ETag(lsn); got != want {
			t.Errorf("ETag(%#x) = %s, want %s", lsn, got, want)
		}
	}
}
