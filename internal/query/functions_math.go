package query

import (
	"math"
	"math/rand/v2"

	"github.com/partita-db/partita/internal/value"
)

// Mathematical functions. Each takes numbers and returns a number; any non-number argument
// makes the result undefined (ABS("x"), FLOOR(null), POWER(2, null)). Results that are not
// finite stay numbers (SQRT(-1) is NaN, which IS_FINITE_NUMBER reports as not finite).
var mathFunctions = map[string]builtin{
	"ABS":       unaryMath(math.Abs),
	"ACOS":      unaryMath(cosmosAcos),
	"ASIN":      unaryMath(cosmosAsin),
	"ATAN":      unaryMath(cosmosAtan),
	"ATN2":      binaryMath(cosmosAtan2), // ATN2(y, x): the angle of the point (x, y)
	"CEILING":   unaryMath(math.Ceil),
	"COS":       unaryMath(cosmosCos),
	"COT":       unaryMath(cosmosCot),
	"DEGREES":   unaryMath(func(r float64) float64 { return r * 180 / math.Pi }),
	"EXP":       unaryMath(cosmosExp),
	"FLOOR":     unaryMath(math.Floor),
	"LOG":       ranged(1, 2, pure(logFn)),
	"LOG10":     unaryMath(cosmosLog10),
	"NUMBERBIN": ranged(1, 2, pure(numberBin)),
	"PI":        fixed(0, pure(func([]value.Value) value.Value { return numV(math.Pi) })),
	"POWER":     binaryMath(cosmosPow),
	"RADIANS":   unaryMath(func(d float64) float64 { return d * math.Pi / 180 }),
	"RAND":      fixed(0, pure(func([]value.Value) value.Value { return numV(rand.Float64()) })),
	// ROUND rounds midpoints away from zero (-6.5 to -7, 0.5 to 1), as math.Round does.
	"ROUND":  unaryMath(math.Round),
	"SIGN":   unaryMath(sign),
	"SIN":    unaryMath(cosmosSin),
	"SQRT":   unaryMath(math.Sqrt),
	"SQUARE": unaryMath(func(x float64) float64 { return x * x }),
	"TAN":    unaryMath(cosmosTan),
	"TRUNC":  unaryMath(math.Trunc),

	"INTADD":           intBinary(func(a, b int64) (int64, bool) { return a + b, true }),
	"INTSUB":           intBinary(func(a, b int64) (int64, bool) { return a - b, true }),
	"INTMUL":           intBinary(func(a, b int64) (int64, bool) { return a * b, true }),
	"INTDIV":           intBinary(intDiv),
	"INTMOD":           intBinary(intMod),
	"INTBITAND":        intBinary(func(a, b int64) (int64, bool) { return a & b, true }),
	"INTBITOR":         intBinary(func(a, b int64) (int64, bool) { return a | b, true }),
	"INTBITXOR":        intBinary(func(a, b int64) (int64, bool) { return a ^ b, true }),
	"INTBITLEFTSHIFT":  intBinary(func(a, b int64) (int64, bool) { return a << (uint64(b) & 63), true }),
	"INTBITRIGHTSHIFT": intBinary(func(a, b int64) (int64, bool) { return a >> (uint64(b) & 63), true }),
	"INTBITNOT": fixed(1, pure(func(args []value.Value) value.Value {
		a, ok := intArg(args, 0)
		if !ok {
			return undef
		}
		return numV(float64(^a))
	})),
}

func unaryMath(f func(float64) float64) builtin {
	return fixed(1, pure(func(args []value.Value) value.Value {
		x, ok := numArg(args, 0)
		if !ok {
			return undef
		}
		return numV(f(x))
	}))
}

func binaryMath(f func(a, b float64) float64) builtin {
	return fixed(2, pure(func(args []value.Value) value.Value {
		a, ok1 := numArg(args, 0)
		b, ok2 := numArg(args, 1)
		if !ok1 || !ok2 {
			return undef
		}
		return numV(f(a, b))
	}))
}

// LOG(x) is the natural logarithm; LOG(x, base) the logarithm in that base.
func logFn(args []value.Value) value.Value {
	x, ok := numArg(args, 0)
	if !ok {
		return undef
	}
	if len(args) == 1 {
		return numV(cosmosLog(x))
	}
	b, ok := numArg(args, 1)
	if !ok {
		return undef
	}
	return numV(cosmosLogBase(x, b))
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x // 0, -0 and NaN
}

// NumberBin(x, size) rounds x down to a multiple of size (default 1): floor(x/size)·size,
// which with a negative size rounds up (NumberBin(37.752, -100) is 100). A zero size is
// undefined, as documented.
func numberBin(args []value.Value) value.Value {
	x, ok := numArg(args, 0)
	if !ok {
		return undef
	}
	size := 1.0
	if len(args) > 1 {
		if size, ok = numArg(args, 1); !ok || size == 0 {
			return undef
		}
	}
	return numV(math.Floor(x/size) * size)
}

// The Int* functions compute in 64-bit two's complement integers and are undefined unless
// both arguments are integers (IntAdd(20, 0.10) is undefined); overflow wraps. Shift counts
// are taken modulo 64, as the 64-bit shift instructions do.
func intBinary(f func(a, b int64) (int64, bool)) builtin {
	return fixed(2, pure(func(args []value.Value) value.Value {
		a, ok1 := intArg(args, 0)
		b, ok2 := intArg(args, 1)
		if !ok1 || !ok2 {
			return undef
		}
		r, ok := f(a, b)
		if !ok {
			return undef
		}
		return numV(float64(r))
	}))
}

// IntDiv truncates toward zero; dividing by zero is undefined.
func intDiv(a, b int64) (int64, bool) {
	if b == 0 {
		return 0, false
	}
	return a / b, true
}

// IntMod takes the sign of the dividend (IntMod(-12, -5) is -2, IntMod(12, -5) is 2).
func intMod(a, b int64) (int64, bool) {
	if b == 0 {
		return 0, false
	}
	return a % b, true
}
