package epk

import (
	"math"
	"unicode/utf8"
)

// The binary encoding is Cosmos DB's order-preserving serialisation of
// partition key components. It makes up the tail of every v1 EPK (after the
// encoded hash) and is what range bounds over v1 EPKs are compared against,
// so byte-string order of encodings must follow the order of the values.

const (
	// maxStringBytes is how many UTF-8 bytes of a string the binary encoding
	// keeps. A string of at most this many bytes is written whole and
	// terminated by 0x00; a longer one is written as exactly
	// maxStringBytes+1 bytes with no terminator, so it still sorts after
	// every shorter string it extends.
	maxStringBytes = 100

	// maxStringChars is how many UTF-16 code units of a string hash
	// version 1 keeps, before both hashing and encoding. Cosmos DB counts
	// .NET chars, hence UTF-16 and not bytes or runes.
	maxStringChars = 100
)

// BinaryEncode returns the order-preserving binary encoding of the components
// of k, concatenated. Strings are encoded as given (HashV1 cuts them to 100
// UTF-16 code units first; this function does not). An empty key encodes to
// no bytes.
func BinaryEncode(k Key) []byte {
	var dst []byte
	for _, v := range k {
		dst = appendBinary(dst, v, "")
	}
	return dst
}

// appendBinary appends the binary encoding of v. For a string, suffix is
// appended to v.Str before encoding; it lets HashV1 add the replacement
// character of a surrogate pair split by truncation without building a new
// string.
func appendBinary(dst []byte, v Value, suffix string) []byte {
	switch v.Kind {
	case KindNumber:
		return appendNumber(dst, v.Num)
	case KindString:
		return appendString(dst, v.Str, suffix)
	default:
		return append(dst, byte(v.Kind))
	}
}

// appendString writes 0x08, then each UTF-8 byte of s+suffix plus one (so
// that 0x00 can terminate: a prefix sorts before its extensions), then 0x00
// if the string is at most maxStringBytes long. Otherwise it writes exactly
// maxStringBytes+1 bytes and no terminator.
func appendString(dst []byte, s, suffix string) []byte {
	dst = append(dst, byte(KindString))
	total := len(s) + len(suffix)
	short := total <= maxStringBytes
	n := total
	if !short {
		n = maxStringBytes + 1
	}
	for i := range n {
		var c byte
		if i < len(s) {
			c = s[i]
		} else {
			c = suffix[i-len(s)]
		}
		if c < 0xFF { // 0xFF never occurs in UTF-8; saturate rather than wrap
			c++
		}
		dst = append(dst, c)
	}
	if short {
		dst = append(dst, 0x00)
	}
	return dst
}

// orderedBits maps a float64 to a uint64 whose unsigned order is the numeric
// order: non-negative values get their sign bit set, negative values are
// negated (two's complement), which reverses their order and puts them below.
// Both zeros map to 1<<63.
func orderedBits(f float64) uint64 {
	u := math.Float64bits(f)
	if u < 1<<63 {
		return u ^ 1<<63
	}
	return -u
}

// appendNumber writes 0x05, the first byte of orderedBits whole, then the
// remaining bits 7 at a time in the high bits of each byte, with the low bit
// set on every byte but the last. Trailing zero bits are not written, so
// short fractions give short encodings, but at least one byte always follows
// the first: a number whose remaining bits are all zero ends in 0x00. That
// is the .NET and Java behaviour; the JavaScript SDK omits that byte and
// disagrees with them (e.g. 2 encodes as 05 C0 00).
func appendNumber(dst []byte, f float64) []byte {
	u := orderedBits(f)
	dst = append(dst, byte(KindNumber), byte(u>>56))
	u <<= 8
	for {
		b := byte(u>>56) | 0x01
		u <<= 7
		if u == 0 {
			return append(dst, b&^0x01)
		}
		dst = append(dst, b)
	}
}

// cutUTF16 returns the longest prefix of s holding at most n UTF-16 code
// units. If the cut falls inside a surrogate pair, .NET's Substring keeps the
// lone high surrogate, which its UTF-8 encoder turns into U+FFFD; lone is
// true in that case and the caller must append "\uFFFD". Invalid UTF-8 bytes
// count as one code unit each and are kept as they are.
func cutUTF16(s string, n int) (prefix string, lone bool) {
	if len(s) <= n { // each code unit takes at least one byte
		return s, false
	}
	units := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > n {
			return s[:i], units < n
		}
		units += w
		i += size
	}
	return s, false
}

// replacementUTF8 is U+FFFD, what a lone surrogate becomes in .NET's UTF-8.
const replacementUTF8 = "\uFFFD"
