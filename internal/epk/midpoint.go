package epk

import "math/big"

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
