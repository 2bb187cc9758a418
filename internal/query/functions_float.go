package query

import "math"

// Cosmos's transcendental functions return the correctly rounded double: LOG10(5) is
// 0.6989700043360189 and TAN(124.1332) is -24.80651023035602 in the documented samples, where
// Go's math package (accurate to about one ulp) gives 0.6989700043360187 and
// -24.806510230356018. To reproduce them this file evaluates exp, log, sin, cos and their
// inverses in double-double arithmetic (about 106 bits) and rounds once at the end, which
// yields the correctly rounded result except in astronomically rare near-ties.

// dd is an unevaluated sum hi+lo with |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return
}

func quickTwoSum(a, b float64) (s, e float64) {
	s = a + b
	e = b - (s - a)
	return
}

func twoProd(a, b float64) (p, e float64) {
	p = a * b
	e = math.FMA(a, b, -p)
	return
}

func ddF(f float64) dd { return dd{f, 0} }

func (x dd) add(y dd) dd {
	s, e := twoSum(x.hi, y.hi)
	t, f := twoSum(x.lo, y.lo)
	e += t
	s, e = quickTwoSum(s, e)
	e += f
	s, e = quickTwoSum(s, e)
	return dd{s, e}
}

func (x dd) neg() dd { return dd{-x.hi, -x.lo} }

func (x dd) sub(y dd) dd { return x.add(y.neg()) }

func (x dd) mul(y dd) dd {
	p, e := twoProd(x.hi, y.hi)
	e += x.hi*y.lo + x.lo*y.hi
	p, e = quickTwoSum(p, e)
	return dd{p, e}
}

func (x dd) mulF(f float64) dd {
	p, e := twoProd(x.hi, f)
	e += x.lo * f
	p, e = quickTwoSum(p, e)
	return dd{p, e}
}

func (x dd) div(y dd) dd {
	q1 := x.hi / y.hi
	r := x.sub(y.mulF(q1))
	q2 := r.hi / y.hi
	r = r.sub(y.mulF(q2))
	q3 := r.hi / y.hi
	s, e := quickTwoSum(q1, q2)
	return dd{s, e}.add(ddF(q3))
}

func (x dd) divF(f float64) dd { return x.div(ddF(f)) }

// float rounds to the nearest double.
func (x dd) float() float64 { return x.hi + x.lo }

// Constants split into doubles whose sum carries about 160 bits (computed with math/big).
var (
	ddPi     = dd{3.141592653589793116, 1.2246467991473532e-16}
	ddHalfPi = dd{1.5707963267948966, 6.123233995736766e-17}
	halfPi3  = -1.4973849048591698e-33 // third part of π/2, for argument reduction
	ddLn2    = dd{0.69314718055994529, 2.3190468138462996e-17}
	ddLn10   = dd{2.3025850929940459, -2.1707562233822494e-16}
)

// ddExp is e^x. Reduction: x = k·ln2 + r, then r is scaled down by 2^10 so that a short
// Taylor series of expm1 converges, and the result is squared back up.
func ddExp(x dd) dd {
	if x.hi > 709.8 {
		return ddF(math.Inf(1))
	}
	if x.hi < -745.2 {
		return ddF(0)
	}
	k := math.Round(x.hi / ddLn2.hi)
	r := x.sub(ddLn2.mulF(k))
	const squarings = 10
	r = dd{math.Ldexp(r.hi, -squarings), math.Ldexp(r.lo, -squarings)}
	// expm1(r) = r + r²/2! + r³/3! + ...
	s := r
	term := r
	for i := 2; i < 20; i++ {
		term = term.mul(r).divF(float64(i))
		s = s.add(term)
		if math.Abs(term.hi) < 1e-36 {
			break
		}
	}
	// expm1(2a) = 2·expm1(a) + expm1(a)²
	for i := 0; i < squarings; i++ {
		s = s.mulF(2).add(s.mul(s))
	}
	s = s.add(ddF(1))
	ki := int(k)
	if ki < -1000 {
		// Scale in two steps so that no intermediate underflows before the final rounding.
		s = dd{math.Ldexp(s.hi, -1000), math.Ldexp(s.lo, -1000)}
		ki += 1000
	}
	return dd{math.Ldexp(s.hi, ki), math.Ldexp(s.lo, ki)}
}

// ddLog is ln x for finite x > 0: one Newton step on e^y = m from Go's estimate, with x split
// into m·2^e so that e^-y can neither overflow nor underflow.
func ddLog(x float64) dd {
	m, e := math.Frexp(x) // x = m·2^e, m in [0.5, 1)
	y := math.Log(m)
	// y' = y + m·e^-y - 1
	t := ddExp(ddF(-y)).mulF(m).sub(ddF(1))
	l := ddF(y).add(t)
	return l.add(ddLn2.mulF(float64(e)))
}

// ddSinCos returns sin x and cos x. x is reduced by multiples of π/2 using a three-part π/2,
// accurate enough even when x is the double nearest a multiple of π/2 (TAN(PI()/2)); the
// caller falls back to Go for arguments too large for this reduction.
func ddSinCos(x dd) (sin, cos dd) {
	k := math.Round(x.hi / ddHalfPi.hi)
	p, e := twoProd(k, ddHalfPi.hi)
	r := dd{x.hi, 0}.sub(dd{p, e})
	r = r.sub(ddF(k * ddHalfPi.lo)).sub(ddF(math.FMA(k, ddHalfPi.lo, -k*ddHalfPi.lo)))
	r = r.sub(ddF(k * halfPi3)).add(ddF(x.lo))
	r2 := r.mul(r)
	// Taylor series, |r| <= π/4.
	s, c := r, ddF(1)
	st, ct := r, ddF(1)
	for i := 1; i < 30; i++ {
		st = st.mul(r2).divF(float64((2 * i) * (2*i + 1))).neg()
		ct = ct.mul(r2).divF(float64((2*i - 1) * (2 * i))).neg()
		s = s.add(st)
		c = c.add(ct)
		if math.Abs(st.hi) < 1e-36 && math.Abs(ct.hi) < 1e-36 {
			break
		}
	}
	switch int64(k) & 3 {
	case 0:
		return s, c
	case 1:
		return c, s.neg()
	case 2:
		return s.neg(), c.neg()
	}
	return c.neg(), s
}

// maxReduce bounds the arguments ddSinCos reduces itself: beyond it k·π/2 loses too many of
// the constant's bits, and Go's Payne-Hanek reduction is used instead.
const maxReduce = 1 << 28

func cosmosSin(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > maxReduce {
		return math.Sin(x)
	}
	s, _ := ddSinCos(ddF(x))
	return s.float()
}

func cosmosCos(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > maxReduce {
		return math.Cos(x)
	}
	_, c := ddSinCos(ddF(x))
	return c.float()
}

func cosmosTan(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > maxReduce {
		return math.Tan(x)
	}
	s, c := ddSinCos(ddF(x))
	return s.div(c).float()
}

func cosmosCot(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > maxReduce {
		return 1 / math.Tan(x)
	}
	if x == 0 {
		return math.Copysign(math.Inf(1), x)
	}
	s, c := ddSinCos(ddF(x))
	return c.div(s).float()
}

func cosmosExp(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x > 709.8 || x < -708 {
		return math.Exp(x) // overflow, underflow to subnormals: Go's answer is as good
	}
	return ddExp(ddF(x)).float()
}

func cosmosLog(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return math.Log(x)
	}
	return ddLog(x).float()
}

func cosmosLog10(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return math.Log10(x)
	}
	return ddLog(x).div(ddLn10).float()
}

// cosmosLogBase is log_b(x), rounded once: LOG(2, 10) is 0.3010299956639812 in the samples,
// where ln 2 / ln 10 in doubles gives 0.30102999566398114.
func cosmosLogBase(x, b float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) || !(b > 0) || math.IsInf(b, 0) || b == 1 {
		return math.Log(x) / math.Log(b)
	}
	return ddLog(x).div(ddLog(b)).float()
}

// cosmosAtan refines Go's arctangent by a Newton step on sin θ - x·cos θ = 0.
func cosmosAtan(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e300 {
		return math.Atan(x)
	}
	return refineAngle(math.Atan(x), 1, x)
}

// cosmosAtan2 is the angle of the point (x, y), refined like cosmosAtan.
func cosmosAtan2(y, x float64) float64 {
	t := math.Atan2(y, x)
	if x == 0 || y == 0 || math.IsNaN(t) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return t
	}
	// Scale the point so that the residual's products cannot overflow or underflow.
	_, ex := math.Frexp(x)
	_, ey := math.Frexp(y)
	sc := -max(ex, ey)
	return refineAngle(t, math.Ldexp(x, sc), math.Ldexp(y, sc))
}

// refineAngle corrects θ ≈ atan2(y, x) by Newton on f(θ) = x·sin θ - y·cos θ.
func refineAngle(t, x, y float64) float64 {
	s, c := ddSinCos(ddF(t))
	f := s.mulF(x).sub(c.mulF(y))
	fp := c.mulF(x).add(s.mulF(y))
	if fp.hi == 0 {
		return t
	}
	return ddF(t).sub(f.div(fp)).float()
}

func cosmosAsin(x float64) float64 {
	t := math.Asin(x)
	if math.IsNaN(t) || x == 0 || math.Abs(x) == 1 {
		return t
	}
	// Newton on sin θ - x = 0, twice: near |x| = 1 the first step alone is not enough.
	v := ddF(t)
	for range 2 {
		s, c := ddSinCos(v)
		if c.hi == 0 {
			break
		}
		v = v.sub(s.sub(ddF(x)).div(c))
	}
	return v.float()
}

func cosmosAcos(x float64) float64 {
	t := math.Acos(x)
	if math.IsNaN(t) || x == 1 {
		return t
	}
	if x == -1 {
		return ddPi.float()
	}
	// Newton on cos θ - x = 0.
	v := ddF(t)
	for range 2 {
		s, c := ddSinCos(v)
		if s.hi == 0 {
			break
		}
		v = v.add(c.sub(ddF(x)).div(s))
	}
	return v.float()
}

// cosmosPow is x^y rounded once, through e^(y·ln|x|) in double-double; Go's Pow handles the
// special cases (zeros, infinities, NaN, negative bases with fractional exponents).
func cosmosPow(x, y float64) float64 {
	p := math.Pow(x, y)
	if x == 0 || y == 0 || x == 1 || math.IsNaN(p) || math.IsInf(p, 0) || p == 0 ||
		math.IsInf(x, 0) || math.IsInf(y, 0) || math.Abs(p) < 1e-300 {
		return p
	}
	neg := false
	if x < 0 {
		// A negative base has a real power only for an integral exponent (else p is NaN,
		// handled above); its sign is that of the base when the exponent is odd.
		neg = math.Mod(y, 2) != 0
		x = -x
	}
	l := ddLog(x).mulF(y)
	r := ddExp(l).float()
	if neg {
		r = -r
	}
	return r
}
