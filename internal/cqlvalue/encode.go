package cqlvalue

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/fault"
)

// Typed constructors of serialized values, for system tables and the executor's own values.

func EncodeTinyint(v int8) []byte   { return []byte{byte(v)} }
func EncodeSmallint(v int16) []byte { return binary.BigEndian.AppendUint16(nil, uint16(v)) }
func EncodeInt(v int32) []byte      { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func EncodeBigint(v int64) []byte   { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
func EncodeText(s string) []byte    { return []byte(s) }
func EncodeDouble(v float64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(v)) }
func EncodeFloat(v float32) []byte  { return binary.BigEndian.AppendUint32(nil, math.Float32bits(v)) }
func EncodeUUID(u [16]byte) []byte  { return u[:] }
func EncodeVarint(v *big.Int) []byte {
	return bigToBytes(v)
}

func EncodeBoolean(v bool) []byte {
	if v {
		return []byte{1}
	}
	return []byte{0}
}

// EncodeTimestamp is t in milliseconds since the epoch (sub-millisecond digits dropped).
func EncodeTimestamp(t time.Time) []byte { return EncodeBigint(t.UnixMilli()) }

// EncodeDate is the date of t in UTC.
func EncodeDate(t time.Time) []byte { return millisDate(t.UnixMilli()) }

// EncodeTime is the time of day of t in UTC, in nanoseconds.
func EncodeTime(t time.Time) []byte {
	t = t.UTC()
	d := time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute +
		time.Duration(t.Second())*time.Second + time.Duration(t.Nanosecond())
	return EncodeBigint(int64(d))
}

// EncodeList serializes elements as a list (or, already sorted and unique, a set).
func EncodeList(elems ...[]byte) []byte { return joinCollection(elems, 1) }

// EncodeSet serializes elements of type elem as a set: sorted, without duplicates.
func EncodeSet(elem *Type, elems ...[]byte) []byte {
	return joinCollection(sortUnique(elem, append([][]byte(nil), elems...)), 1)
}

// EncodeMap serializes parallel keys and values of type key as a map, sorted by key (of equal
// keys the last wins).
func EncodeMap(key *Type, keys, values [][]byte) []byte {
	k, v := sortMap(key, append([][]byte(nil), keys...), append([][]byte(nil), values...))
	return joinMap(k, v)
}

// EncodeTuple serializes tuple or UDT components; a nil component is null.
func EncodeTuple(comps ...[]byte) []byte {
	out := []byte{}
	for _, c := range comps {
		out = appendItem(out, c, c == nil)
	}
	return out
}

// Int64 reads an integer value (tinyint, smallint, int, bigint, counter, or a varint that fits)
// for TTL, LIMIT, USING TIMESTAMP and counters.
func Int64(t *Type, b []byte) (int64, error) {
	switch t.Kind {
	case Tinyint, Smallint, Int, Bigint, Counter:
		if len(b) != fixedSize(t.Kind) {
			return 0, cql.Invalid(fault.Pos{}, "Invalid %s value of %d bytes", t.Kind, len(b))
		}
		return signedInt(b), nil
	case Varint:
		v := bigFromBytes(b)
		if !v.IsInt64() {
			return 0, cql.Invalid(fault.Pos{}, "varint value %s does not fit a bigint", v)
		}
		return v.Int64(), nil
	}
	return 0, cql.Invalid(fault.Pos{}, "%s", fmt.Sprintf("Expected an integer, not a value of type %s", t))
}
