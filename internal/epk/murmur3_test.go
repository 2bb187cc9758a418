package epk

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// Published MurmurHash3 outputs (reference C++ implementation, mirrored by
// the usual ports such as Python's mmh3 and Guava).
func TestMurmur3x86_32Known(t *testing.T) {
	cases := []struct {
		in   string
		seed uint32
		want uint32
	}{
		{"", 0, 0},
		{"", 1, 0x514e28b7},
		{"", 0xffffffff, 0x81f16f39},
		{"hello", 0, 0x248bfa47},
		{"Hello, world!", 1234, 0xfaf6cdb3},
		{"The quick brown fox jumps over the lazy dog", 0, 0x2e4ff723},
	}
	for _, c := range cases {
		if got := murmur3x86_32([]byte(c.in), c.seed); got != c.want {
			t.Errorf("x86_32(%q, %d) = %#08x, want %#08x", c.in, c.seed, got, c.want)
		}
	}
}

func TestMurmur3x64_128Known(t *testing.T) {
	cases := []struct {
		in     string
		h1, h2 uint64
	}{
		{"", 0, 0},
		{"hello", 0xcbd8a7b341bd9b02, 0x5b1e906a48ae1d19},
		{"The quick brown fox jumps over the lazy dog", 0xe34bbc7bbc071b6c, 0x7a433ca9c49a9347},
	}
	for _, c := range cases {
		h1, h2 := murmur3x64_128([]byte(c.in), 0)
		if h1 != c.h1 || h2 != c.h2 {
			t.Errorf("x64_128(%q) = %#016x %#016x, want %#016x %#016x", c.in, h1, h2, c.h1, c.h2)
		}
	}
	// Cassandra's Murmur3Partitioner token is int64(h1) of the serialized
	// key; these inputs have no byte >= 0x80, where its sign-extending tail
	// would differ from the reference algorithm.
	tokens := []struct {
		in    []byte
		token int64
	}{
		{[]byte{0, 0, 0, 1}, -4069959284402364209},
		{[]byte{0, 0, 0, 2}, -3248873570005575792},
		{[]byte{0, 0, 0, 3}, 9010454139840013625},
		{[]byte("hello"), -3758069500696749310},
	}
	for _, c := range tokens {
		h1, _ := murmur3x64_128(c.in, 0)
		if int64(h1) != c.token {
			t.Errorf("x64_128(% x) h1 = %d, want Cassandra token %d", c.in, int64(h1), c.token)
		}
	}
}

// SMHasher's verification: hash keys {}, {0}, {0,1}, ... {0..254} with seed
// 256-i, hash the concatenated digests with seed 0, and read the first four
// bytes little-endian. This exercises every tail length and many block counts.
func smhasherVerification(hashBytes int, hash func(key []byte, seed uint32) []byte) uint32 {
	key := make([]byte, 256)
	all := make([]byte, 0, 256*hashBytes)
	for i := range 256 {
		key[i] = byte(i)
		all = append(all, hash(key[:i], uint32(256-i))...)
	}
	return binary.LittleEndian.Uint32(hash(all, 0))
}

func TestMurmur3SMHasherVerification(t *testing.T) {
	v32 := smhasherVerification(4, func(k []byte, seed uint32) []byte {
		return binary.LittleEndian.AppendUint32(nil, murmur3x86_32(k, seed))
	})
	if v32 != 0xB0F57EE3 {
		t.Errorf("x86_32 verification = %#08x, want 0xB0F57EE3", v32)
	}
	v128 := smhasherVerification(16, func(k []byte, seed uint32) []byte {
		h1, h2 := murmur3x64_128(k, seed)
		return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, h1), h2)
	})
	if v128 != 0x6384BA69 {
		t.Errorf("x64_128 verification = %#08x, want 0x6384BA69", v128)
	}
}

// The incremental hashers must not depend on how the input is cut up.
func TestMurmur3Incremental(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		data := make([]byte, rng.IntN(100))
		for i := range data {
			data[i] = byte(rng.UintN(256))
		}
		want32 := murmur3x86_32(data, 0)
		w1, w2 := murmur3x64_128(data, 0)
		var m32 murmur32
		var m128 murmur128
		for rest := data; len(rest) > 0; {
			n := 1 + rng.IntN(min(len(rest), 20))
			if n == 1 && rng.IntN(2) == 0 {
				m32.writeByte(rest[0])
				m128.writeByte(rest[0])
			} else {
				m32.writeString(string(rest[:n]))
				m128.write(rest[:n])
			}
			rest = rest[n:]
		}
		if got := m32.sum(); got != want32 {
			t.Fatalf("incremental x86_32 of % x = %#x, want %#x", data, got, want32)
		}
		if g1, g2 := m128.sum(); g1 != w1 || g2 != w2 {
			t.Fatalf("incremental x64_128 of % x differs", data)
		}
	}
}
