package cqlvalue

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// duration is a CQL duration: months, days and nanoseconds, all of one sign. Serialized as three
// signed vints in that order.
type duration struct {
	months, days int32
	nanos        int64
}

func (d duration) append(dst []byte) []byte {
	dst = appendVint(dst, int64(d.months))
	dst = appendVint(dst, int64(d.days))
	return appendVint(dst, d.nanos)
}

// decodeDuration reads and checks a serialized duration, with Cassandra's messages.
func decodeDuration(b []byte) (duration, error) {
	if len(b) < 3 {
		return duration{}, fmt.Errorf("Expected at least 3 bytes for a duration (%d)", len(b))
	}
	months, rest, err := readVint(b)
	if err != nil {
		return duration{}, errors.New("Invalid duration value: not enough bytes")
	}
	days, rest, err := readVint(rest)
	if err != nil {
		return duration{}, errors.New("Invalid duration value: not enough bytes")
	}
	nanos, rest, err := readVint(rest)
	if err != nil {
		return duration{}, errors.New("Invalid duration value: not enough bytes")
	}
	if len(rest) > 0 {
		return duration{}, errors.New("Invalid duration value: unexpected extraneous bytes")
	}
	if months != int64(int32(months)) {
		return duration{}, fmt.Errorf("The duration months must be a 32 bits integer but was: %d", months)
	}
	if days != int64(int32(days)) {
		return duration{}, fmt.Errorf("The duration days must be a 32 bits integer but was: %d", days)
	}
	if !(months >= 0 && days >= 0 && nanos >= 0 || months <= 0 && days <= 0 && nanos <= 0) {
		return duration{}, fmt.Errorf("The duration months, days and nanoseconds must be all of the same sign (%d, %d, %d)", months, days, nanos)
	}
	return duration{int32(months), int32(days), nanos}, nil
}

// Units of the duration literal (1y2mo3w4d5h6m7s8ms9us10ns): where each adds, and how much.
const (
	unitMonths = iota
	unitDays
	unitNanos
)

var durationUnits = map[string]struct {
	field int
	scale int64
}{
	"y": {unitMonths, 12}, "mo": {unitMonths, 1}, "w": {unitDays, 7}, "d": {unitDays, 1},
	"h": {unitNanos, 3600e9}, "m": {unitNanos, 60e9}, "s": {unitNanos, 1e9},
	"ms": {unitNanos, 1e6}, "us": {unitNanos, 1e3}, "µs": {unitNanos, 1e3}, "ns": {unitNanos, 1},
}

// parseDuration reads a duration literal as the parser gives it (lower case, '-' when
// negative): integer-unit pairs. Messages are Cassandra's.
func parseDuration(text string) (duration, error) {
	s, neg := strings.CutPrefix(text, "-")
	bad := func() (duration, error) {
		return duration{}, fmt.Errorf("Unable to convert '%s' to a duration", text)
	}
	if s == "" {
		return bad()
	}
	var total [3]int64
	limits := [3]int64{math.MaxInt32, math.MaxInt32, math.MaxInt64}
	names := [3]string{"months", "days", "nanoseconds"}
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		j := i
		for j < len(s) && !(s[j] >= '0' && s[j] <= '9') {
			j++
		}
		u, ok := durationUnits[s[i:j]]
		if i == 0 || !ok {
			return bad()
		}
		n, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || n > (limits[u.field]-total[u.field])/u.scale {
			return duration{}, fmt.Errorf("Invalid duration. The total number of %s must be less or equal to %d", names[u.field], limits[u.field])
		}
		total[u.field] += n * u.scale
		s = s[j:]
	}
	d := duration{int32(total[0]), int32(total[1]), total[2]}
	if neg {
		d = duration{-d.months, -d.days, -d.nanos}
	}
	return d, nil
}

// String prints d as Cassandra does: 1y2mo3d4h5m6s7ms8us9ns, the zero parts left out, -
// before a negative one, 0s for zero... Cassandra prints an empty string for zero; the CQL
// literal for it is 0s, which is what we print.
func (d duration) String() string {
	var b strings.Builder
	m, days, n := int64(d.months), int64(d.days), d.nanos
	if m < 0 || days < 0 || n < 0 {
		b.WriteByte('-')
		m, days = -m, -days
	}
	un := uint64(n)
	if n < 0 {
		un = uint64(-(n + 1)) + 1
	}
	part := func(v uint64, unit string) {
		if v != 0 {
			b.WriteString(strconv.FormatUint(v, 10))
			b.WriteString(unit)
		}
	}
	part(uint64(m/12), "y")
	part(uint64(m%12), "mo")
	part(uint64(days), "d")
	for _, u := range []struct {
		unit string
		size uint64
	}{{"h", 3600e9}, {"m", 60e9}, {"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}} {
		part(un/u.size, u.unit)
		un %= u.size
	}
	if b.Len() == 0 || b.String() == "-" {
		return "0s"
	}
	return b.String()
}
