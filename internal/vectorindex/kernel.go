package vectorindex

import (
	"encoding/binary"
	"math"
)

// The inner loops of every distance. Go does not vectorise loops on its own, so each kernel
// works eight lanes per iteration into four independent sums: the four sums break the
// dependency chain of a single accumulator (an add has a latency of several cycles), and
// re-slicing each block to a fixed length of eight lets the compiler drop the bounds checks
// inside the block. The sums are float32, as the vectors are; with four partial sums the
// rounding error over a few thousand dimensions stays around 1e-6 relative, far below the
// differences between neighbours that ranking cares about.

// dot returns the inner product of a and b. b must be at least as long as a.
func dot(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		x := a[i : i+8 : i+8]
		y := b[i : i+8 : i+8]
		s0 += x[0]*y[0] + x[4]*y[4]
		s1 += x[1]*y[1] + x[5]*y[5]
		s2 += x[2]*y[2] + x[6]*y[6]
		s3 += x[3]*y[3] + x[7]*y[7]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// sqL2 returns the squared Euclidean distance between a and b. b must be at least as long
// as a.
func sqL2(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		x := a[i : i+8 : i+8]
		y := b[i : i+8 : i+8]
		d0, d1, d2, d3 := x[0]-y[0], x[1]-y[1], x[2]-y[2], x[3]-y[3]
		d4, d5, d6, d7 := x[4]-y[4], x[5]-y[5], x[6]-y[6], x[7]-y[7]
		s0 += d0*d0 + d4*d4
		s1 += d1*d1 + d5*d5
		s2 += d2*d2 + d6*d6
		s3 += d3*d3 + d7*d7
	}
	for ; i < n; i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// dotNorm returns a·b and b·b in one pass, for cosine against a query whose norm is known.
func dotNorm(a, b []float32) (ab, bb float32) {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, t0, t1, t2, t3 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		x := a[i : i+8 : i+8]
		y := b[i : i+8 : i+8]
		s0 += x[0]*y[0] + x[4]*y[4]
		s1 += x[1]*y[1] + x[5]*y[5]
		s2 += x[2]*y[2] + x[6]*y[6]
		s3 += x[3]*y[3] + x[7]*y[7]
		t0 += y[0]*y[0] + y[4]*y[4]
		t1 += y[1]*y[1] + y[5]*y[5]
		t2 += y[2]*y[2] + y[6]*y[6]
		t3 += y[3]*y[3] + y[7]*y[7]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
		t0 += b[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3), (t0 + t1) + (t2 + t3)
}

// dotU8 returns Σ w[i]·c[i] over 8-bit codes, with the query's weights w already scaled
// to integers (see ScalarQuantizer.prepare): integer multiply-adds are markedly cheaper
// in Go than converting every byte to a float. The caller bounds w so that no partial sum
// overflows int32; the four partial sums are added in int64. c must be at least as long
// as w.
func dotU8(w []int32, c []byte) int64 {
	n := len(w)
	c = c[:n]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+8 <= n; i += 8 {
		x := w[i : i+8 : i+8]
		y := c[i : i+8 : i+8]
		s0 += x[0]*int32(y[0]) + x[4]*int32(y[4])
		s1 += x[1]*int32(y[1]) + x[5]*int32(y[5])
		s2 += x[2]*int32(y[2]) + x[6]*int32(y[6])
		s3 += x[3]*int32(y[3]) + x[7]*int32(y[7])
	}
	for ; i < n; i++ {
		s0 += w[i] * int32(c[i])
	}
	return (int64(s0) + int64(s1)) + (int64(s2) + int64(s3))
}

// u8WeightLimit is the largest |w[i]| dotU8 accepts for vectors of n dimensions: each of
// its four partial sums adds at most n/4 + 8 products of a weight and a byte.
func u8WeightLimit(n int) int32 {
	return int32(min(1<<20, (1<<31-1)/(255*(n/4+8))))
}

// dotRaw returns the inner product of a with a vector stored as little-endian float32
// bytes (the raw code). b must hold at least 4·len(a) bytes.
func dotRaw(a []float32, b []byte) float32 {
	n := len(a)
	b = b[:4*n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		x := a[i : i+4 : i+4]
		y := b[4*i : 4*i+16 : 4*i+16]
		s0 += x[0] * math.Float32frombits(binary.LittleEndian.Uint32(y[0:4]))
		s1 += x[1] * math.Float32frombits(binary.LittleEndian.Uint32(y[4:8]))
		s2 += x[2] * math.Float32frombits(binary.LittleEndian.Uint32(y[8:12]))
		s3 += x[3] * math.Float32frombits(binary.LittleEndian.Uint32(y[12:16]))
	}
	for ; i < n; i++ {
		s0 += a[i] * math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return (s0 + s1) + (s2 + s3)
}

// norm2 returns a·a.
func norm2(a []float32) float32 { return dot(a, a) }
