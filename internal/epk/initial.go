package epk

import "math/big"

// InitialRanges tiles [Min, Max) into n contiguous ranges for a new
// container, placed so that keys hashed under scheme s spread evenly over
// them. n < 1 is treated as 1. The first range starts at Min, the last ends at
// Max, and each range ends where the next begins.
//
// Splitting the raw byte space evenly would be wrong for hashed keys:
//
//   - v2 and MultiHash EPKs always start below 0x40 (the top two bits are
//     cleared), so the 16-byte space 00..00 to 3FFF..FF is divided evenly,
//     with full 16-byte boundaries as the service writes them, and only the
//     last range stretches to Max. (For MultiHash only the first
//     component's block decides the range, which is what spreads keys.)
//   - v1 EPKs start with the binary-encoded hash number, so the uint32 hash
//     space is divided evenly and each boundary is the encoding of the hash
//     number where the next range starts. n is capped at 2^32 there, so
//     that boundaries stay distinct.
//
// It panics on an invalid scheme.
func InitialRanges(s Scheme, n int) []Range {
	if !s.Valid() {
		panic("epk: InitialRanges with invalid scheme " + s.String())
	}
	if n < 1 {
		n = 1
	}
	if s == SchemeV1 && uint64(n) > 1<<32 {
		n = 1 << 32
	}
	bounds := make([]EPK, n+1)
	bounds[0], bounds[n] = Min, Max
	switch s {
	case SchemeV1:
		for i := 1; i < n; i++ {
			h := uint64(i) << 32 / uint64(n) // < 2^64 since i < n <= 2^32
			bounds[i] = EPK(appendNumber(nil, float64(h)))
		}
	default:
		space := new(big.Int).Lsh(big.NewInt(1), 126) // 2^126 = 40 00..00
		var x big.Int
		nn := big.NewInt(int64(n))
		for i := 1; i < n; i++ {
			x.Mul(space, big.NewInt(int64(i)))
			x.Quo(&x, nn)
			bounds[i] = EPK(x.FillBytes(make([]byte, 16)))
		}
	}
	out := make([]Range, n)
	for i := range out {
		out[i] = Range{Min: bounds[i], Max: bounds[i+1]}
	}
	return out
}
