package epk

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// MurmurHash3 (Austin Appleby's public-domain design), written here from the
// algorithm so the package depends on nothing outside the standard library.
// Cosmos DB uses the x86 32-bit variant for hash version 1 and the x64 128-bit
// variant for hash version 2 and MultiHash, both with seed 0.
//
// Both hashers are incremental so that the hash input (type bytes, string
// bytes, terminators) can be fed piece by piece without first building it in a
// buffer: the hash path then allocates nothing. Tail bytes are mixed in as
// unsigned bytes, as in the reference implementation (Cassandra's variant
// sign-extends them; Cosmos DB does not).

const (
	m32c1 = 0xcc9e2d51
	m32c2 = 0x1b873593

	m128c1 = 0x87c37b91114253d5
	m128c2 = 0x4cf5ad432745937f
)

// murmur32 is an incremental MurmurHash3_x86_32. The zero value hashes with seed 0.
type murmur32 struct {
	h    uint32
	n    uint32 // total length; the algorithm mixes it in modulo 2^32
	tail [4]byte
	nt   int // bytes buffered in tail
}

func m32mixK(k uint32) uint32 {
	k *= m32c1
	k = bits.RotateLeft32(k, 15)
	return k * m32c2
}

func (m *murmur32) block(k uint32) {
	m.h ^= m32mixK(k)
	m.h = bits.RotateLeft32(m.h, 13)
	m.h = m.h*5 + 0xe6546b64
}

func (m *murmur32) writeByte(b byte) {
	m.n++
	m.tail[m.nt] = b
	m.nt++
	if m.nt == 4 {
		m.block(binary.LittleEndian.Uint32(m.tail[:]))
		m.nt = 0
	}
}

func (m *murmur32) writeString(s string) {
	m.n += uint32(len(s))
	for m.nt != 0 && len(s) > 0 {
		m.tail[m.nt] = s[0]
		m.nt++
		s = s[1:]
		if m.nt == 4 {
			m.block(binary.LittleEndian.Uint32(m.tail[:]))
			m.nt = 0
		}
	}
	if m.nt != 0 { // s ran out before the buffered block filled
		return
	}
	for len(s) >= 4 {
		m.block(uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24)
		s = s[4:]
	}
	m.nt = copy(m.tail[:], s)
}

func (m *murmur32) write(p []byte) {
	// The compiler does not allocate for this conversion when the string
	// does not escape.
	m.writeString(string(p))
}

// writeNumber feeds a number's hash input, shared by both hash versions:
// the type byte 0x05, then the IEEE-754 bits little-endian (.NET's
// BinaryWriter.Write(double)).
func (m *murmur32) writeNumber(f float64) {
	var b [9]byte
	b[0] = byte(KindNumber)
	binary.LittleEndian.PutUint64(b[1:], math.Float64bits(f))
	m.write(b[:])
}

func (m *murmur32) sum() uint32 {
	h := m.h
	if m.nt > 0 {
		var k uint32
		switch m.nt {
		case 3:
			k ^= uint32(m.tail[2]) << 16
			fallthrough
		case 2:
			k ^= uint32(m.tail[1]) << 8
			fallthrough
		case 1:
			k ^= uint32(m.tail[0])
		}
		h ^= m32mixK(k)
	}
	h ^= m.n
	return fmix32(h)
}

func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// murmur3x86_32 hashes data in one call.
func murmur3x86_32(data []byte, seed uint32) uint32 {
	m := murmur32{h: seed}
	m.write(data)
	return m.sum()
}

// murmur128 is an incremental MurmurHash3_x64_128. The zero value hashes with seed 0.
type murmur128 struct {
	h1, h2 uint64
	n      uint64
	tail   [16]byte
	nt     int
	// signedTail makes the final mix read tail bytes sign-extended: Cassandra's variant
	// (Token), which differs from the reference for tail bytes >= 0x80.
	signedTail bool
}

func m128mixK1(k uint64) uint64 {
	k *= m128c1
	k = bits.RotateLeft64(k, 31)
	return k * m128c2
}

func m128mixK2(k uint64) uint64 {
	k *= m128c2
	k = bits.RotateLeft64(k, 33)
	return k * m128c1
}

func (m *murmur128) block(k1, k2 uint64) {
	h1, h2 := m.h1, m.h2
	h1 ^= m128mixK1(k1)
	h1 = bits.RotateLeft64(h1, 27)
	h1 += h2
	h1 = h1*5 + 0x52dce729
	h2 ^= m128mixK2(k2)
	h2 = bits.RotateLeft64(h2, 31)
	h2 += h1
	h2 = h2*5 + 0x38495ab5
	m.h1, m.h2 = h1, h2
}

func (m *murmur128) flushTail() {
	m.block(binary.LittleEndian.Uint64(m.tail[0:8]), binary.LittleEndian.Uint64(m.tail[8:16]))
	m.nt = 0
}

func (m *murmur128) writeByte(b byte) {
	m.n++
	m.tail[m.nt] = b
	m.nt++
	if m.nt == 16 {
		m.flushTail()
	}
}

func (m *murmur128) writeString(s string) {
	m.n += uint64(len(s))
	if m.nt != 0 {
		c := copy(m.tail[m.nt:], s)
		m.nt += c
		s = s[c:]
		if m.nt < 16 {
			return
		}
		m.flushTail()
	}
	for len(s) >= 16 {
		m.block(le64(s[0:8]), le64(s[8:16]))
		s = s[16:]
	}
	m.nt = copy(m.tail[:], s)
}

func (m *murmur128) write(p []byte) { m.writeString(string(p)) }

// writeNumber feeds a number's hash input; see murmur32.writeNumber.
func (m *murmur128) writeNumber(f float64) {
	var b [9]byte
	b[0] = byte(KindNumber)
	binary.LittleEndian.PutUint64(b[1:], math.Float64bits(f))
	m.write(b[:])
}

// le64 reads 8 bytes of s as a little-endian uint64 (binary.LittleEndian
// takes a []byte, and converting would copy).
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// tailByte is tail byte i as the final mix reads it: unsigned, as the reference does, or, for
// Cassandra's tokens, sign-extended as Java's byte is.
func (m *murmur128) tailByte(i int) uint64 {
	if m.signedTail {
		return uint64(int64(int8(m.tail[i])))
	}
	return uint64(m.tail[i])
}

func (m *murmur128) sum() (h1, h2 uint64) {
	h1, h2 = m.h1, m.h2
	if m.nt > 0 {
		var k1, k2 uint64
		for i := m.nt - 1; i >= 8; i-- {
			k2 ^= m.tailByte(i) << (8 * (i - 8))
		}
		for i := min(m.nt, 8) - 1; i >= 0; i-- {
			k1 ^= m.tailByte(i) << (8 * i)
		}
		if m.nt > 8 {
			h2 ^= m128mixK2(k2)
		}
		h1 ^= m128mixK1(k1)
	}
	h1 ^= m.n
	h2 ^= m.n
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	h1 += h2
	h2 += h1
	return h1, h2
}

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// murmur3x64_128 hashes data in one call and returns the two 64-bit halves
// (the digest's bytes are h1 then h2, each little-endian).
func murmur3x64_128(data []byte, seed uint32) (h1, h2 uint64) {
	m := murmur128{h1: uint64(seed), h2: uint64(seed)}
	m.write(data)
	return m.sum()
}
