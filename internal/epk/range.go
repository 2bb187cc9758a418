package epk

// Range is a half-open range of EPKs, [Min, Max). Partition key ranges, feed
// ranges and split halves are all Ranges.
type Range struct {
	Min, Max EPK
}

// Contains reports whether e lies in r: Min <= e < Max.
func (r Range) Contains(e EPK) bool { return r.Min <= e && e < r.Max }

// Valid reports whether r is non-empty (Min < Max).
func (r Range) Valid() bool { return r.Min < r.Max }

// String formats r as "[min,max)" in uppercase hex, for logs and errors.
func (r Range) String() string { return "[" + r.Min.Hex() + "," + r.Max.Hex() + ")" }

// PrefixRange returns [prefix, prefix+"FF"): every EPK that starts with
// prefix. For MultiHash this is the range of all keys extending a key prefix,
// because each component's 16-byte block starts below 0x40. PrefixRange(Min)
// is the whole key space.
func PrefixRange(prefix EPK) Range { return Range{Min: prefix, Max: prefix + Max} }

// All is the whole EPK space.
var All = Range{Min: Min, Max: Max}
