package vectorindex

import (
	"fmt"
	"math"
	"strings"
)

// DataType is a vector embedding's dataType: how the numbers of a vector are stored. Every
// score in this package is computed over float32, so vectors of any type are converted
// first (Convert); int8 and uint8 values convert exactly, float16 values are rounded to
// half precision and then widened, so that a float16 embedding scores what Cosmos DB's
// half-precision storage would score.
type DataType int

const (
	Float32 DataType = iota
	Float16
	Int8
	Uint8
)

// ParseDataType reads a dataType as Cosmos DB spells it ("float32", "float16", "int8",
// "uint8"), in any case.
func ParseDataType(s string) (DataType, error) {
	switch strings.ToLower(s) {
	case "float32":
		return Float32, nil
	case "float16":
		return Float16, nil
	case "int8":
		return Int8, nil
	case "uint8":
		return Uint8, nil
	}
	return 0, fmt.Errorf("vectorindex: unknown data type %q", s)
}

// String returns the data type's name as Cosmos DB spells it.
func (t DataType) String() string {
	switch t {
	case Float32:
		return "float32"
	case Float16:
		return "float16"
	case Int8:
		return "int8"
	case Uint8:
		return "uint8"
	}
	return fmt.Sprintf("DataType(%d)", int(t))
}

// Convert turns the numbers of a JSON array into the float32 vector that is scored and
// indexed. ok is false when a number does not fit the type (a fraction or an out-of-range
// value for int8 and uint8, a value beyond float32's range, NaN or an infinity): such an
// item has no valid vector, and the caller leaves it out of the index and gives it an
// undefined VectorDistance.
func Convert(t DataType, nums []float64) (vec []float32, ok bool) {
	vec = make([]float32, len(nums))
	for i, x := range nums {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		switch t {
		case Int8:
			if x != math.Trunc(x) || x < math.MinInt8 || x > math.MaxInt8 {
				return nil, false
			}
		case Uint8:
			if x != math.Trunc(x) || x < 0 || x > math.MaxUint8 {
				return nil, false
			}
		case Float16:
			x = roundFloat16(x)
			if math.IsInf(x, 0) {
				return nil, false
			}
		case Float32:
		default:
			return nil, false
		}
		f := float32(x)
		if math.IsInf(float64(f), 0) {
			return nil, false
		}
		vec[i] = f
	}
	return vec, true
}

// Int8ToFloat32 widens a vector of int8 values.
func Int8ToFloat32(v []int8) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// Uint8ToFloat32 widens a vector of uint8 values.
func Uint8ToFloat32(v []uint8) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// Float16ToFloat32 widens a vector of IEEE 754 half-precision values given as their bits.
func Float16ToFloat32(v []uint16) []float32 {
	out := make([]float32, len(v))
	for i, h := range v {
		out[i] = float16Value(h)
	}
	return out
}

// float16Value decodes one half-precision number.
func float16Value(h uint16) float32 {
	sign := float32(1)
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0: // zero or subnormal: frac · 2^-24
		return sign * float32(math.Ldexp(frac, -24))
	case 0x1f:
		if frac != 0 {
			return float32(math.NaN())
		}
		return sign * float32(math.Inf(1))
	}
	return sign * float32(math.Ldexp(1024+frac, exp-25))
}

// roundFloat16 rounds x to the nearest half-precision value (ties to even), giving ±Inf
// beyond half precision's largest finite value, 65504.
func roundFloat16(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	_, e := math.Frexp(x) // |x| = f·2^e, f in [0.5, 1): the leading bit is 2^(e-1)
	lead := max(e-1, -14) // below 2^-14 the spacing is that of the subnormals
	quantum := math.Ldexp(1, lead-10)
	r := math.RoundToEven(x/quantum) * quantum
	if math.Abs(r) > 65504 {
		return math.Copysign(math.Inf(1), x)
	}
	return r
}
