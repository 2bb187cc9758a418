package vectorindex

import (
	"math"
	"math/rand/v2"
)

// clustered returns n base vectors and nq query vectors drawn from the same mixture of
// Gaussian clusters, deterministically from seed: cluster centres are N(0, 1) in every
// dimension, and each vector is its cluster's centre plus N(0, spread²) noise. With
// spread 0.5 in 128 dimensions a cluster's radius (≈ 5.7) is well under the distance
// between centres (≈ 16), so neighbours are mostly within a cluster, as with embeddings of
// topical documents; the isotropic noise gives each cluster the full 128 intrinsic
// dimensions, which is harder for a graph than real embeddings (whose variance
// concentrates in fewer directions).
func clustered(n, nq, dims, clusters int, spread float64, seed uint64) (base, queries [][]float32) {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	centres := make([][]float64, clusters)
	for c := range centres {
		centres[c] = make([]float64, dims)
		for i := range centres[c] {
			centres[c][i] = rng.NormFloat64()
		}
	}
	draw := func() []float32 {
		c := centres[rng.IntN(clusters)]
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(c[i] + spread*rng.NormFloat64())
		}
		return v
	}
	base = make([][]float32, n)
	for i := range base {
		base[i] = draw()
	}
	queries = make([][]float32, nq)
	for i := range queries {
		queries[i] = draw()
	}
	return base, queries
}

// randomVectors returns n vectors uniform in [-1, 1)^dims.
func randomVectors(rng *rand.Rand, n, dims int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, dims)
		for j := range out[i] {
			out[i][j] = float32(2*rng.Float64() - 1)
		}
	}
	return out
}

// recallAt is Recall over the results' ids.
func recallAt(found, truth []Result) float64 {
	ids := func(rs []Result) []uint64 {
		out := make([]uint64, len(rs))
		for i, r := range rs {
			out[i] = r.ID
		}
		return out
	}
	return Recall(ids(found), ids(truth))
}

// sliceItems iterates a slice of vectors with their index as id.
func sliceItems(vs [][]float32) func(yield func(uint64, []float32) bool) {
	return func(yield func(uint64, []float32) bool) {
		for i, v := range vs {
			if v != nil && !yield(uint64(i), v) {
				return
			}
		}
	}
}

func approxEqual(a, b, tol float64) bool { return math.Abs(a-b) <= tol }
