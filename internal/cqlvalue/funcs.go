package cqlvalue

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/partita-db/partita/internal/cql"
)

// The value functions of CQL (Cassandra's native scalar functions on time and uuids) usable as
// terms: now(), uuid(), currenttimestamp()... Each overload has parameter types and a result
// type; a null argument gives a null result, as Cassandra's native functions do.

type overload struct {
	params []Kind
	result Kind
	eval   func(args [][]byte) []byte
}

var valueFuncs = map[string][]overload{
	"now":              {{nil, Timeuuid, func([][]byte) []byte { u := NewTimeUUID(time.Now()); return u[:] }}},
	"currenttimeuuid":  {{nil, Timeuuid, func([][]byte) []byte { u := NewTimeUUID(time.Now()); return u[:] }}},
	"uuid":             {{nil, UUID, func([][]byte) []byte { u := NewRandomUUID(); return u[:] }}},
	"currenttimestamp": {{nil, Timestamp, func([][]byte) []byte { return EncodeTimestamp(time.Now()) }}},
	"currentdate":      {{nil, Date, func([][]byte) []byte { return EncodeDate(time.Now()) }}},
	"currenttime":      {{nil, Time, func([][]byte) []byte { return EncodeTime(time.Now()) }}},
	"totimestamp": {
		{[]Kind{Timeuuid}, Timestamp, func(a [][]byte) []byte { return EncodeBigint(uuidMillis(a[0])) }},
		{[]Kind{Date}, Timestamp, func(a [][]byte) []byte { return EncodeBigint(dateMillis(a[0])) }},
	},
	"todate": {
		{[]Kind{Timeuuid}, Date, func(a [][]byte) []byte { return millisDate(uuidMillis(a[0])) }},
		{[]Kind{Timestamp}, Date, func(a [][]byte) []byte { return millisDate(int64(binary.BigEndian.Uint64(a[0]))) }},
	},
	"tounixtimestamp": {
		{[]Kind{Timeuuid}, Bigint, func(a [][]byte) []byte { return EncodeBigint(uuidMillis(a[0])) }},
		{[]Kind{Timestamp}, Bigint, func(a [][]byte) []byte { return a[0] }},
		{[]Kind{Date}, Bigint, func(a [][]byte) []byte { return EncodeBigint(dateMillis(a[0])) }},
	},
	"mintimeuuid": {{[]Kind{Timestamp}, Timeuuid, func(a [][]byte) []byte {
		return boundTimeUUID(int64(binary.BigEndian.Uint64(a[0])), 0x8080808080808080)
	}}},
	"maxtimeuuid": {{[]Kind{Timestamp}, Timeuuid, func(a [][]byte) []byte {
		return boundTimeUUID(int64(binary.BigEndian.Uint64(a[0]))+1, 0x7F7F7F7F7F7F7F7F)
	}}},
}

// call evaluates a value function for a receiver of type t.
func (e encoder) call(t *Type, name string, f *cql.FuncCall) (Value, error) {
	fn := strings.ToLower(f.Name)
	qualified := "system." + fn
	overloads, ok := valueFuncs[fn]
	if !ok || f.Keyspace != "" && strings.ToLower(f.Keyspace) != "system" {
		return Value{}, fmt.Errorf("Unknown function %s", funcName(f))
	}
	var matches []overload
	for _, o := range overloads {
		if len(o.params) == len(f.Args) && argsFit(o.params, f.Args) {
			matches = append(matches, o)
		}
	}
	switch {
	case len(matches) == 0 && len(overloads) == 1 && len(overloads[0].params) != len(f.Args):
		return Value{}, fmt.Errorf("Invalid number of arguments in call to function %s: %d required but %d provided", qualified, len(overloads[0].params), len(f.Args))
	case len(matches) == 0:
		return Value{}, fmt.Errorf("Invalid call to function %s, none of its type signatures match", qualified)
	case len(matches) > 1:
		return Value{}, fmt.Errorf("Ambiguous call to function %s: use type casts to disambiguate", qualified)
	}
	o := matches[0]
	if result := Native(o.result); !assignable(t, result) {
		return Value{}, fmt.Errorf("Type error: cannot assign result of function %s (type %s) to %s (type %s)", qualified, result, name, t)
	}
	args := make([][]byte, len(f.Args))
	for i, a := range f.Args {
		v, err := e.encode(Native(o.params[i]), fmt.Sprintf("%s argument %d", qualified, i), a)
		if err != nil {
			return Value{}, err
		}
		if v.Null || v.Unset || len(v.Bytes) == 0 {
			return Value{Null: true}, nil
		}
		args[i] = v.Bytes
	}
	return Value{Bytes: o.eval(args)}, nil
}

func funcName(f *cql.FuncCall) string {
	if f.Keyspace != "" {
		return f.Keyspace + "." + f.Name
	}
	return f.Name
}

// argsFit reports whether the arguments may be read as the parameter kinds: a constant as its
// constant kind allows, a function by its result, a cast by its type; bind markers and nulls fit
// anything.
func argsFit(params []Kind, args []cql.Term) bool {
	for i, a := range args {
		p := Native(params[i])
		switch x := a.(type) {
		case *cql.Constant:
			if !constAccepts(x.Kind, p.Kind) {
				return false
			}
		case *cql.FuncCall:
			r, ok := funcResult(x)
			if !ok || !assignable(p, r) {
				return false
			}
		case *cql.TypeHint:
			h, err := FromAST(x.Type, nil)
			if err != nil || !assignable(p, h) {
				return false
			}
		case *cql.BindMarker, *cql.Null:
		default:
			return false
		}
	}
	return true
}

// funcResult is the result type of a call when it does not depend on the overload chosen (or
// only one overload fits).
func funcResult(f *cql.FuncCall) (*Type, bool) {
	var result Kind
	for _, o := range valueFuncs[strings.ToLower(f.Name)] {
		if len(o.params) == len(f.Args) && argsFit(o.params, f.Args) {
			if result != Invalid && result != o.result {
				return nil, false
			}
			result = o.result
		}
	}
	if result == Invalid {
		return nil, false
	}
	return Native(result), true
}

// gregorianOffset is 1582-10-15 (the UUID epoch) in 100 ns units before the Unix epoch.
const gregorianOffset = 0x01B21DD213814000

// uuidTimestamp is the 60-bit timestamp of a version 1 UUID (100 ns units since 1582-10-15).
func uuidTimestamp(u []byte) int64 {
	return int64(reorderTimestamp(binary.BigEndian.Uint64(u)) & 0x0FFFFFFFFFFFFFFF)
}

// uuidMillis is the Unix time in milliseconds of a version 1 UUID.
func uuidMillis(u []byte) int64 { return floorDiv(uuidTimestamp(u)-gregorianOffset, 10000) }

func dateMillis(d []byte) int64 {
	return (int64(binary.BigEndian.Uint32(d)) - epochDays) * msPerDay
}

func millisDate(ms int64) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(floorDiv(ms, msPerDay)+epochDays))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// timeUUIDBits makes the high 64 bits of a version 1 UUID for a timestamp in 100 ns units
// since 1582-10-15.
func timeUUIDBits(ts int64) uint64 {
	u := uint64(ts)
	return u<<32 | u>>16&0xFFFF0000 | 0x1000 | u>>48&0x0FFF
}

// boundTimeUUID is the timeuuid at Unix millisecond ms with the given low bits (mintimeuuid
// gives the smallest of its millisecond; maxtimeuuid the largest, one 100 ns tick before the
// next millisecond).
func boundTimeUUID(ms int64, lsb uint64) []byte {
	ts := ms*10000 + gregorianOffset
	if lsb == 0x7F7F7F7F7F7F7F7F {
		ts--
	}
	b := binary.BigEndian.AppendUint64(nil, timeUUIDBits(ts))
	return binary.BigEndian.AppendUint64(b, lsb)
}

// timeuuids makes version 1 UUIDs unique within this process: the 100 ns timestamp never goes
// back nor repeats (it runs ahead of the clock under bursts), and the clock sequence and node
// are random per process.
var timeuuids struct {
	sync.Mutex
	last int64
	low  uint64
}

// NewTimeUUID returns a new version 1 UUID for time t (now() and currenttimeuuid()): later
// calls never return a smaller one.
func NewTimeUUID(t time.Time) [16]byte {
	timeuuids.Lock()
	if timeuuids.low == 0 {
		var r [8]byte
		rand.Read(r[:])
		// variant 10, random clock sequence; a random node with the multicast bit set, as RFC
		// 4122 asks of nodes that are not MAC addresses.
		timeuuids.low = binary.BigEndian.Uint64(r[:])&0x3FFFFFFFFFFFFFFF | 0x8000000000000000 | 0x010000000000
	}
	ts := t.UnixNano()/100 + gregorianOffset
	if ts <= timeuuids.last {
		ts = timeuuids.last + 1
	}
	timeuuids.last = ts
	low := timeuuids.low
	timeuuids.Unlock()
	var u [16]byte
	binary.BigEndian.PutUint64(u[:8], timeUUIDBits(ts))
	binary.BigEndian.PutUint64(u[8:], low)
	return u
}

// NewRandomUUID returns a version 4 (random) UUID, as uuid() does.
func NewRandomUUID() [16]byte {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0F | 0x40
	u[8] = u[8]&0x3F | 0x80
	return u
}
