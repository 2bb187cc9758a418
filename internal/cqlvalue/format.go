package cqlvalue

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/big"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Format writes a value as a CQL literal (for messages, tests and datadriven output): 'text'
// with ” for a quote, numbers as Java prints them (1.0, 1.0E10, NaN), true/false, uuids,
// 0x blobs, '2011-02-03 04:05:00.000+0000' timestamps, '2011-02-03' dates, '04:05:00.000000000'
// times, '1.2.3.4' inets, 1h30m durations, [1, 2], {1, 2}, {'a': 1}, (1, 'a'), {f: 1} for UDTs,
// and null for nil. An empty value prints as ” for strings, 0x for blobs and null otherwise,
// as Cassandra's toCQLLiteral. A malformed value prints as its 0x bytes.
func Format(t *Type, b []byte) string {
	if b == nil {
		return "null"
	}
	if validate(t, b) != nil {
		return "0x" + hex.EncodeToString(b)
	}
	var sb strings.Builder
	format(&sb, t, b)
	return sb.String()
}

func format(w *strings.Builder, t *Type, b []byte) {
	if len(b) == 0 {
		switch t.Kind {
		case Ascii, Text:
			w.WriteString("''")
		case Blob:
			w.WriteString("0x")
		case Tuple:
			w.WriteString("()")
		case UDT:
			w.WriteString("{}")
		default:
			w.WriteString("null")
		}
		return
	}
	switch t.Kind {
	case Ascii, Text:
		quote(w, string(b))
	case Blob:
		w.WriteString("0x")
		w.WriteString(hex.EncodeToString(b))
	case Boolean:
		w.WriteString(strconv.FormatBool(b[0] != 0))
	case Tinyint, Smallint, Int, Bigint, Counter:
		w.WriteString(strconv.FormatInt(signedInt(b), 10))
	case Varint:
		w.WriteString(bigFromBytes(b).String())
	case Decimal:
		u, scale := decimalParts(b)
		w.WriteString(javaDecimal(u, scale))
	case Float:
		w.WriteString(javaFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(b))), 32))
	case Double:
		w.WriteString(javaFloat(math.Float64frombits(binary.BigEndian.Uint64(b)), 64))
	case UUID, Timeuuid:
		w.WriteString(formatUUID(b))
	case Timestamp:
		// Past year 9999 the date form would not read back: such a value prints as its
		// milliseconds, which a timestamp literal also accepts.
		ms := int64(binary.BigEndian.Uint64(b))
		if t := timestampTime(ms); t.Year() < 0 || t.Year() > 9999 {
			w.WriteString(strconv.FormatInt(ms, 10))
		} else {
			quote(w, t.Format("2006-01-02 15:04:05.000-0700"))
		}
	case Date:
		// Likewise a date past year 9999 prints as its day number (2^31 is the epoch).
		raw := binary.BigEndian.Uint32(b)
		if t := time.Unix((int64(raw)-epochDays)*86400, 0).UTC(); t.Year() < 0 || t.Year() > 9999 {
			w.WriteString(strconv.FormatUint(uint64(raw), 10))
		} else {
			quote(w, t.Format("2006-01-02"))
		}
	case Time:
		ns := int64(binary.BigEndian.Uint64(b))
		quote(w, time.Unix(0, ns).UTC().Format("15:04:05.000000000"))
	case Inet:
		a, _ := netip.AddrFromSlice(b)
		quote(w, a.String())
	case Duration:
		d, _ := decodeDuration(b)
		w.WriteString(d.String())
	case List, Set:
		open, close := "[", "]"
		if t.Kind == Set {
			open, close = "{", "}"
		}
		items, _ := splitCollection(b, 1)
		w.WriteString(open)
		for i, it := range items {
			if i > 0 {
				w.WriteString(", ")
			}
			format(w, t.Elems[0], it)
		}
		w.WriteString(close)
	case Map:
		items, _ := splitCollection(b, 2)
		w.WriteString("{")
		for i := 0; i < len(items); i += 2 {
			if i > 0 {
				w.WriteString(", ")
			}
			format(w, t.Elems[0], items[i])
			w.WriteString(": ")
			format(w, t.Elems[1], items[i+1])
		}
		w.WriteString("}")
	case Tuple, UDT:
		comps, nulls, _ := splitComponents(b, len(t.Elems))
		open, close := "(", ")"
		if t.Kind == UDT {
			open, close = "{", "}"
		}
		w.WriteString(open)
		for i, c := range comps {
			if i > 0 {
				w.WriteString(", ")
			}
			if t.Kind == UDT {
				w.WriteString(quoteName(t.Fields[i]))
				w.WriteString(": ")
			}
			if nulls[i] {
				w.WriteString("null")
			} else {
				format(w, t.Elems[i], c)
			}
		}
		w.WriteString(close)
	}
}

func quote(w *strings.Builder, s string) {
	w.WriteByte('\'')
	w.WriteString(strings.ReplaceAll(s, "'", "''"))
	w.WriteByte('\'')
}

func formatUUID(u []byte) string {
	h := hex.EncodeToString(u)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// javaFloat prints f as Java's Float/Double.toString: NaN, Infinity, -0.0; plain with at least
// one fractional digit for 10^-3 <= |f| < 10^7, else d.dddE±n; the shortest digits that read
// back.
func javaFloat(f float64, bitSize int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	abs := math.Abs(f)
	if abs == 0 || abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bitSize)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, bitSize) // d.ddde±nn
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// javaDecimal prints a decimal as Java's BigDecimal.toString: plain when the scale is not
// negative and the adjusted exponent is at least -6, scientific (1.23E+5) otherwise.
func javaDecimal(u *big.Int, scale int32) string {
	digits := new(big.Int).Abs(u).String()
	sign := ""
	if u.Sign() < 0 {
		sign = "-"
	}
	adjusted := int64(len(digits)) - 1 - int64(scale)
	if scale >= 0 && adjusted >= -6 {
		if scale == 0 {
			return sign + digits
		}
		if int64(len(digits)) > int64(scale) {
			p := len(digits) - int(scale)
			return sign + digits[:p] + "." + digits[p:]
		}
		return sign + "0." + strings.Repeat("0", int(scale)-len(digits)) + digits
	}
	s := digits[:1]
	if len(digits) > 1 {
		s += "." + digits[1:]
	}
	exp := strconv.FormatInt(adjusted, 10)
	if adjusted >= 0 {
		exp = "+" + exp
	}
	return sign + s + "E" + exp
}
