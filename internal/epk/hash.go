package epk

import "encoding/binary"

// Scheme is a container's partitioning scheme: which function maps its
// partition keys to EPKs.
//
// The values start at 1 so that a zero Scheme (a field someone forgot to set)
// is invalid rather than silently meaning version 1.
type Scheme uint8

const (
	SchemeV1    Scheme = 1 // Hash, version 1 (legacy containers)
	SchemeV2    Scheme = 2 // Hash, version 2 (the default for new containers)
	SchemeMulti Scheme = 3 // MultiHash: hierarchical partition keys (version 2)
)

// String names the scheme, for logs and errors.
func (s Scheme) String() string {
	switch s {
	case SchemeV1:
		return "hash-v1"
	case SchemeV2:
		return "hash-v2"
	case SchemeMulti:
		return "multihash"
	}
	return "invalid-scheme"
}

// Valid reports whether s is one of the three schemes.
func (s Scheme) Valid() bool { return s >= SchemeV1 && s <= SchemeMulti }

// Hash maps k to its EPK under scheme s. It panics on an invalid scheme: that
// is a programming error, and guessing would misplace documents.
func (s Scheme) Hash(k Key) EPK {
	switch s {
	case SchemeV1:
		return HashV1(k)
	case SchemeV2:
		return HashV2(k)
	case SchemeMulti:
		return HashMulti(k)
	}
	panic("epk: Hash with invalid scheme " + s.String())
}

// HashV1 returns the version 1 EPK of k: the MurmurHash3 x86_32 (seed 0) of
// the components' hash input, as an unsigned number in binary encoding,
// followed by the binary encoding of each component. Strings are first cut to
// 100 UTF-16 code units, for both the hash and the encoding. An empty key
// gives Min.
//
// Hash input per component: string 08 ‖ UTF-8 ‖ 00; number 05 ‖ 8-byte
// little-endian IEEE-754; other kinds their type byte.
func HashV1(k Key) EPK {
	if len(k) == 0 {
		return Min
	}
	var h murmur32
	for _, v := range k {
		switch v.Kind {
		case KindString:
			s, lone := cutUTF16(v.Str, maxStringChars)
			h.writeByte(byte(KindString))
			h.writeString(s)
			if lone {
				h.writeString(replacementUTF8)
			}
			h.writeByte(0x00)
		case KindNumber:
			h.writeNumber(v.Num)
		default:
			h.writeByte(byte(v.Kind))
		}
	}
	// Typical keys fit in this buffer; only the final string conversion
	// allocates.
	var buf [128]byte
	out := appendNumber(buf[:0], float64(h.sum()))
	for _, v := range k {
		if v.Kind == KindString {
			s, lone := cutUTF16(v.Str, maxStringChars)
			suffix := ""
			if lone {
				suffix = replacementUTF8
			}
			out = appendString(out, s, suffix)
			continue
		}
		out = appendBinary(out, v, "")
	}
	return EPK(out)
}

// writeV2 feeds one component's version 2 hash input: string 08 ‖ UTF-8 ‖ FF
// (never cut: 0xFF cannot occur in UTF-8, so it terminates unambiguously);
// number 05 ‖ 8-byte little-endian IEEE-754; other kinds their type byte.
func writeV2(h *murmur128, v Value) {
	switch v.Kind {
	case KindString:
		h.writeByte(byte(KindString))
		h.writeString(v.Str)
		h.writeByte(0xFF)
	case KindNumber:
		h.writeNumber(v.Num)
	default:
		h.writeByte(byte(v.Kind))
	}
}

// appendV2 appends the 16-byte version 2 EPK of a finished hash: the digest
// (h1 then h2, little-endian) with all 16 bytes reversed, i.e. h2 then h1
// big-endian, and the top two bits cleared so every EPK stays below Max
// ("FF") even after MultiHash concatenation.
func appendV2(dst []byte, h *murmur128) []byte {
	h1, h2 := h.sum()
	n := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, h2)
	dst = binary.BigEndian.AppendUint64(dst, h1)
	dst[n] &= 0x3F
	return dst
}

// HashV2 returns the version 2 EPK of k: all components hashed together with
// MurmurHash3 x64_128 (seed 0), 16 bytes. An empty key gives Min.
func HashV2(k Key) EPK {
	if len(k) == 0 {
		return Min
	}
	var h murmur128
	for _, v := range k {
		writeV2(&h, v)
	}
	var buf [16]byte
	return EPK(appendV2(buf[:0], &h))
}

// HashMulti returns the MultiHash EPK of k: the version 2 EPK of each
// component on its own, concatenated (16 bytes per component). Because each
// component contributes its own block, the EPK of a key prefix is a prefix of
// the EPK of every key extending it, and PrefixRange of it covers them all.
// An empty key gives Min.
func HashMulti(k Key) EPK {
	if len(k) == 0 {
		return Min
	}
	var buf [48]byte // up to 3 paths without allocating
	out := buf[:0]
	for _, v := range k {
		var h murmur128
		writeV2(&h, v)
		out = appendV2(out, &h)
	}
	return EPK(out)
}
