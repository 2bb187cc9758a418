package epk

import (
	"math"
	"math/big"
)

// Midpoint returns an EPK m with r.Min < m < r.Max, used as the boundary when
// a range splits in two.
//
// The bounds are read as base-256 fractions (0.b0 b1 b2 ...), the shorter
// padded with zeros; the exact middle then needs at most L+1 bytes, where L is
// the longer bound's length. Midpoint returns the shortest EPK that lies
// strictly inside r and within 1/16 of r's width of that middle (so each half
// gets between about 44% and 56% of the fraction space), because short
// boundaries keep range metadata and logs readable. For example the midpoint
// of the full range is "\x7f" rather than "\x7f\x80".
//
// It reports false only when no EPK of at most L+1 bytes lies inside r: when r
// is not Valid, or when r.Max is r.Min followed by a single zero byte.
func Midpoint(r Range) (EPK, bool) {
	if !r.Valid() {
		return "", false
	}
	n := max(len(r.Min), len(r.Max)) + 1
	a := fraction(r.Min, n)
	b := fraction(r.Max, n)
	if a.Cmp(b) == 0 {
		// Valid with equal fractions means Max is Min followed by zero
		// bytes; only Min + more zeros (shorter than Max) lies between.
		if len(r.Min)+1 < len(r.Max) {
			return r.Min + "\x00", true
		}
		return "", false
	}
	// Here a < b. Both have a zero last byte at length n, so b-a >= 256 and
	// the exact middle mu = (a+b)/2 is strictly inside at length n at the
	// latest; the loop always returns.
	mu := new(big.Int).Add(a, b)
	mu.Rsh(mu, 1)
	slack := new(big.Int).Sub(b, a)
	slack.Rsh(slack, 4)

	var cand, unit, dist, rem big.Int
	for l := 1; l <= n; l++ {
		// unit is one step of the last byte at length l, in length-n units.
		unit.Lsh(big.NewInt(1), uint(8*(n-l)))
		rem.Mod(mu, &unit)
		cand.Sub(mu, &rem) // round down to length l
		if rem.Cmp(new(big.Int).Rsh(&unit, 1)) > 0 {
			cand.Add(&cand, &unit) // nearer to round up (ties go down)
		}
		dist.Sub(&cand, mu)
		dist.Abs(&dist)
		if dist.Cmp(slack) > 0 || cand.Cmp(a) <= 0 || cand.Cmp(b) >= 0 {
			continue
		}
		return epkOfFraction(&cand, n), true
	}
	panic("epk: Midpoint found no candidate in a non-empty range") // unreachable, see above
}

// fraction returns e padded with zeros to n bytes, as an integer.
func fraction(e EPK, n int) *big.Int {
	buf := make([]byte, n)
	copy(buf, e)
	return new(big.Int).SetBytes(buf)
}

// epkOfFraction is the inverse of fraction, with trailing zero bytes dropped:
// the value is strictly inside the range, so the shortest spelling is too.
func epkOfFraction(x *big.Int, n int) EPK {
	buf := x.FillBytes(make([]byte, n))
	for len(buf) > 0 && buf[len(buf)-1] == 0 {
		buf = buf[:len(buf)-1]
	}
	return EPK(buf)
}

// MidpointV1 is Midpoint for a range of version 1 EPKs, which begin with the binary encoding
// of the key's 32-bit hash as a number: it splits the range's hash numbers in half, and
// returns the encoding of the middle one, so that hashed keys spread evenly over the halves
// (the byte space's middle lies where no version 1 EPK does). A bound that does not begin
// with a number, other than Min and Max, gives false; so does a range of a single hash.
func MidpointV1(r Range) (EPK, bool) {
	lo, ok1 := hashNumber(r.Min)
	hi, ok2 := hashNumber(r.Max)
	if !ok1 || !ok2 || !r.Valid() {
		return "", false
	}
	mid := math.Floor((lo + hi) / 2)
	if mid <= lo || mid >= hi {
		return "", false
	}
	return EPK(appendNumber(nil, mid)), true
}

// hashNumber reads the number a version 1 EPK begins with: 0 for Min, 2^32 for Max (past
// every hash).
func hashNumber(e EPK) (float64, bool) {
	switch {
	case e == Min:
		return 0, true
	case e == Max:
		return 1 << 32, true
	case len(e) < 2 || e[0] != byte(KindNumber):
		return 0, false
	}
	u := uint64(e[1]) << 56
	shift := 49
	for i := 2; i < len(e); i++ {
		b := e[i]
		if shift >= 0 {
			u |= uint64(b>>1) << shift
		} else {
			u |= uint64(b>>1) >> -shift
		}
		shift -= 7
		if b&1 == 0 {
			break
		}
	}
	if u >= 1<<63 {
		return math.Float64frombits(u ^ 1<<63), true
	}
	return math.Float64frombits(-u), true
}

// HashNumberV1 is the hash number a version 1 EPK begins with: 0 for Min (and for an EPK
// that does not begin with a number), 2^32 for Max.
func HashNumberV1(e EPK) float64 {
	f, _ := hashNumber(e)
	return f
}
