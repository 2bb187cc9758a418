package query

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/partita-db/partita/internal/value"
)

// Date and time functions. Cosmos has no date type: a date and time is a UTC string in ISO
// 8601 form, and the functions write it as "YYYY-MM-DDThh:mm:ss.fffffffZ", always with seven
// fractional digits (ticks of 100 ns). Internally a date is a count of ticks since
// 0001-01-01T00:00:00 (as in .NET, whose DateTime range, years 1 to 9999, bounds every
// result); "ticks" and "timestamps" the functions exchange count from the Unix epoch.
// Invalid strings, unknown parts and out-of-range results give undefined.
var dateFunctions = map[string]builtin{
	"GETCURRENTDATETIME":        fixed(0, currentDateTime),
	"GETCURRENTDATETIMESTATIC":  fixed(0, currentDateTime),
	"GETCURRENTTICKS":           fixed(0, currentTicks),
	"GETCURRENTTICKSSTATIC":     fixed(0, currentTicks),
	"GETCURRENTTIMESTAMP":       fixed(0, currentTimestamp),
	"GETCURRENTTIMESTAMPSTATIC": fixed(0, currentTimestamp),
	"NOW":                       ranged(0, 2, now),
	"AGO":                       fixed(2, ago),
	"DATETIMEADD":               fixed(3, pure(dateTimeAdd)),
	"DATETIMEBIN":               ranged(2, 4, pure(dateTimeBin)),
	"DATETIMEDIFF":              fixed(3, pure(dateTimeDiff)),
	"DATETIMEFROMPARTS":         ranged(3, 7, pure(dateTimeFromParts)),
	"DATETIMEPART":              fixed(2, pure(dateTimePart)),
	"DATETIMEFORMAT":            fixed(2, pure(dateTimeFormat)),
	"DATETIMETOTICKS":           fixed(1, pure(dateTimeToTicks)),
	"DATETIMETOTIMESTAMP":       fixed(1, pure(dateTimeToTimestamp)),
	"TICKSTODATETIME":           fixed(1, pure(ticksToDateTime)),
	"TIMESTAMPTODATETIME":       fixed(1, pure(timestampToDateTime)),
	"YEAR":                      fixed(1, pure(partOf(partYear))),
	"MONTH":                     fixed(1, pure(partOf(partMonth))),
	"DAY":                       fixed(1, pure(partOf(partDay))),
	"IS_DATETIME": typeTest(func(v value.Value) bool {
		_, ok := parseDateTime(v)
		return ok
	}),
}

const (
	ticksPerMicro  = 10
	ticksPerMilli  = 10_000
	ticksPerSecond = 10_000_000
	ticksPerMinute = 60 * ticksPerSecond
	ticksPerHour   = 60 * ticksPerMinute
	ticksPerDay    = 24 * ticksPerHour
	// unixTicks is 1970-01-01T00:00:00 in ticks since 0001-01-01.
	unixTicks = 621_355_968_000_000_000
	// maxTicks is 9999-12-31T23:59:59.9999999.
	maxTicks = 3_155_378_975_999_999_999
	// unixSeconds0001 is 0001-01-01 in Unix seconds.
	unixSeconds0001 = -62_135_596_800
)

type datePart int

const (
	partNone datePart = iota
	partYear
	partMonth
	partDay
	partHour
	partMinute
	partSecond
	partMillisecond
	partMicrosecond
	partNanosecond
)

// partNames are the documented names of each part; matching ignores case.
var partNames = map[string]datePart{
	"year": partYear, "yyyy": partYear, "yy": partYear,
	"month": partMonth, "mm": partMonth, "m": partMonth,
	"day": partDay, "dd": partDay, "d": partDay,
	"hour": partHour, "hh": partHour,
	"minute": partMinute, "mi": partMinute, "n": partMinute,
	"second": partSecond, "ss": partSecond, "s": partSecond,
	"millisecond": partMillisecond, "ms": partMillisecond,
	"microsecond": partMicrosecond, "mcs": partMicrosecond,
	"nanosecond": partNanosecond, "ns": partNanosecond,
}

func partArg(args []value.Value, i int) (datePart, bool) {
	s, ok := strArg(args, i)
	if !ok {
		return partNone, false
	}
	p, ok := partNames[strings.ToLower(s)]
	return p, ok
}

// partTicks is the length of the fixed-length parts, in ticks. Nanoseconds are finer than a
// tick and are handled where they occur.
func partTicks(p datePart) int64 {
	switch p {
	case partDay:
		return ticksPerDay
	case partHour:
		return ticksPerHour
	case partMinute:
		return ticksPerMinute
	case partSecond:
		return ticksPerSecond
	case partMillisecond:
		return ticksPerMilli
	case partMicrosecond:
		return ticksPerMicro
	}
	return 0
}

// parseDateTime reads the ISO 8601 forms Cosmos accepts, as the IS_DATETIME reference spells
// them out: "YYYY-MM-DD", optionally followed by "Z", or followed by "T" or a space and
// "hh:mm:ss", then optionally "." and one to seven fractional digits, then optionally "Z".
// The fields must make a real date and time.
func parseDateTime(v value.Value) (int64, bool) {
	if v.Kind() != value.String {
		return 0, false
	}
	s := v.Str()
	digits := func(from, n int) (int, bool) {
		if from+n > len(s) {
			return 0, false
		}
		x := 0
		for i := from; i < from+n; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			x = x*10 + int(c-'0')
		}
		return x, true
	}
	y, ok1 := digits(0, 4)
	mo, ok2 := digits(5, 2)
	d, ok3 := digits(8, 2)
	if !ok1 || !ok2 || !ok3 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	var h, mi, sec, frac int
	rest := s[10:]
	switch {
	case rest == "" || rest == "Z":
	case rest[0] == 'T' || rest[0] == ' ':
		var ok4, ok5, ok6 bool
		h, ok4 = digits(11, 2)
		mi, ok5 = digits(14, 2)
		sec, ok6 = digits(17, 2)
		if !ok4 || !ok5 || !ok6 || s[13] != ':' || s[16] != ':' {
			return 0, false
		}
		rest = s[19:]
		if rest != "" && rest[0] == '.' {
			n := 1
			for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
				n++
			}
			if n == 1 || n > 8 {
				return 0, false
			}
			f, _ := strconv.Atoi(rest[1:n])
			for i := n - 1; i < 7; i++ {
				f *= 10
			}
			frac = f
			rest = rest[n:]
		}
		if rest != "" && rest != "Z" {
			return 0, false
		}
	default:
		return 0, false
	}
	return ticksFromParts(y, mo, d, h, mi, sec, frac)
}

// ticksFromParts validates the fields and converts them to ticks.
func ticksFromParts(y, mo, d, h, mi, s, frac int) (int64, bool) {
	if y < 1 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, time.Month(mo)) ||
		h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 || frac < 0 || frac >= ticksPerSecond {
		return 0, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, s, 0, time.UTC)
	return (t.Unix()-unixSeconds0001)*ticksPerSecond + int64(frac), true
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// civil splits ticks into the calendar date and time, and the ticks within the second.
func civil(ticks int64) (t time.Time, frac int64) {
	return time.Unix(ticks/ticksPerSecond+unixSeconds0001, 0).UTC(), ticks % ticksPerSecond
}

// formatTicks writes ticks as "YYYY-MM-DDThh:mm:ss.fffffffZ".
func formatTicks(ticks int64) string {
	t, frac := civil(ticks)
	b := make([]byte, 0, 28)
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	b = append(b, '.')
	f := strconv.FormatInt(frac, 10)
	for i := len(f); i < 7; i++ {
		b = append(b, '0')
	}
	b = append(b, f...)
	b = append(b, 'Z')
	return string(b)
}

// dateV is the string for ticks, or undefined outside the representable range.
func dateV(ticks int64, ok bool) value.Value {
	if !ok || ticks < 0 || ticks > maxTicks {
		return undef
	}
	return strV(formatTicks(ticks))
}

// nowTicks is the query's current time in ticks. Every call in a query sees the same
// instant (Env.Now), so the *Static variants, which Cosmos fixes per partition, coincide
// with the others.
func nowTicks(env *Env) int64 {
	t := time.Now()
	if env != nil && !env.Now.IsZero() {
		t = env.Now
	}
	return t.UnixNano()/100 + unixTicks
}

func currentDateTime(env *Env, _ []value.Value) value.Value {
	return strV(formatTicks(nowTicks(env)))
}

// currentTicks counts 100 ns ticks since the Unix epoch.
func currentTicks(env *Env, _ []value.Value) value.Value {
	return numV(float64(nowTicks(env) - unixTicks))
}

// currentTimestamp counts milliseconds since the Unix epoch.
func currentTimestamp(env *Env, _ []value.Value) value.Value {
	return numV(float64(floorDiv(nowTicks(env)-unixTicks, ticksPerMilli)))
}

// NOW() is the current date and time; NOW(part, n) adds n parts to it.
func now(env *Env, args []value.Value) value.Value {
	switch len(args) {
	case 0:
		return currentDateTime(env, nil)
	case 2:
		return addParts(args[0], args[1], nowTicks(env), false)
	}
	return undef
}

// AGO(part, n) is the current date and time minus n parts.
func ago(env *Env, args []value.Value) value.Value {
	return addParts(args[0], args[1], nowTicks(env), true)
}

// DateTimeAdd(part, n, datetime): n must be an integer.
func dateTimeAdd(args []value.Value) value.Value {
	t, ok := parseDateTime(args[2])
	if !ok {
		return undef
	}
	return addParts(args[0], args[1], t, false)
}

func addParts(partV, nV value.Value, t int64, negate bool) value.Value {
	p, ok1 := partArg([]value.Value{partV}, 0)
	n, ok2 := intArg([]value.Value{nV}, 0)
	if !ok1 || !ok2 {
		return undef
	}
	if negate {
		if n == math.MinInt64 {
			return undef
		}
		n = -n
	}
	r, ok := addToTicks(t, p, n)
	return dateV(r, ok)
}

// addToTicks adds n parts to t. Adding months or years keeps the day of the month, clamped
// to the length of the target month (January 31 plus one month is the end of February), as
// date arithmetic does in .NET and SQL; the time of day is kept.
func addToTicks(t int64, p datePart, n int64) (int64, bool) {
	switch p {
	case partYear, partMonth:
		months := n
		if p == partYear {
			if n > 10000 || n < -10000 {
				return 0, false
			}
			months = n * 12
		}
		if months > 120000 || months < -120000 {
			return 0, false
		}
		tm, frac := civil(t)
		total := int64(tm.Year())*12 + int64(tm.Month()-1) + months
		y, m := int(floorDiv(total, 12)), time.Month(floorMod(total, 12)+1)
		if y < 1 || y > 9999 {
			return 0, false
		}
		d := min(tm.Day(), daysIn(y, m))
		return ticksFromParts(y, int(m), d, tm.Hour(), tm.Minute(), tm.Second(), int(frac))
	case partNanosecond:
		return t + n/100, true
	}
	unit := partTicks(p)
	if n > maxTicks/unit || n < -maxTicks/unit {
		return 0, false
	}
	return t + n*unit, true
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// DateTimeBin(datetime, part [, size [, origin]]) rounds the date and time down to a
// multiple of size parts counted from origin (default the Unix epoch). Parts run from days
// down to nanoseconds; the size must be a positive integer and the origin no earlier than
// 1601, the Windows epoch, as documented.
func dateTimeBin(args []value.Value) value.Value {
	t, ok := parseDateTime(args[0])
	p, ok2 := partArg(args, 1)
	if !ok || !ok2 || p < partDay {
		return undef
	}
	size := int64(1)
	if len(args) > 2 {
		if size, ok = intArg(args, 2); !ok || size <= 0 {
			return undef
		}
	}
	origin := int64(unixTicks)
	if len(args) > 3 {
		if origin, ok = parseDateTime(args[3]); !ok {
			return undef
		}
		if tm, _ := civil(origin); tm.Year() < 1601 {
			return undef
		}
	}
	delta := t - origin
	if p == partNanosecond {
		if size%100 != 0 {
			// Bins finer than a tick, or not a whole number of ticks: count in nanoseconds,
			// which can exceed 64 bits.
			ns := new(big.Int).Mul(big.NewInt(delta), big.NewInt(100))
			sz := big.NewInt(size)
			q := new(big.Int).Div(ns, sz) // Euclidean division: floors for a positive divisor
			q.Mul(q, sz)
			q.Div(q, big.NewInt(100))
			return dateV(origin+q.Int64(), true)
		}
		size /= 100
		p = partNone
	}
	unit := int64(1)
	if p != partNone {
		unit = partTicks(p)
	}
	if size > maxTicks/unit {
		return dateV(origin+floorDiv(delta, maxTicks+1)*(maxTicks+1), true)
	}
	bin := size * unit
	return dateV(origin+floorDiv(delta, bin)*bin, true)
}

// DateTimeDiff(part, start, end) counts the part boundaries crossed going from start to end,
// not elapsed whole parts: from 2018-03-05T05:00 to 2019-02-04T16:00 is 1 year and 11 months.
func dateTimeDiff(args []value.Value) value.Value {
	p, ok1 := partArg(args, 0)
	a, ok2 := parseDateTime(args[1])
	b, ok3 := parseDateTime(args[2])
	if !ok1 || !ok2 || !ok3 {
		return undef
	}
	switch p {
	case partYear, partMonth:
		ta, _ := civil(a)
		tb, _ := civil(b)
		if p == partYear {
			return numV(float64(tb.Year() - ta.Year()))
		}
		return numV(float64((tb.Year()*12 + int(tb.Month())) - (ta.Year()*12 + int(ta.Month()))))
	case partNanosecond:
		return numV(float64(b-a) * 100)
	}
	unit := partTicks(p)
	return numV(float64(b/unit - a/unit)) // ticks are never negative, so / floors
}

// DateTimeFromParts(year, month, day [, hour, minute, second, fraction]) builds a date and
// time; the fraction is in ticks (3456789 is .3456789 s). Invalid combinations are undefined.
func dateTimeFromParts(args []value.Value) value.Value {
	var f [7]int
	for i := range args {
		n, ok := intArg(args, i)
		if !ok || n < 0 || n > math.MaxInt32 {
			return undef
		}
		f[i] = int(n)
	}
	return dateV(ticksFromParts(f[0], f[1], f[2], f[3], f[4], f[5], f[6]))
}

// DateTimePart(part, datetime) is the numeric value of one part.
func dateTimePart(args []value.Value) value.Value {
	p, ok1 := partArg(args, 0)
	t, ok2 := parseDateTime(args[1])
	if !ok1 || !ok2 {
		return undef
	}
	return numV(float64(partValue(t, p)))
}

func partValue(t int64, p datePart) int64 {
	tm, frac := civil(t)
	switch p {
	case partYear:
		return int64(tm.Year())
	case partMonth:
		return int64(tm.Month())
	case partDay:
		return int64(tm.Day())
	case partHour:
		return int64(tm.Hour())
	case partMinute:
		return int64(tm.Minute())
	case partSecond:
		return int64(tm.Second())
	case partMillisecond:
		return frac / ticksPerMilli
	case partMicrosecond:
		return frac / ticksPerMicro
	}
	return frac * 100
}

// partOf builds YEAR, MONTH and DAY, which behave as DateTimePart with that part.
func partOf(p datePart) func([]value.Value) value.Value {
	return func(args []value.Value) value.Value {
		t, ok := parseDateTime(args[0])
		if !ok {
			return undef
		}
		return numV(float64(partValue(t, p)))
	}
}

// DateTimeToTicks is the 100 ns ticks since the Unix epoch (negative before it).
func dateTimeToTicks(args []value.Value) value.Value {
	t, ok := parseDateTime(args[0])
	if !ok {
		return undef
	}
	return numV(float64(t - unixTicks))
}

// DateTimeToTimestamp is the milliseconds since the Unix epoch.
func dateTimeToTimestamp(args []value.Value) value.Value {
	t, ok := parseDateTime(args[0])
	if !ok {
		return undef
	}
	return numV(float64(floorDiv(t-unixTicks, ticksPerMilli)))
}

// TicksToDateTime takes 100 ns ticks since the Unix epoch (a fraction is dropped).
func ticksToDateTime(args []value.Value) value.Value {
	f, ok := numArg(args, 0)
	if !ok || math.IsNaN(f) || math.Abs(f) > 4e18 {
		return undef
	}
	return dateV(int64(f)+unixTicks, true)
}

// TimestampToDateTime takes milliseconds since the Unix epoch.
func timestampToDateTime(args []value.Value) value.Value {
	f, ok := numArg(args, 0)
	if !ok || math.IsNaN(f) || math.Abs(f) > 4e14 {
		return undef
	}
	return dateV(int64(math.Trunc(f*ticksPerMilli))+unixTicks, true)
}

var (
	monthNames = []string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
	dayNames = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
		"Saturday"}
)

// DateTimeFormat(datetime, format) writes a date and time with a .NET-style custom format
// string (invariant culture): y, M, d, h, H, m, s, f, F, t, K and z specifiers, with "\" to
// escape one character and quotes around literal text. The reference's examples
// "yyyy-MM-dd [HH:mm:ss]" and "To\da\y i\s: yyyy-MM-ddTHH:mm:ss.FFF" show these rules,
// including that F drops trailing zeros (all of them, leaving "20.").
func dateTimeFormat(args []value.Value) value.Value {
	t, ok := parseDateTime(args[0])
	f, ok2 := strArg(args, 1)
	if !ok || !ok2 {
		return undef
	}
	tm, frac := civil(t)
	var b strings.Builder
	pad := func(n, width int) {
		s := strconv.Itoa(n)
		for i := len(s); i < width; i++ {
			b.WriteByte('0')
		}
		b.WriteString(s)
	}
	for i := 0; i < len(f); {
		c := f[i]
		n := 1
		for i+n < len(f) && f[i+n] == c {
			n++
		}
		switch c {
		case 'y':
			if n <= 2 {
				pad(tm.Year()%100, n)
			} else {
				pad(tm.Year(), n)
			}
		case 'M':
			switch {
			case n <= 2:
				pad(int(tm.Month()), n)
			case n == 3:
				b.WriteString(monthNames[tm.Month()-1][:3])
			default:
				b.WriteString(monthNames[tm.Month()-1])
			}
		case 'd':
			switch {
			case n <= 2:
				pad(tm.Day(), n)
			case n == 3:
				b.WriteString(dayNames[tm.Weekday()][:3])
			default:
				b.WriteString(dayNames[tm.Weekday()])
			}
		case 'h':
			h := tm.Hour() % 12
			if h == 0 {
				h = 12
			}
			pad(h, min(n, 2))
		case 'H':
			pad(tm.Hour(), min(n, 2))
		case 'm':
			pad(tm.Minute(), min(n, 2))
		case 's':
			pad(tm.Second(), min(n, 2))
		case 'f', 'F':
			if n > 7 {
				return undef
			}
			digits := strconv.FormatInt(frac+ticksPerSecond, 10)[1 : 1+n]
			if c == 'F' {
				digits = strings.TrimRight(digits, "0")
			}
			b.WriteString(digits)
		case 't':
			ampm := "AM"
			if tm.Hour() >= 12 {
				ampm = "PM"
			}
			if n == 1 {
				ampm = ampm[:1]
			}
			b.WriteString(ampm)
		case 'K':
			b.WriteString(strings.Repeat("Z", n))
		case 'z':
			switch n {
			case 1:
				b.WriteString("+0")
			case 2:
				b.WriteString("+00")
			default:
				b.WriteString("+00:00")
			}
		case '\\':
			if i+1 >= len(f) {
				return undef
			}
			b.WriteByte(f[i+1])
			i += 2
			continue
		case '\'', '"':
			end := strings.IndexByte(f[i+1:], c)
			if end < 0 {
				return undef
			}
			b.WriteString(f[i+1 : i+1+end])
			i += end + 2
			continue
		case '%':
			i++
			continue
		default:
			b.WriteString(f[i : i+n])
		}
		i += n
	}
	return strV(b.String())
}
