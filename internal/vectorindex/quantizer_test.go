package vectorindex

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

func TestScalarQuantizerRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	sample := randomVectors(rng, 300, 24)
	sample[0][3], sample[1][3] = 5, 5 // a dimension is constant in no sample, but...
	for i := range sample {
		sample[i][5] = 0.25 // ...this one is: its scale is 0
	}
	s, err := TrainScalar(Euclidean, sample)
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	q, err := UnmarshalQuantizer(data)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := q.MarshalBinary()
	if !bytes.Equal(data, again) || q.Dimensions() != 24 {
		t.Fatal("the quantizer does not survive a round trip")
	}
	for _, v := range sample[:50] {
		c1, _ := EncodeVector(Euclidean, s, v)
		c2, _ := EncodeVector(Euclidean, q, v)
		if !bytes.Equal(c1, c2) {
			t.Fatal("a decoded quantizer encodes differently")
		}
		x := make([]float32, 24)
		if !decodeCode(x, c1, q) {
			t.Fatal("cannot decode a code")
		}
		for i := range v {
			// Within half a step of the original (the step is (max−min)/255).
			if step := s.scale[i]; math.Abs(float64(x[i]-v[i])) > float64(step)/2+1e-6 {
				t.Fatalf("dimension %d: %v decoded as %v (step %v)", i, v[i], x[i], step)
			}
		}
	}
	for _, bad := range [][]byte{nil, {codeSQ8}, {codeSQ8, 9, 1}, {codeSQ8, sqVersion, 2, 0, 0}, {77}} {
		if _, err := UnmarshalQuantizer(bad); err == nil {
			t.Errorf("UnmarshalQuantizer(%v) accepted garbage", bad)
		}
	}
	if _, err := TrainScalar(Cosine, nil); err == nil {
		t.Error("trained on nothing")
	}
}

// The asymmetric distance from a float query to a code tracks the exact distance to the
// vector closely, for raw and quantized codes and for every kind of comparison.
func TestQueryDistance(t *testing.T) {
	base, _ := clustered(400, 0, 48, 5, 0.5, 11)
	for _, m := range []Metric{Cosine, DotProduct, Euclidean} {
		quant, err := Train(m, base)
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []distKind{m.searchKind(), m.buildKind()} {
			var q query
			q.reset(m, kind, base[0], quant)
			for _, v := range base[1:60] {
				exact := exactDist(m, kind, base[0], v)
				raw := encodeCode(m, nil, v)
				sq := encodeCode(m, quant, v)
				if d := q.dist(raw); !approxEqual(float64(d), exact, 1e-4*max(1, math.Abs(exact))) {
					t.Fatalf("%v kind %d: raw distance %v, exact %v", m, kind, d, exact)
				}
				// A quantized code is compared exactly with the vector it decodes to
				// (which is within half a step of v, see the round trip test), up to the
				// rounding of the query's integer weights.
				x := make([]float32, len(v))
				decodeCode(x, sq, quant)
				if m == Cosine {
					x = normalized(nil, x)
				}
				if d, e := q.dist(sq), exactDist(m, kind, base[0], x); !approxEqual(float64(d), e, 1e-3*max(1, math.Abs(e))) {
					t.Fatalf("%v kind %d: quantized distance %v, exact to the decoded vector %v", m, kind, d, e)
				}
				if d := q.dist(sq); !approxEqual(float64(d), exact, 0.1*max(1, math.Abs(exact))) {
					t.Fatalf("%v kind %d: quantized distance %v, exact %v", m, kind, d, exact)
				}
			}
			if d := q.dist([]byte{codeSQ8, 0, 0}); !math.IsInf(float64(d), 1) {
				t.Errorf("a truncated code is at distance %v, want +Inf", d)
			}
		}
	}
}

// exactDist is what query.dist approximates.
func exactDist(m Metric, kind distKind, a, b []float32) float64 {
	switch kind {
	case kindCos:
		return 1 - Cosine.Score(a, b)
	case kindNegDot:
		return -DotProduct.Score(a, b)
	}
	if m == Cosine {
		a, b = normalized(nil, a), normalized(nil, b)
	}
	e := Euclidean.Score(a, b)
	return e * e
}

func TestEncodeVectorChecks(t *testing.T) {
	if _, err := EncodeVector(Cosine, nil, []float32{1, float32(math.NaN())}); err == nil {
		t.Error("encoded a NaN")
	}
	s, _ := TrainScalar(Cosine, [][]float32{{1, 2}, {3, 4}})
	if _, err := EncodeVector(Cosine, s, []float32{1, 2, 3}); err == nil {
		t.Error("encoded a vector of the wrong length")
	}
	// A zero vector encodes, and is at cosine distance 1 (score 0) from anything.
	c, err := EncodeVector(Cosine, s, []float32{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	var q query
	q.reset(Cosine, kindCos, []float32{1, 1}, s)
	if d := q.dist(c); d != 1 {
		t.Errorf("zero vector at cosine distance %v, want 1", d)
	}
}
