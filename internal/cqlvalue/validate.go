package cqlvalue

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/fault"
)

// maxTimeNanos is the last nanosecond of a day, the largest time value.
const maxTimeNanos = 86399999999999

// Validate checks that b is a valid serialization of a non-null value of type t, as Cassandra
// checks bound values (with its messages, as an *cql.InvalidError):
//
//   - fixed sizes: tinyint 1, smallint 2, int/float/date 4, bigint/counter/timestamp/time/double
//     8, boolean 1, uuid/timeuuid 16 (timeuuid of version 1), inet 4 or 16; decimal at least 4;
//   - "empty values" (zero bytes) are accepted where Cassandra accepts them: every native type
//     but tinyint, smallint, date, time and duration; tuples and UDTs (no components); never a
//     list, set or map (an empty collection is null, never zero bytes);
//   - ascii is 7-bit, text valid UTF-8, time within a day (0 to 86399999999999 ns: Cassandra
//     only checks the size), duration three vints of one sign;
//   - collections, tuples and UDTs structurally and recursively: no null elements in
//     collections, null components allowed in tuples and UDTs, which may have fewer components
//     than their type (not more), no trailing bytes.
//
// Validate does not require sets and maps to be sorted: Normalize makes them so.
func Validate(t *Type, b []byte) error {
	if err := validate(t, b); err != nil {
		return cql.Invalid(fault.Pos{}, "%s", err.Error())
	}
	return nil
}

func validate(t *Type, b []byte) error {
	n := len(b)
	fixed := func(size int, empty bool, format string) error {
		if n == size || n == 0 && empty {
			return nil
		}
		return fmt.Errorf(format, n)
	}
	switch t.Kind {
	case Ascii:
		for _, c := range b {
			if c > 0x7F {
				return fmt.Errorf("Invalid byte for ascii: %d", c)
			}
		}
		return nil
	case Text:
		if !utf8.Valid(b) {
			return errors.New("String didn't validate.")
		}
		return nil
	case Blob, Varint:
		return nil
	case Boolean:
		return fixed(1, true, "Expected 1 or 0 byte value (%d)")
	case Tinyint:
		return fixed(1, false, "Expected 1 byte for a tinyint (%d)")
	case Smallint:
		return fixed(2, false, "Expected 2 bytes for a smallint (%d)")
	case Int:
		return fixed(4, true, "Expected 4 or 0 byte int (%d)")
	case Float:
		return fixed(4, true, "Expected 4 or 0 byte value for a float (%d)")
	case Bigint, Counter:
		return fixed(8, true, "Expected 8 or 0 byte long (%d)")
	case Double:
		return fixed(8, true, "Expected 8 or 0 byte value for a double (%d)")
	case Timestamp:
		return fixed(8, true, "Expected 8 or 0 byte long for date (%d)")
	case Date:
		return fixed(4, false, "Expected 4 byte long for date (%d)")
	case Time:
		if n != 8 {
			return fmt.Errorf("Expected 8 byte long for time (%d)", n)
		}
		if v := int64(binary.BigEndian.Uint64(b)); v < 0 || v > maxTimeNanos {
			return fmt.Errorf("Time value %d out of range: a time is 0 to %d nanoseconds", v, int64(maxTimeNanos))
		}
		return nil
	case UUID:
		return fixed(16, true, "UUID should be 16 or 0 bytes (%d)")
	case Timeuuid:
		if err := fixed(16, true, "TimeUUID should be 16 or 0 bytes (%d)"); err != nil {
			return err
		}
		if n == 16 && b[6]&0xF0 != 0x10 {
			return errors.New("Invalid version for TimeUUID type.")
		}
		return nil
	case Inet:
		if n != 0 && n != 4 && n != 16 {
			return fmt.Errorf("Expected 4 or 16 byte inetaddress (%d)", n)
		}
		return nil
	case Decimal:
		if n != 0 && n < 4 {
			return fmt.Errorf("Expected 0 or at least 4 bytes (%d)", n)
		}
		return nil
	case Duration:
		_, err := decodeDuration(b)
		return err
	case List, Set, Map:
		return validateCollection(t, b)
	case Tuple, UDT:
		comps, nulls, err := splitComponents(b, len(t.Elems))
		if err != nil {
			return fmt.Errorf("Invalid %s value: %v", t, err)
		}
		for i, c := range comps {
			if !nulls[i] {
				if err := validate(t.Elems[i], c); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return fmt.Errorf("invalid type")
}

func validateCollection(t *Type, b []byte) error {
	per := 1
	if t.Kind == Map {
		per = 2
	}
	items, err := splitCollection(b, per)
	if err != nil {
		if err == errNullInCollection {
			return err
		}
		return fmt.Errorf("Invalid %s value: %v", t.Kind, err)
	}
	for i, it := range items {
		if err := validate(t.Elems[i%per], it); err != nil {
			return err
		}
	}
	return nil
}

// Normalize validates b as a value of t and returns its canonical form, the form rows store:
// sets sorted by their element order without duplicates, maps sorted by key with one entry per
// key (the last one given wins, as Cassandra keeps), recursively inside collections, tuples and
// UDTs. Other values come back as they are (b itself when nothing changes).
func Normalize(t *Type, b []byte) ([]byte, error) {
	if err := Validate(t, b); err != nil {
		return nil, err
	}
	return normalize(t, b), nil
}

// normalize is Normalize on a valid b.
func normalize(t *Type, b []byte) []byte {
	switch t.Kind {
	case List, Set:
		items, _ := splitCollection(b, 1)
		for i, it := range items {
			items[i] = normalize(t.Elems[0], it)
		}
		if t.Kind == Set {
			items = sortUnique(t.Elems[0], items)
		}
		return joinCollection(items, 1)
	case Map:
		items, _ := splitCollection(b, 2)
		keys := make([][]byte, 0, len(items)/2)
		vals := make([][]byte, 0, len(items)/2)
		for i := 0; i < len(items); i += 2 {
			keys = append(keys, normalize(t.Elems[0], items[i]))
			vals = append(vals, normalize(t.Elems[1], items[i+1]))
		}
		keys, vals = sortMap(t.Elems[0], keys, vals)
		return joinMap(keys, vals)
	case Tuple, UDT:
		comps, nulls, _ := splitComponents(b, len(t.Elems))
		var out []byte
		for i, c := range comps {
			if !nulls[i] {
				c = normalize(t.Elems[i], c)
			}
			out = appendItem(out, c, nulls[i])
		}
		return out
	}
	return b
}

// sortUnique sorts elements in the order of elem and keeps one of each run of equal ones.
func sortUnique(elem *Type, items [][]byte) [][]byte {
	slices.SortStableFunc(items, func(a, b []byte) int { return Compare(elem, a, b) })
	return slices.CompactFunc(items, func(a, b []byte) bool { return Compare(elem, a, b) == 0 })
}

// sortMap sorts entries by key; of entries with equal keys the last given wins.
func sortMap(key *Type, keys, vals [][]byte) ([][]byte, [][]byte) {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return Compare(key, keys[a], keys[b]) })
	var ks, vs [][]byte
	for j, i := range idx {
		if j+1 < len(idx) && Compare(key, keys[i], keys[idx[j+1]]) == 0 {
			continue // a later entry (stable sort keeps given order) has the same key
		}
		ks = append(ks, keys[i])
		vs = append(vs, vals[i])
	}
	return ks, vs
}

// joinMap serializes keys and values as a map.
func joinMap(keys, vals [][]byte) []byte {
	items := make([][]byte, 0, 2*len(keys))
	for i := range keys {
		items = append(items, keys[i], vals[i])
	}
	return joinCollection(items, 2)
}
