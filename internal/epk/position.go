package epk

import "encoding/binary"

// Position is where e lies in scheme s's space of hashes, from 0 (Min) to 1 (Max), so that
// ranges drawn by their positions have the widths of the shares of keys they hold.
//
// The byte space is no such scale: a version 2 hash (and a hierarchical key's first one)
// keeps its two top bits clear, so every key lies below "40", and a version 1 EPK begins with
// its 32-bit hash encoded as a number, so every key lies near "05C1". Position reads the hash
// instead: its first 64 bits over 2^62 for version 2, the hash number over 2^32 for version 1.
func (s Scheme) Position(e EPK) float64 {
	switch {
	case e == Min:
		return 0
	case e == Max:
		return 1
	case s == SchemeV1:
		return HashNumberV1(e) / (1 << 32)
	}
	var b [8]byte
	copy(b[:], e)
	return min(float64(binary.BigEndian.Uint64(b[:]))/(1<<62), 1)
}
