package vectorindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ScalarQuantizer maps each dimension linearly onto 256 levels between the smallest and the
// largest value the training sample holds in that dimension: one byte per dimension, a
// quarter of float32. Values outside the trained range (vectors inserted after training
// can have them) are clamped to the nearest end; that only makes their approximate
// distances coarser, and re-ranking with full vectors corrects the final order.
//
// Scalar rather than product quantization: the graph compares stored vectors with each
// other while it is built (pruning), which needs codes that decode cheaply and closely;
// eight bits per dimension keep the graph's neighbourhoods almost exactly those of the full
// vectors, and a 1,000-vector sample is plenty to fit a range per dimension, where it
// would be thin for 256 centroids per sub-space.
type ScalarQuantizer struct {
	min   []float32
	scale []float32 // (max − min) / 255; 0 for a dimension with a single value
}

const sqVersion = 1

// TrainScalar fits a ScalarQuantizer to a sample of vectors (normalised first for Cosine,
// as the codes will be).
func TrainScalar(m Metric, sample [][]float32) (*ScalarQuantizer, error) {
	if len(sample) == 0 {
		return nil, errors.New("vectorindex: cannot train a quantizer on no vectors")
	}
	dims := len(sample[0])
	if dims == 0 {
		return nil, errors.New("vectorindex: cannot train a quantizer on empty vectors")
	}
	lo := make([]float32, dims)
	hi := make([]float32, dims)
	for i := range lo {
		lo[i] = float32(math.Inf(1))
		hi[i] = float32(math.Inf(-1))
	}
	var buf []float32
	for _, v := range sample {
		if err := checkVector(v, dims); err != nil {
			return nil, err
		}
		if m == Cosine {
			buf = normalized(buf, v)
			v = buf
		}
		for i, x := range v {
			lo[i] = min(lo[i], x)
			hi[i] = max(hi[i], x)
		}
	}
	s := &ScalarQuantizer{min: lo, scale: make([]float32, dims)}
	for i := range lo {
		s.scale[i] = (hi[i] - lo[i]) / 255
	}
	return s, nil
}

// Dimensions is the vectors' length.
func (s *ScalarQuantizer) Dimensions() int { return len(s.min) }

// MarshalBinary writes the quantizer: kind, version, dimensions, then the minimum and the
// step of each dimension.
func (s *ScalarQuantizer) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 2+binary.MaxVarintLen64+8*len(s.min))
	b = append(b, codeSQ8, sqVersion)
	b = binary.AppendUvarint(b, uint64(len(s.min)))
	for _, x := range s.min {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	for _, x := range s.scale {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b, nil
}

// UnmarshalBinary reads what MarshalBinary wrote.
func (s *ScalarQuantizer) UnmarshalBinary(b []byte) error {
	if len(b) < 2 || b[0] != codeSQ8 {
		return errors.New("vectorindex: not a scalar quantizer")
	}
	if b[1] != sqVersion {
		return fmt.Errorf("vectorindex: scalar quantizer version %d not supported", b[1])
	}
	dims, n := binary.Uvarint(b[2:])
	if n <= 0 || dims == 0 || dims > 1<<20 {
		return errors.New("vectorindex: scalar quantizer has a bad dimension count")
	}
	rest := b[2+n:]
	if uint64(len(rest)) != 8*dims {
		return errors.New("vectorindex: scalar quantizer is truncated")
	}
	s.min = make([]float32, dims)
	s.scale = make([]float32, dims)
	for i := range s.min {
		s.min[i] = math.Float32frombits(binary.LittleEndian.Uint32(rest[4*i:]))
		s.scale[i] = math.Float32frombits(binary.LittleEndian.Uint32(rest[4*(int(dims)+i):]))
		if math.IsNaN(float64(s.min[i])) || math.IsNaN(float64(s.scale[i])) || s.scale[i] < 0 {
			return errors.New("vectorindex: scalar quantizer holds invalid values")
		}
	}
	return nil
}

func (s *ScalarQuantizer) format() byte    { return codeSQ8 }
func (s *ScalarQuantizer) payloadLen() int { return len(s.min) }

func (s *ScalarQuantizer) appendPayload(dst []byte, v []float32) []byte {
	for i, x := range v {
		var c float32
		if s.scale[i] > 0 {
			c = (x - s.min[i]) / s.scale[i]
		}
		c = max(0, min(255, c))
		dst = append(dst, byte(c+0.5))
	}
	return dst
}

func (s *ScalarQuantizer) decodePayload(dst []float32, payload []byte) {
	payload = payload[:len(dst)]
	for i := range dst {
		dst[i] = s.min[i] + float32(payload[i])*s.scale[i]
	}
}

// prepare computes the query's weights w[i] = v[i]·scale[i] and rounds them to integers
// as large as dotU8 allows (13 bits for 4,096 dimensions, 18 for 128): the rounding error
// is some hundred times below the codes' own, and integer arithmetic is what makes the
// inner loop fast.
func (s *ScalarQuantizer) prepare(q *query) {
	var wmax float32
	for i, x := range q.v {
		wmax = max(wmax, abs32(x*s.scale[i]))
	}
	q.wi = q.wi[:0]
	q.winv = 0
	if wmax > 0 {
		f := float32(u8WeightLimit(len(q.v))) / wmax
		for i, x := range q.v {
			q.wi = append(q.wi, int32(x*s.scale[i]*f)) // truncation: one unit in 2^13 or finer
		}
		q.winv = 1 / f
	} else {
		for range q.v {
			q.wi = append(q.wi, 0)
		}
	}
	q.base = dot(q.v, s.min)
}

func (s *ScalarQuantizer) dotPayload(q *query, payload []byte) float32 {
	return q.base + float32(dotU8(q.wi, payload))*q.winv
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}
