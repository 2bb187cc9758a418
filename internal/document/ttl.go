package document

import (
	"math"
	"strconv"
)

// MaxTTL is the largest time to live Cosmos accepts, in seconds: an int32.
const MaxTTL = math.MaxInt32

// ValidTTL reports whether f is a time to live Cosmos accepts, on an item ("ttl") or on a
// container ("defaultTtl"): -1 (never expires) or a whole number of seconds from 1 to MaxTTL.
// 0, fractions and anything larger or smaller are refused.
func ValidTTL(f float64) bool {
	return f == -1 || f >= 1 && f <= MaxTTL && f == math.Trunc(f)
}

// ExpiryFields reads what an item's expiry is computed from: its top-level "_ts" (the time of
// its last write, which the server stamps) and its own "ttl", when that is a valid one (see
// ValidTTL); an invalid ttl, which can only have been written while the container had time to
// live off, counts as none. It only scans the top level, skipping nested values.
func ExpiryFields(b []byte) (ts int64, ttl int64, hasTTL bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return 0, 0, false
	}
	members(b, i, func(m member) bool {
		switch m.key {
		case "_ts":
			if n, err := strconv.ParseInt(string(b[m.valStart:m.end]), 10, 64); err == nil {
				ts = n
			}
		case "ttl":
			if f, err := strconv.ParseFloat(string(b[m.valStart:m.end]), 64); err == nil && ValidTTL(f) {
				ttl, hasTTL = int64(f), true
			}
		}
		return true
	})
	return ts, ttl, hasTTL
}
