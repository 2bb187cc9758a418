package uniquekey

import (
	"github.com/partita-db/partita/internal/value"
)

// Entries returns an item's entry for each unique key, in key order (so sorted, since an
// entry starts with its key's number). nil for a nil policy.
//
// An entry is the key's number (one byte), then one component per path, in the key's order:
//
//	missing or null  0x01 (Cosmos: a missing value takes part like null, so one item may lack it)
//	false, true      0x02, 0x03
//	number           0x04 and 8 bytes (value.AppendOrdered: 1 and 1.0 are one number, -0 is 0)
//	string           0x05 and the escaped bytes (case and every byte count: "a" is not "A")
//	array, object    0x06 or 0x07 and the escaped value.Key of the value, its content with an
//	                 object's members sorted: equal values give equal entries
//
// Each component is self-delimiting, so equal entries mean equal values at every path, and
// values of different types never collide (1 is not "1", null is not false).
func (p *Policy) Entries(item value.Value) [][]byte {
	if p == nil {
		return nil
	}
	out := make([][]byte, len(p.keys))
	for i, k := range p.keys {
		e := []byte{byte(i)}
		for _, segs := range k.segs {
			e = appendComponent(e, at(item, segs))
		}
		out[i] = e
	}
	return out
}

// at is the value at a path: undefined when a property on the way is missing or the value
// holding it is not an object.
func at(v value.Value, segs []string) value.Value {
	for _, s := range segs {
		if v = v.Get(s); v.IsUndefined() {
			break
		}
	}
	return v
}

func appendComponent(dst []byte, v value.Value) []byte {
	switch v.Kind() {
	case value.Undefined:
		v = value.NullV()
	case value.Array, value.Object:
		dst = append(dst, value.OrderedMarker(v.Kind()))
		return value.AppendEscaped(dst, value.Key(v))
	}
	dst, _ = value.AppendOrdered(dst, v) // a primitive: always encodable
	return dst
}

// Key is the number of the unique key an entry belongs to.
func Key(entry []byte) int {
	if len(entry) == 0 {
		return -1
	}
	return int(entry[0])
}
