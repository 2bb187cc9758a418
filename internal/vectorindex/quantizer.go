package vectorindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Quantizer compresses vectors into codes. Graph traversal and the quantizedFlat scan
// compare the query (kept in float32) with codes — an asymmetric distance, so only the
// stored side loses precision — and the few best candidates are then re-ranked with exact
// scores over the full vectors. A trained quantizer is immutable and safe to share.
//
// The only implementation is ScalarQuantizer (8 bits per dimension). The interface is
// sealed so that every code format is one this package can read.
type Quantizer interface {
	// Dimensions is the length of the vectors the quantizer was trained on.
	Dimensions() int
	// MarshalBinary serialises the quantizer; UnmarshalQuantizer reads it back.
	MarshalBinary() ([]byte, error)

	format() byte
	appendPayload(dst []byte, v []float32) []byte
	decodePayload(dst []float32, payload []byte)
	payloadLen() int
	prepare(q *query)
	dotPayload(q *query, payload []byte) float32
}

// UnmarshalQuantizer reads a quantizer written by its MarshalBinary.
func UnmarshalQuantizer(data []byte) (Quantizer, error) {
	if len(data) == 0 {
		return nil, errors.New("vectorindex: empty quantizer")
	}
	switch data[0] {
	case codeSQ8:
		s := new(ScalarQuantizer)
		if err := s.UnmarshalBinary(data); err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, fmt.Errorf("vectorindex: unknown quantizer kind %d", data[0])
}

// Train builds the default quantizer (ScalarQuantizer) from a sample of vectors.
func Train(m Metric, sample [][]float32) (Quantizer, error) {
	s, err := TrainScalar(m, sample)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// A code is what the index keeps of a vector:
//
//	byte 0     format: codeRaw or a quantizer's format
//	bytes 1-4  aux, float32 little-endian: 1/|x| for Cosine (0 for a zero vector), |x|²
//	           otherwise, where x is the vector as the code reproduces it
//	bytes 5-   payload: dims float32s (raw) or the quantizer's bytes
//
// Keeping the norm term in the code makes every distance one inner product: |q−x|² =
// |q|² − 2q·x + |x|², 1 − cos = 1 − (q̂·x)/|x|, and −q·x. Cosine vectors are normalised before
// encoding, so that their quantization range is spent on direction alone. Raw codes are
// what the index stores before its quantizer is trained; they stay valid afterwards, so a
// graph may hold both formats and every reader handles both.
const (
	codeRaw    byte = 1
	codeSQ8    byte = 2
	codeHeader      = 5
)

// EncodeVector returns the code of v for an index with metric m and quantizer q (nil: a raw
// code). quantizedFlat callers store these codes beside their items; the graph makes its
// own on Insert.
func EncodeVector(m Metric, q Quantizer, v []float32) ([]byte, error) {
	if err := checkVector(v, -1); err != nil {
		return nil, err
	}
	if q != nil && q.Dimensions() != len(v) {
		return nil, fmt.Errorf("%w: vector has %d dimensions, quantizer %d", ErrDimensions, len(v), q.Dimensions())
	}
	return encodeCode(m, q, v), nil
}

// ErrDimensions reports a vector whose length is not the index's.
var ErrDimensions = errors.New("vectorindex: wrong number of dimensions")

// checkVector rejects vectors of the wrong length (dims < 0: any length) and vectors holding
// NaN or infinities, which would make every comparison with them meaningless.
func checkVector(v []float32, dims int) error {
	if dims >= 0 && len(v) != dims {
		return fmt.Errorf("%w: got %d, want %d", ErrDimensions, len(v), dims)
	}
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return errors.New("vectorindex: vector holds NaN or an infinity")
		}
	}
	return nil
}

// normalized returns v scaled to unit length (a zero vector stays zero), in dst's storage.
func normalized(dst, v []float32) []float32 {
	dst = append(dst[:0], v...)
	n := norm2(v)
	if n <= 0 {
		return dst
	}
	inv := float32(1 / math.Sqrt(float64(n)))
	for i := range dst {
		dst[i] *= inv
	}
	return dst
}

// auxOf is the norm term a code carries for the vector x it reproduces.
func auxOf(m Metric, x []float32) float32 {
	n := norm2(x)
	if m == Cosine {
		if n <= 0 {
			return 0
		}
		return float32(1 / math.Sqrt(float64(n)))
	}
	return n
}

func encodeCode(m Metric, q Quantizer, v []float32) []byte {
	w := v
	if m == Cosine {
		w = normalized(nil, v)
	}
	if q == nil {
		code := make([]byte, codeHeader, codeHeader+4*len(w))
		code[0] = codeRaw
		binary.LittleEndian.PutUint32(code[1:], math.Float32bits(auxOf(m, w)))
		for _, x := range w {
			code = binary.LittleEndian.AppendUint32(code, math.Float32bits(x))
		}
		return code
	}
	code := make([]byte, codeHeader, codeHeader+q.payloadLen())
	code[0] = q.format()
	code = q.appendPayload(code, w)
	x := make([]float32, len(w))
	q.decodePayload(x, code[codeHeader:])
	aux := auxOf(m, x)
	if m == Cosine && norm2(w) == 0 {
		// The codes of a zero vector decode to a small non-zero one (the grid need not
		// hold 0); its cosine must still be 0, which aux = 0 gives.
		aux = 0
	}
	binary.LittleEndian.PutUint32(code[1:], math.Float32bits(aux))
	return code
}

// decodeCode writes into dst (of the index's length) the vector a code reproduces: for
// Cosine, the normalised vector. ok is false for a code this quantizer cannot read.
func decodeCode(dst []float32, code []byte, q Quantizer) bool {
	if len(code) < codeHeader {
		return false
	}
	payload := code[codeHeader:]
	switch code[0] {
	case codeRaw:
		if len(payload) != 4*len(dst) {
			return false
		}
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(payload[4*i:]))
		}
		return true
	default:
		if q == nil || code[0] != q.format() || len(payload) != q.payloadLen() || q.Dimensions() != len(dst) {
			return false
		}
		q.decodePayload(dst, payload)
		return true
	}
}

// query is a vector prepared for comparison with many codes: its norm, and the tables of
// the quantizer in force. It is reused (reset) rather than reallocated, since the graph
// prepares one per pruning step.
type query struct {
	kind distKind
	v    []float32 // the vector; normalised for Cosine
	vv   float32   // v·v
	q    Quantizer
	sq   *ScalarQuantizer // q, when it is one: called directly, not through the interface

	// ScalarQuantizer tables: x = min + c·scale, so q·x = v·min + Σ (v·scale)[i]·c[i],
	// with v·scale held as integers wi = round((v·scale)/winv).
	wi   []int32
	winv float32
	base float32
}

// reset prepares v (of the index's length) for comparisons of the given kind.
func (q *query) reset(m Metric, kind distKind, v []float32, quant Quantizer) {
	q.kind = kind
	if m == Cosine {
		q.v = normalized(q.v, v)
	} else {
		q.v = append(q.v[:0], v...)
	}
	q.vv = norm2(q.v)
	q.q, q.sq = quant, nil
	if quant != nil && quant.Dimensions() == len(v) {
		quant.prepare(q)
		q.sq, _ = quant.(*ScalarQuantizer)
	} else {
		q.q = nil
	}
}

// dist compares the query with a code; lower is closer. A code the query cannot read (a
// quantizer format with no quantizer, a wrong length) is infinitely far, so a damaged
// record degrades results instead of failing every search that meets it.
func (q *query) dist(code []byte) float32 {
	if len(code) < codeHeader {
		return float32(math.Inf(1))
	}
	aux := math.Float32frombits(binary.LittleEndian.Uint32(code[1:5]))
	payload := code[codeHeader:]
	var d float32
	switch {
	case q.sq != nil && code[0] == codeSQ8 && len(payload) == len(q.v):
		d = q.base + float32(dotU8(q.wi, payload))*q.winv
	case code[0] == codeRaw && len(payload) == 4*len(q.v):
		d = dotRaw(q.v, payload)
	case q.q != nil && code[0] == q.q.format() && len(payload) == q.q.payloadLen():
		d = q.q.dotPayload(q, payload)
	default:
		return float32(math.Inf(1))
	}
	switch q.kind {
	case kindCos:
		return 1 - d*aux
	case kindNegDot:
		return -d
	}
	return max(0, q.vv-2*d+aux)
}
