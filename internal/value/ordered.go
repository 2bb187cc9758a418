package value

import (
	"math"
	"strings"
)

// AppendOrdered appends an encoding of a primitive value (null, boolean, number or string)
// whose byte order is Cosmos's order of values: by type (null < false < true < numbers <
// strings), then by value. It is self-delimiting, so encodings can be followed by more key
// bytes. ok is false for undefined, arrays and objects, which have no such encoding.
func AppendOrdered(dst []byte, v Value) (out []byte, ok bool) {
	switch v.k {
	case Null:
		return append(dst, 0x01), true
	case Boolean:
		if v.b {
			return append(dst, 0x03), true
		}
		return append(dst, 0x02), true
	case Number:
		bits := math.Float64bits(v.n)
		if v.n == 0 {
			bits = 0 // -0 and 0 are the same number
		}
		if bits>>63 == 1 {
			bits = ^bits
		} else {
			bits |= 1 << 63
		}
		dst = append(dst, 0x04)
		for shift := 56; shift >= 0; shift -= 8 {
			dst = append(dst, byte(bits>>shift))
		}
		return dst, true
	case String:
		return AppendEscaped(append(dst, 0x05), v.s), true
	}
	return dst, false
}

// AppendEscaped appends s so that it delimits itself and keeps its order: each 0x00 byte
// becomes 0x00 0xFF and the string ends with 0x00 0x01, which sorts below both, so a string
// sorts before its extensions.
func AppendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			dst = append(dst, 0, 0xFF)
		} else {
			dst = append(dst, s[i])
		}
	}
	return append(dst, 0, 1)
}

// MaxIndexedString is how many bytes of a string an index entry keeps. Longer strings are
// indexed by their prefix, which sorts where the whole string does relative to any string that
// is not an extension of it; lookups treat such entries as candidates and check the item.
const MaxIndexedString = 128

// AppendIndexed is AppendOrdered of the value an index entry records for v: v itself, or the
// first MaxIndexedString bytes of a longer string. The partitions' index and the query
// planner's index bounds both encode values with it, so that they always agree.
func AppendIndexed(dst []byte, v Value) ([]byte, bool) {
	if v.k == String && len(v.s) > MaxIndexedString {
		v = Str(v.s[:MaxIndexedString])
	}
	return AppendOrdered(dst, v)
}

// IndexedAlone reports whether no other value shares what the index records for v, so that
// every entry recording AppendIndexed(v) is of an item whose value is v. Every value does but
// strings of MaxIndexedString bytes or more: a longer string's entries record its first
// MaxIndexedString bytes, which a string of exactly that length shares.
func IndexedAlone(v Value) bool { return v.k != String || len(v.s) < MaxIndexedString }

// OrderedTypeEnd is the first byte after every encoding of values of v's kind, for ranges
// that must stay within one type.
func OrderedTypeEnd(k Kind) byte {
	switch k {
	case Null:
		return 0x02
	case Boolean:
		return 0x04
	case Number:
		return 0x05
	}
	return 0x06
}

// OrderedTypeStart is the first byte of the encodings of values of kind k.
func OrderedTypeStart(k Kind) byte {
	switch k {
	case Null:
		return 0x01
	case Boolean:
		return 0x02
	case Number:
		return 0x04
	}
	return 0x05
}

// OrderedMarker is the one-byte encoding of an array (0x06) or an object (0x07): it records
// that a path holds one, in its place in the type order, without its content.
func OrderedMarker(k Kind) byte {
	if k == Array {
		return 0x06
	}
	return 0x07
}

// Terms calls fn with the path and value of every value in v below the root, the way a range
// index sees a document: "/a/b" for nested properties, "/tags/[]" for array elements. Arrays
// and objects are reported themselves (fn gets the container) and then walked into.
func Terms(v Value, fn func(path string, leaf Value)) {
	var walk func(prefix string, v Value)
	walk = func(prefix string, v Value) {
		if prefix != "" && v.k != Undefined {
			fn(prefix, v)
		}
		switch v.k {
		case Object:
			for _, m := range v.obj {
				walk(prefix+"/"+escapeSegment(m.Key), m.Val)
			}
		case Array:
			for _, e := range v.arr {
				walk(prefix+"/[]", e)
			}
		}
	}
	walk("", v)
}

// escapeSegment keeps a property name from being read as a path separator or an array marker.
func escapeSegment(s string) string {
	if !strings.ContainsAny(s, "/~[") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1", "[", "~2").Replace(s)
}

// TermPath is the index path of a property path given as segments (no array elements).
func TermPath(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(escapeSegment(s))
	}
	return b.String()
}

// SplitTermPath is the inverse of TermPath: the property names of an index path. ok is false
// for a path that TermPath does not build (one through array elements, or empty).
func SplitTermPath(path string) (segs []string, ok bool) {
	if !strings.HasPrefix(path, "/") {
		return nil, false
	}
	for _, s := range strings.Split(path[1:], "/") {
		if s == "[]" {
			return nil, false
		}
		if strings.Contains(s, "~") {
			s = strings.NewReplacer("~0", "~", "~1", "/", "~2", "[").Replace(s)
		}
		segs = append(segs, s)
	}
	return segs, true
}
