package cqlvalue

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"strconv"
	"strings"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/fault"
)

// Binder returns the value bound to a bind marker (from the request's values).
type Binder func(*cql.BindMarker) (Value, error)

// Encode turns a term of a statement into a value of type t, for the receiver called name (a
// column; messages say `for "name" of type t`). Errors are *cql.InvalidError with Cassandra's
// wording.
//
//   - Constants convert as Cassandra's Constants.Literal allows: strings into ascii (7-bit),
//     text, inet, date, time and timestamp; integers into every number type, counter, date,
//     time, timestamp (and duration, which refuses them); floats into float, double and
//     decimal; uuids into uuid and timeuuid (version 1); booleans into boolean; hex into blob;
//     durations into duration. Out of range numbers are refused ("Unable to make int from
//     '99999999999'").
//   - NULL is a null Value (refused for counters). A bind marker's value comes from bind; a
//     non-null one is checked and normalized (Normalize) as a value of t; Unset comes back as
//     is, and so does Null.
//   - List, set, map and tuple literals build their serialization: sets sorted and without
//     duplicates, maps sorted by key with the last of equal keys, as Cassandra stores them;
//     the parser's empty {} is an empty set or map as t says. An empty collection is the Null
//     value: Cassandra stores no empty collections. Nulls are refused inside collections,
//     allowed in tuples.
//   - (type) term casts: the term is read as that type, which must be assignable to t.
//   - The value functions now(), uuid(), currenttimestamp(), currentdate(), currenttime(),
//     currenttimeuuid(), totimestamp(x), todate(x), tounixtimestamp(x), mintimeuuid(x) and
//     maxtimeuuid(x) (funcs.go).
func Encode(t *Type, name string, term cql.Term, bind Binder) (Value, error) {
	e := encoder{bind: bind}
	v, err := e.encode(t, name, term)
	if err != nil {
		return Value{}, asInvalid(err)
	}
	return v, nil
}

// asInvalid makes any error an invalid-statement error, keeping those that already are.
func asInvalid(err error) error {
	if cql.IsInvalid(err) {
		return err
	}
	return cql.Invalid(fault.Pos{}, "%s", err.Error())
}

type encoder struct{ bind Binder }

func (e encoder) encode(t *Type, name string, term cql.Term) (Value, error) {
	switch x := term.(type) {
	case *cql.Null:
		if t.Kind == Counter {
			return Value{}, fmt.Errorf("Invalid null value for counter increment/decrement")
		}
		return Value{Null: true}, nil
	case *cql.BindMarker:
		if e.bind == nil {
			return Value{}, fmt.Errorf("Invalid bind marker: no values were given")
		}
		v, err := e.bind(x)
		if err != nil || v.Null || v.Unset {
			return v, err
		}
		b, err := Normalize(t, v.Bytes)
		if err != nil {
			return Value{}, err
		}
		return Value{Bytes: b}, nil
	case *cql.Constant:
		b, err := encodeConstant(t, name, x)
		return Value{Bytes: b}, err
	case *cql.List:
		if t.Kind != List {
			return Value{}, fmt.Errorf("Invalid list literal for %s of type %s", name, t)
		}
		return e.elements(t, name, x.Elems)
	case *cql.Set:
		if t.Kind != Set {
			return Value{}, fmt.Errorf("Invalid set literal for %s of type %s", name, t)
		}
		return e.elements(t, name, x.Elems)
	case *cql.Map:
		if t.Kind == Set && len(x.Entries) == 0 {
			return emptyCollection(t), nil
		}
		if t.Kind != Map {
			return Value{}, fmt.Errorf("Invalid map literal for %s of type %s", name, t)
		}
		return e.mapLiteral(t, name, x.Entries)
	case *cql.Tuple:
		return e.tuple(t, name, x.Elems)
	case *cql.TypeHint:
		hint, err := FromAST(x.Type, nil)
		if err != nil {
			return Value{}, err
		}
		if !assignable(t, hint) {
			return Value{}, fmt.Errorf("Cannot assign value of type %s to %s of type %s", hint, name, t)
		}
		return e.encode(hint, name, x.Term)
	case *cql.FuncCall:
		return e.call(t, name, x)
	}
	return Value{}, fmt.Errorf("Invalid value for %s of type %s", name, t)
}

// element encodes one element of a collection literal: never null nor unset.
func (e encoder) element(t *Type, name string, term cql.Term) ([]byte, error) {
	v, err := e.encode(t, name, term)
	switch {
	case err != nil:
		return nil, err
	case v.Unset:
		return nil, fmt.Errorf("Invalid unset value in collection")
	case v.Null:
		return nil, fmt.Errorf("null is not supported inside collections")
	}
	return v.Bytes, nil
}

func (e encoder) elements(t *Type, name string, terms []cql.Term) (Value, error) {
	items := make([][]byte, 0, len(terms))
	for _, term := range terms {
		b, err := e.element(t.Elems[0], "value("+name+")", term)
		if err != nil {
			return Value{}, err
		}
		items = append(items, b)
	}
	if t.Kind == Set {
		items = sortUnique(t.Elems[0], items)
	}
	if len(items) == 0 {
		return emptyCollection(t), nil
	}
	return Value{Bytes: joinCollection(items, 1)}, nil
}

func (e encoder) mapLiteral(t *Type, name string, entries []cql.MapEntry) (Value, error) {
	keys := make([][]byte, 0, len(entries))
	vals := make([][]byte, 0, len(entries))
	for _, en := range entries {
		k, err := e.element(t.Elems[0], "key("+name+")", en.Key)
		if err != nil {
			return Value{}, err
		}
		v, err := e.element(t.Elems[1], "value("+name+")", en.Value)
		if err != nil {
			return Value{}, err
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	if len(keys) == 0 {
		return emptyCollection(t), nil
	}
	keys, vals = sortMap(t.Elems[0], keys, vals)
	return Value{Bytes: joinMap(keys, vals)}, nil
}

// emptyCollection is the value of an empty collection literal: a value of its own when frozen
// (an empty frozen collection is a real value, even a key), and Null otherwise, since
// Cassandra keeps no empty non-frozen collection.
func emptyCollection(t *Type) Value {
	if t.Frozen {
		return Value{Bytes: joinCollection(nil, 1)}
	}
	return Value{Null: true}
}

func (e encoder) tuple(t *Type, name string, terms []cql.Term) (Value, error) {
	if t.Kind != Tuple {
		return Value{}, fmt.Errorf("Invalid tuple literal for %s of type %s", name, t)
	}
	if len(terms) > len(t.Elems) {
		return Value{}, fmt.Errorf("Invalid tuple literal for %s: too many elements. Type %s expects %d but got %d", name, t, len(t.Elems), len(terms))
	}
	out := []byte{}
	for i, term := range terms {
		v, err := e.encode(t.Elems[i], fmt.Sprintf("%s[%d]", name, i), term)
		if err != nil {
			return Value{}, err
		}
		if v.Unset {
			return Value{}, fmt.Errorf("Invalid unset value for tuple field number %d", i)
		}
		out = appendItem(out, v.Bytes, v.Null)
	}
	return Value{Bytes: out}, nil
}

// assignable reports whether a value of type from can be stored as type to unchanged: the same
// type, or one whose serialization to reads the same (ascii as text, timeuuid as uuid, the
// fixed-size integers as varint, timestamp as bigint, anything as blob).
func assignable(to, from *Type) bool {
	if Equal(to, from) {
		return true
	}
	switch to.Kind {
	case Blob:
		return from.Kind.IsNative()
	case Text:
		return from.Kind == Ascii
	case UUID:
		return from.Kind == Timeuuid
	case Bigint:
		return from.Kind == Timestamp
	case Varint:
		return from.Kind == Tinyint || from.Kind == Smallint || from.Kind == Int || from.Kind == Bigint
	}
	return false
}

// constKindNames are the names Cassandra gives constants in its messages.
var constKindNames = map[cql.ConstKind]string{
	cql.ConstString: "STRING", cql.ConstInteger: "INTEGER", cql.ConstFloat: "FLOAT",
	cql.ConstBool: "BOOLEAN", cql.ConstHex: "HEX", cql.ConstUUID: "UUID", cql.ConstDuration: "DURATION",
}

// constAccepts is Cassandra's Constants.Literal.testAssignment: the native kinds each kind of
// constant may be read as.
func constAccepts(c cql.ConstKind, k Kind) bool {
	switch c {
	case cql.ConstString:
		return k == Ascii || k == Text || k == Inet || k == Date || k == Time || k == Timestamp
	case cql.ConstInteger:
		switch k {
		case Bigint, Counter, Date, Decimal, Double, Duration, Float, Int, Smallint, Time, Timestamp, Tinyint, Varint:
			return true
		}
	case cql.ConstUUID:
		return k == UUID || k == Timeuuid
	case cql.ConstFloat:
		return k == Decimal || k == Double || k == Float
	case cql.ConstBool:
		return k == Boolean
	case cql.ConstHex:
		return k == Blob
	case cql.ConstDuration:
		return k == Duration
	}
	return false
}

func encodeConstant(t *Type, name string, c *cql.Constant) ([]byte, error) {
	if !constAccepts(c.Kind, t.Kind) {
		return nil, fmt.Errorf("Invalid %s constant (%s) for \"%s\" of type %s", constKindNames[c.Kind], c.Text, name, t)
	}
	s := c.Text
	switch t.Kind {
	case Ascii:
		for i := 0; i < len(s); i++ {
			if s[i] > 0x7F {
				return nil, fmt.Errorf("Invalid ASCII character in string literal: %s", s)
			}
		}
		return []byte(s), nil
	case Text:
		return []byte(s), nil
	case Boolean:
		return EncodeBoolean(s == "true"), nil
	case Blob:
		b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
		if err != nil {
			return nil, fmt.Errorf("cannot parse '%s' as hex bytes", strings.TrimPrefix(s, "0x"))
		}
		return b, nil
	case Tinyint, Smallint, Int, Bigint, Counter:
		bitSize := map[Kind]int{Tinyint: 8, Smallint: 16, Int: 32, Bigint: 64, Counter: 64}[t.Kind]
		v, err := strconv.ParseInt(s, 10, bitSize)
		if err != nil {
			javaName := map[Kind]string{Tinyint: "byte", Smallint: "short", Int: "int", Bigint: "long", Counter: "long"}[t.Kind]
			return nil, fmt.Errorf("Unable to make %s from '%s'", javaName, s)
		}
		b := binary.BigEndian.AppendUint64(nil, uint64(v))
		return b[8-bitSize/8:], nil
	case Varint:
		v, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("unable to make int from '%s'", s)
		}
		return bigToBytes(v), nil
	case Float, Double:
		bitSize := 64
		if t.Kind == Float {
			bitSize = 32
		}
		f, err := strconv.ParseFloat(s, bitSize)
		if err != nil && !isRangeErr(err) { // Java reads an overflow as Infinity, an underflow as 0
			return nil, fmt.Errorf("Unable to make %s from '%s'", t.Kind, s)
		}
		if t.Kind == Float {
			return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(f))), nil
		}
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)), nil
	case Decimal:
		b, ok := parseDecimal(s)
		if !ok {
			return nil, fmt.Errorf("unable to make BigDecimal from '%s'", s)
		}
		return b, nil
	case Timestamp:
		if s == "" {
			return []byte{}, nil
		}
		ms, err := parseTimestamp(s)
		if err != nil {
			return nil, err
		}
		return binary.BigEndian.AppendUint64(nil, uint64(ms)), nil
	case Date:
		d, err := parseDate(s)
		if err != nil {
			return nil, err
		}
		return binary.BigEndian.AppendUint32(nil, d), nil
	case Time:
		ns, err := parseTime(s)
		if err != nil {
			return nil, err
		}
		return binary.BigEndian.AppendUint64(nil, uint64(ns)), nil
	case Inet:
		if s == "" {
			return []byte{}, nil
		}
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("Unable to make inet address from '%s'", s)
		}
		return a.AsSlice(), nil
	case UUID, Timeuuid:
		u, ok := parseUUID(s)
		if !ok {
			return nil, fmt.Errorf("Unable to make UUID from '%s'", s)
		}
		if t.Kind == Timeuuid && u[6]>>4 != 1 {
			return nil, fmt.Errorf("TimeUUID supports only version 1 UUIDs")
		}
		return u[:], nil
	case Duration:
		if c.Kind != cql.ConstDuration {
			return nil, fmt.Errorf("Unable to convert '%s' to a duration", s)
		}
		d, err := parseDuration(s)
		if err != nil {
			return nil, err
		}
		return d.append(nil), nil
	}
	return nil, fmt.Errorf("Invalid %s constant (%s) for \"%s\" of type %s", constKindNames[c.Kind], s, name, t)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// parseDecimal reads a decimal number (digits, optional fraction, optional exponent) as Java's
// BigDecimal(String) does and serializes it: scale then unscaled varint.
func parseDecimal(s string) ([]byte, bool) {
	mant, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	exp := int64(0)
	if hasExp {
		var err error
		if exp, err = strconv.ParseInt(expPart, 10, 32); err != nil {
			return nil, false
		}
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	sign := ""
	if digits != "" && (digits[0] == '-' || digits[0] == '+') {
		sign, digits = digits[:1], digits[1:]
		intPart = intPart[1:]
	}
	if digits == "" || strings.ContainsAny(intPart, "+-") {
		return nil, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return nil, false
		}
	}
	scale := int64(len(frac)) - exp
	if scale != int64(int32(scale)) {
		return nil, false
	}
	u, ok := new(big.Int).SetString(sign+digits, 10)
	if !ok {
		return nil, false
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(int32(scale))), bigToBytes(u)...), true
}

// parseUUID reads the 8-4-4-4-12 hexadecimal form.
func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	h := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	if _, err := hex.Decode(u[:], []byte(h)); err != nil {
		return u, false
	}
	return u, true
}
