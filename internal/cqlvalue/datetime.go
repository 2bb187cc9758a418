package cqlvalue

import (
	"fmt"
	"strconv"
	"time"
)

// Timestamps, dates and times as CQL writes them in strings and integers.
//
// timestamp: milliseconds since the epoch (int64). date: days since the epoch plus 2^31
// (uint32, so that byte order is date order). time: nanoseconds since midnight (int64).

const (
	msPerDay  = 86400000
	epochDays = 1 << 31 // the serialized date of 1970-01-01
	maxUint32 = 1<<32 - 1
	// maxYear bounds the years read, well inside what milliseconds in an int64 can hold.
	maxYear = 200000000
)

// isInteger reports whether s is an optional '-' then digits (Cassandra's ^-?\d+$).
func isInteger(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseTimestamp reads a timestamp as Cassandra's TimestampSerializer does: an integer of
// milliseconds, or yyyy-mm-dd, optionally followed by ' ' or 'T' and hh:mm[:ss[.fff]], optionally
// followed by a zone (Z, +hh, +hhmm, +hh:mm, also after a bare date). Without a zone the time is
// UTC (Cassandra uses the server's zone). Fractions of more than 3 digits are truncated to
// milliseconds.
func parseTimestamp(s string) (int64, error) {
	if isInteger(s) {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("Unable to make long (for date) from: '%s'", s)
		}
		return v, nil
	}
	bad := fmt.Errorf("Unable to coerce '%s' to a formatted date (long)", s)
	p := &scanner{s: s}
	y, mo, d, ok := p.date()
	if !ok {
		return 0, bad
	}
	var h, mi, sec, nanos int
	if p.peek(' ') || p.peek('T') {
		p.i++
		var ok bool
		if h, ok = p.num(2); !ok || !p.lit(':') {
			return 0, bad
		}
		if mi, ok = p.num(2); !ok {
			return 0, bad
		}
		if p.lit(':') {
			if sec, ok = p.num(2); !ok {
				return 0, bad
			}
			if p.lit('.') {
				if nanos, ok = p.fraction(); !ok {
					return 0, bad
				}
			}
		}
		if h > 23 || mi > 59 || sec > 59 {
			return 0, bad
		}
	}
	offset, ok := p.zone()
	if !ok || p.i != len(s) {
		return 0, bad
	}
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) {
		return 0, bad
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, nanos, time.UTC)
	return t.UnixMilli() - int64(offset)*1000, nil
}

func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// parseDate reads a date as Cassandra's SimpleDateSerializer does: an integer is the serialized
// value itself (0 to 2^32-1, 2^31 being the epoch); otherwise yyyy-mm-dd.
func parseDate(s string) (uint32, error) {
	if isInteger(s) {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 || v > maxUint32 {
			return 0, fmt.Errorf("Unable to make unsigned int (for date) from: '%s'", s)
		}
		return uint32(v), nil
	}
	bad := fmt.Errorf("Unable to coerce '%s' to a formatted date (long)", s)
	p := &scanner{s: s}
	y, mo, d, ok := p.date()
	if !ok || p.i != len(s) || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) {
		return 0, bad
	}
	days := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	v := days + epochDays
	if v < 0 || v > maxUint32 {
		return 0, fmt.Errorf("Input date %s is out of the supported range", s)
	}
	return uint32(v), nil
}

// parseTime reads a time as Cassandra's TimeSerializer does: an integer of nanoseconds, or
// hh:mm:ss[.fffffffff].
func parseTime(s string) (int64, error) {
	if isInteger(s) {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 || v > maxTimeNanos {
			return 0, fmt.Errorf("Unable to make long (for time) from: '%s'", s)
		}
		return v, nil
	}
	bad := fmt.Errorf("Unable to coerce '%s' to a formatted time (long)", s)
	p := &scanner{s: s}
	h, ok1 := p.num(2)
	ok2 := p.lit(':')
	m, ok3 := p.num(2)
	ok4 := p.lit(':')
	sec, ok5 := p.num(2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5) || h > 23 || m > 59 || sec > 59 {
		return 0, bad
	}
	var nanos int
	if p.lit('.') {
		var ok bool
		if nanos, ok = p.fraction(); !ok {
			return 0, bad
		}
	}
	if p.i != len(s) {
		return 0, bad
	}
	return ((int64(h)*60+int64(m))*60+int64(sec))*1e9 + int64(nanos), nil
}

// scanner reads the pieces of date and time strings.
type scanner struct {
	s string
	i int
}

func (p *scanner) peek(c byte) bool { return p.i < len(p.s) && p.s[p.i] == c }

func (p *scanner) lit(c byte) bool {
	if p.peek(c) {
		p.i++
		return true
	}
	return false
}

// num reads exactly n digits.
func (p *scanner) num(n int) (int, bool) {
	if p.i+n > len(p.s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(p.s[p.i : p.i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	p.i += n
	return v, true
}

// date reads [-]yyyy-mm-dd (a year of 1 to 9 digits).
func (p *scanner) date() (y, m, d int, ok bool) {
	neg := p.lit('-')
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' && p.i-start < 9 {
		y = y*10 + int(p.s[p.i]-'0')
		p.i++
	}
	if p.i == start || !p.lit('-') {
		return 0, 0, 0, false
	}
	if neg {
		y = -y
	}
	if y > maxYear || y < -maxYear {
		return 0, 0, 0, false
	}
	if m, ok = p.num(2); !ok || !p.lit('-') {
		return 0, 0, 0, false
	}
	if d, ok = p.num(2); !ok {
		return 0, 0, 0, false
	}
	return y, m, d, true
}

// fraction reads 1 to 9 digits of a second's fraction as nanoseconds.
func (p *scanner) fraction() (int, bool) {
	start := p.i
	v := 0
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		if p.i-start == 9 {
			return 0, false
		}
		v = v*10 + int(p.s[p.i]-'0')
		p.i++
	}
	n := p.i - start
	if n == 0 {
		return 0, false
	}
	for ; n < 9; n++ {
		v *= 10
	}
	return v, true
}

// zone reads an optional zone: Z, +hh, +hhmm or +hh:mm (or -), as seconds east of UTC.
func (p *scanner) zone() (int, bool) {
	if p.i == len(p.s) {
		return 0, true
	}
	if p.lit('Z') {
		return 0, true
	}
	sign := 1
	switch {
	case p.lit('+'):
	case p.lit('-'):
		sign = -1
	default:
		return 0, false
	}
	h, ok := p.num(2)
	if !ok || h > 18 {
		return 0, false
	}
	m := 0
	if p.i < len(p.s) {
		p.lit(':')
		if m, ok = p.num(2); !ok || m > 59 {
			return 0, false
		}
	}
	return sign * (h*3600 + m*60), true
}

// timestampTime is the time of a timestamp in milliseconds.
func timestampTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
