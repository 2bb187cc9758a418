package vectorindex

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestScoreHandComputed(t *testing.T) {
	a := []float32{1, 2, 3}
	b := []float32{4, -5, 6}
	// a·b = 4 − 10 + 18 = 12; |a| = √14; |b| = √77; |a−b|² = 9 + 49 + 9 = 67.
	cases := []struct {
		m    Metric
		a, b []float32
		want float64
	}{
		{Cosine, a, b, 12 / (math.Sqrt(14) * math.Sqrt(77))},
		{DotProduct, a, b, 12},
		{Euclidean, a, b, math.Sqrt(67)},
		{Cosine, a, a, 1},
		{Cosine, a, []float32{-1, -2, -3}, -1},
		{Cosine, []float32{1, 0}, []float32{0, 1}, 0},
		{Euclidean, a, a, 0},
		// A zero vector has no direction: its cosine is 0, with itself too, never NaN.
		{Cosine, []float32{0, 0, 0}, b, 0},
		{Cosine, a, []float32{0, 0, 0}, 0},
		{Cosine, []float32{0, 0, 0}, []float32{0, 0, 0}, 0},
		{DotProduct, []float32{0, 0, 0}, b, 0},
		{Euclidean, []float32{0, 0, 0}, []float32{3, 4, 0}, 5},
		{Cosine, []float32{}, []float32{}, 0},
	}
	for _, c := range cases {
		if got := c.m.Score(c.a, c.b); !approxEqual(got, c.want, 1e-6) {
			t.Errorf("%v.Score(%v, %v) = %v, want %v", c.m, c.a, c.b, got, c.want)
		}
	}
	if s := Cosine.Score([]float32{1, 2}, []float32{1, 2, 3}); !math.IsNaN(s) {
		t.Errorf("mismatched lengths scored %v, want NaN", s)
	}
}

func TestBetterAndDistance(t *testing.T) {
	if !Cosine.Better(0.9, 0.1) || Cosine.Better(0.1, 0.9) || !DotProduct.Better(5, -5) {
		t.Error("cosine and dot product rank higher first")
	}
	if !Euclidean.Better(1, 2) || Euclidean.Better(2, 1) {
		t.Error("euclidean ranks lower first")
	}
	if Cosine.Better(math.NaN(), 0) || Euclidean.Better(math.NaN(), 0) {
		t.Error("NaN is never better")
	}
	a, b, c := []float32{1, 0}, []float32{1, 0.1}, []float32{0, 1}
	for _, m := range []Metric{Cosine, DotProduct, Euclidean} {
		closer := m.Better(m.Score(a, b), m.Score(a, c))
		if closer != (m.Distance(a, b) < m.Distance(a, c)) {
			t.Errorf("%v: Distance does not order as Score does", m)
		}
	}
}

func TestParseMetric(t *testing.T) {
	for s, want := range map[string]Metric{"cosine": Cosine, "DotProduct": DotProduct, "EUCLIDEAN": Euclidean} {
		if m, err := ParseMetric(s); err != nil || m != want {
			t.Errorf("ParseMetric(%q) = %v, %v", s, m, err)
		}
		if m, _ := ParseMetric(want.String()); m != want {
			t.Errorf("%v does not round-trip through String", want)
		}
	}
	if _, err := ParseMetric("manhattan"); err == nil {
		t.Error("ParseMetric accepted an unknown function")
	}
}

// The unrolled kernels must agree with the obvious loops at every length, remainders
// included.
func TestKernelsMatchNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 37; n++ {
		a := randomVectors(rng, 1, n)[0]
		b := randomVectors(rng, 1, n)[0]
		var d, l, bb float64
		for i := range a {
			d += float64(a[i]) * float64(b[i])
			l += float64(a[i]-b[i]) * float64(a[i]-b[i])
			bb += float64(b[i]) * float64(b[i])
		}
		ab, nb := dotNorm(a, b)
		if !approxEqual(float64(dot(a, b)), d, 1e-5) || !approxEqual(float64(sqL2(a, b)), l, 1e-5) ||
			!approxEqual(float64(ab), d, 1e-5) || !approxEqual(float64(nb), bb, 1e-5) {
			t.Errorf("n=%d: float kernels disagree with the naive loops", n)
		}
		raw := encodeCode(DotProduct, nil, b)[codeHeader:]
		if !approxEqual(float64(dotRaw(a, raw)), d, 1e-5) {
			t.Errorf("n=%d: dotRaw = %v, want %v", n, dotRaw(a, raw), d)
		}
		w := make([]int32, n)
		c := make([]byte, n)
		var want int64
		for i := range w {
			w[i] = int32(rng.IntN(2*int(u8WeightLimit(n))+1)) - u8WeightLimit(n)
			c[i] = byte(rng.IntN(256))
			want += int64(w[i]) * int64(c[i])
		}
		if got := dotU8(w, c); got != want {
			t.Errorf("n=%d: dotU8 = %d, want %d", n, got, want)
		}
	}
}

// dotU8's weight bound holds for the largest vectors Cosmos DB indexes: all weights and
// bytes at their maximum do not overflow.
func TestDotU8NoOverflow(t *testing.T) {
	for _, n := range []int{1, 7, 128, 1536, 4096} {
		lim := u8WeightLimit(n)
		w := make([]int32, n)
		c := make([]byte, n)
		for i := range w {
			w[i], c[i] = lim, 255
		}
		if got, want := dotU8(w, c), int64(lim)*255*int64(n); got != want {
			t.Errorf("n=%d: dotU8 at the limit = %d, want %d", n, got, want)
		}
	}
}
