package query

import (
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/partita-db/partita/internal/value"
)

// String functions. Positions and lengths count characters (Unicode code points): the
// reference defines LENGTH as "the number of characters" and every index as a character
// index; counting code points also means no result can split a character in two. Arguments
// of the wrong type make the result undefined (LOWER(5), LENGTH(null)).
var stringFunctions = map[string]builtin{
	"CONCAT":       variadic(2, pure(concat)),
	"CONTAINS":     ranged(2, 3, pure(stringTest(strings.Contains))),
	"ENDSWITH":     ranged(2, 3, pure(stringTest(strings.HasSuffix))),
	"STARTSWITH":   ranged(2, 3, pure(stringTest(strings.HasPrefix))),
	"STRINGEQUALS": ranged(2, 3, pure(stringTest(func(a, b string) bool { return a == b }))),
	"INDEX_OF":     ranged(2, 3, pure(indexOf)),
	"LASTINDEXOF":  ranged(2, 3, pure(lastIndexOf)),
	"LEFT":         fixed(2, pure(left)),
	"RIGHT":        fixed(2, pure(right)),
	"LENGTH": fixed(1, pure(func(args []value.Value) value.Value {
		s, ok := strArg(args, 0)
		if !ok {
			return undef
		}
		return numV(float64(utf8.RuneCountInString(s)))
	})),
	"LOWER":         stringMap(strings.ToLower),
	"UPPER":         stringMap(strings.ToUpper),
	"REVERSE":       stringMap(reverse),
	"LTRIM":         ranged(1, 2, pure(trimmer(true, false))),
	"RTRIM":         ranged(1, 2, pure(trimmer(false, true))),
	"TRIM":          ranged(1, 2, pure(trimmer(true, true))),
	"REPLACE":       fixed(3, pure(replace)),
	"REPLICATE":     fixed(2, pure(replicate)),
	"SUBSTRING":     fixed(3, pure(substring)),
	"TOSTRING":      fixed(1, pure(toString)),
	"REGEXMATCH":    ranged(2, 3, pure(regexMatch)),
	"STRINGJOIN":    fixed(2, pure(stringJoin)),
	"STRINGSPLIT":   fixed(2, pure(stringSplit)),
	"STRINGTOARRAY": stringParse(value.Array),
	// StringToBoolean, StringToNull, StringToNumber and StringToObject parse their argument as
	// JSON (surrounding JSON whitespace allowed) and are undefined unless the text is a
	// value of the expected type: StringToNull("NULL") and StringToNumber("Hello") are
	// undefined, StringToNumber("   60   ") is 60.
	"STRINGTOBOOLEAN": stringParse(value.Boolean),
	"STRINGTONULL":    stringParse(value.Null),
	"STRINGTONUMBER":  stringParse(value.Number),
	"STRINGTOOBJECT":  stringParse(value.Object),

	"SUBSTRINGAFTER":      fixed(2, pure(substringAround(false, false))),
	"SUBSTRINGBEFORE":     fixed(2, pure(substringAround(false, true))),
	"LASTSUBSTRINGAFTER":  fixed(2, pure(substringAround(true, false))),
	"LASTSUBSTRINGBEFORE": fixed(2, pure(substringAround(true, true))),

	"CONTAINS_ALL_CI": variadic(2, pure(containsMany(true, true))),
	"CONTAINS_ALL_CS": variadic(2, pure(containsMany(true, false))),
	"CONTAINS_ANY_CI": variadic(2, pure(containsMany(false, true))),
	"CONTAINS_ANY_CS": variadic(2, pure(containsMany(false, false))),
}

func stringMap(f func(string) string) builtin {
	return fixed(1, pure(func(args []value.Value) value.Value {
		s, ok := strArg(args, 0)
		if !ok {
			return undef
		}
		return strV(f(s))
	}))
}

// CONCAT joins two or more strings; any non-string argument makes it undefined.
func concat(args []value.Value) value.Value {
	var b strings.Builder
	for i := range args {
		s, ok := strArg(args, i)
		if !ok {
			return undef
		}
		b.WriteString(s)
	}
	return strV(b.String())
}

// foldCase is the comparison key for the case-insensitive variants.
func foldCase(s string) string { return strings.ToLower(s) }

// stringTest builds CONTAINS, STARTSWITH, ENDSWITH and STRINGEQUALS: two strings and an
// optional boolean that, when true, makes the comparison case-insensitive.
func stringTest(test func(s, t string) bool) func([]value.Value) value.Value {
	return func(args []value.Value) value.Value {
		s, ok1 := strArg(args, 0)
		t, ok2 := strArg(args, 1)
		ci, ok3 := optBool(args, 2, false)
		if !ok1 || !ok2 || !ok3 {
			return undef
		}
		if ci {
			s, t = foldCase(s), foldCase(t)
		}
		return boolV(test(s, t))
	}
}

// runeIndex converts a byte offset in s to a character index.
func runeIndex(s string, byteOff int) int { return utf8.RuneCountInString(s[:byteOff]) }

// byteOffset converts a character index (clamped to [0, len]) to a byte offset in s.
func byteOffset(s string, chars int) int {
	if chars <= 0 {
		return 0
	}
	for i := range s {
		if chars == 0 {
			return i
		}
		chars--
	}
	return len(s)
}

// INDEX_OF(s, t [, start]) is the character index of the first t in s at or after start,
// or -1. A start past the end finds nothing; a negative start counts as 0.
func indexOf(args []value.Value) value.Value {
	s, ok1 := strArg(args, 0)
	t, ok2 := strArg(args, 1)
	if !ok1 || !ok2 {
		return undef
	}
	start := 0
	if len(args) > 2 {
		var ok bool
		if start, ok = countArg(args, 2); !ok {
			return undef
		}
		if start < 0 {
			start = 0
		}
		if start > utf8.RuneCountInString(s) {
			return numV(-1)
		}
	}
	off := byteOffset(s, start)
	i := strings.Index(s[off:], t)
	if i < 0 {
		return numV(-1)
	}
	return numV(float64(runeIndex(s, off+i)))
}

// LASTINDEXOF(s, t [, start]) searches backwards from start: the match must lie entirely at
// or before start (LASTINDEXOF("abcdeabc", "abc", 6) is 0, with 7 it is 5).
func lastIndexOf(args []value.Value) value.Value {
	s, ok1 := strArg(args, 0)
	t, ok2 := strArg(args, 1)
	if !ok1 || !ok2 {
		return undef
	}
	hay := s
	if len(args) > 2 {
		start, ok := countArg(args, 2)
		if !ok {
			return undef
		}
		if start < 0 {
			return numV(-1)
		}
		hay = s[:byteOffset(s, start+1)]
	}
	i := strings.LastIndex(hay, t)
	if i < 0 {
		return numV(-1)
	}
	return numV(float64(runeIndex(s, i)))
}

// LEFT(s, n) is the first n characters (all of s when n exceeds its length, "" when n <= 0).
func left(args []value.Value) value.Value {
	s, ok1 := strArg(args, 0)
	n, ok2 := countArg(args, 1)
	if !ok1 || !ok2 {
		return undef
	}
	return strV(s[:byteOffset(s, n)])
}

// RIGHT(s, n) is the last n characters.
func right(args []value.Value) value.Value {
	s, ok1 := strArg(args, 0)
	n, ok2 := countArg(args, 1)
	if !ok1 || !ok2 {
		return undef
	}
	if n <= 0 {
		return strV("")
	}
	l := utf8.RuneCountInString(s)
	if n >= l {
		return strV(s)
	}
	return strV(s[byteOffset(s, l-n):])
}

// SUBSTRING(s, start, length): start is zero-based; a length of 0 or less is "" (documented).
// A negative start counts from the first character.
func substring(args []value.Value) value.Value {
	s, ok1 := strArg(args, 0)
	start, ok2 := countArg(args, 1)
	n, ok3 := countArg(args, 2)
	if !ok1 || !ok2 || !ok3 {
		return undef
	}
	if n <= 0 {
		return strV("")
	}
	if start < 0 {
		start = 0
	}
	from := byteOffset(s, start)
	rest := s[from:]
	return strV(rest[:byteOffset(rest, n)])
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// trimmer builds LTRIM, RTRIM and TRIM. Without a second argument they remove whitespace;
// with one they remove any of its characters (TRIM("-_-AdventureWorks-_-", "-_") is
// "AdventureWorks", RTRIM("AdventureWorks", "Works") is "Adventure").
func trimmer(leading, trailing bool) func([]value.Value) value.Value {
	return func(args []value.Value) value.Value {
		s, ok := strArg(args, 0)
		if !ok {
			return undef
		}
		drop := unicode.IsSpace
		if len(args) > 1 {
			set, ok := strArg(args, 1)
			if !ok {
				return undef
			}
			drop = func(r rune) bool { return strings.ContainsRune(set, r) }
		}
		if leading {
			s = strings.TrimLeftFunc(s, drop)
		}
		if trailing {
			s = strings.TrimRightFunc(s, drop)
		}
		return strV(s)
	}
}

// REPLACE(s, find, with) replaces every occurrence; an empty find changes nothing.
func replace(args []value.Value) value.Value {
	s, ok1 := strArg(args, 0)
	find, ok2 := strArg(args, 1)
	with, ok3 := strArg(args, 2)
	if !ok1 || !ok2 || !ok3 {
		return undef
	}
	if find == "" {
		return strV(s)
	}
	return strV(strings.ReplaceAll(s, find, with))
}

// maxReplicate is the documented cap on REPLICATE's result, in characters.
const maxReplicate = 10000

// REPLICATE(s, n) repeats s n times (n truncated to an integer). A negative or non-finite n,
// or a result over 10,000 characters, is undefined.
func replicate(args []value.Value) value.Value {
	s, ok1 := strArg(args, 0)
	f, ok2 := numArg(args, 1)
	if !ok1 || !ok2 || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return undef
	}
	n := int(math.Trunc(min(f, maxReplicate+1)))
	if n == 0 || s == "" {
		return strV("")
	}
	if n*utf8.RuneCountInString(s) > maxReplicate {
		return undef
	}
	return strV(strings.Repeat(s, n))
}

// ToString renders a value as text: strings unchanged, numbers as JavaScript prints them
// (NaN, Infinity), everything else as its JSON. Undefined stays undefined.
func toString(args []value.Value) value.Value {
	v := args[0]
	switch v.Kind() {
	case value.Undefined:
		return undef
	case value.String:
		return v
	case value.Number:
		return strV(numberText(v.Num()))
	}
	return strV(string(value.AppendJSON(nil, v)))
}

// numberText is a number as JavaScript's String() writes it.
func numberText(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return string(value.AppendNumber(nil, f))
}

// RegexMatch(s, pattern [, modifiers]). Cosmos uses PCRE; Go's RE2 syntax covers the common
// subset, and patterns it cannot compile (back-references, look-around) are undefined, as an
// invalid pattern is. The modifiers are any of m (multi-line), s (dot matches newline),
// i (ignore case) and x (ignore whitespace in the pattern); "" means none.
func regexMatch(args []value.Value) value.Value {
	s, ok1 := strArg(args, 0)
	pat, ok2 := strArg(args, 1)
	if !ok1 || !ok2 {
		return undef
	}
	mods := ""
	if len(args) > 2 {
		var ok bool
		if mods, ok = strArg(args, 2); !ok {
			return undef
		}
	}
	flags := ""
	for _, m := range mods {
		switch m {
		case 'i', 'm', 's':
			if !strings.ContainsRune(flags, m) {
				flags += string(m)
			}
		case 'x':
			pat = stripExtended(pat)
		default:
			return undef
		}
	}
	if flags != "" {
		pat = "(?" + flags + ")" + pat
	}
	re, err := compileRegex(pat)
	if err != nil {
		return undef
	}
	return boolV(re.MatchString(s))
}

// stripExtended applies PCRE's x modifier, which RE2 lacks: unescaped whitespace outside a
// character class is dropped, and # starts a comment that runs to the end of the line.
func stripExtended(p string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			i++
			b.WriteByte(p[i])
			continue
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			continue
		case c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Compiled patterns are cached: a query applies the same pattern to every item.
var regexCache struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}

// maxCachedRegexes bounds the cache; it is simply emptied when full.
const maxCachedRegexes = 1000

func compileRegex(p string) (*regexp.Regexp, error) {
	regexCache.Lock()
	re, ok := regexCache.m[p]
	regexCache.Unlock()
	if ok {
		return re, nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	regexCache.Lock()
	if regexCache.m == nil || len(regexCache.m) >= maxCachedRegexes {
		regexCache.m = map[string]*regexp.Regexp{}
	}
	regexCache.m[p] = re
	regexCache.Unlock()
	return re, nil
}

// StringJoin(array, separator) joins an array of strings; a non-string element or separator
// (including undefined) makes it undefined.
func stringJoin(args []value.Value) value.Value {
	sep, ok := strArg(args, 1)
	if !ok || args[0].Kind() != value.Array {
		return undef
	}
	parts := make([]string, 0, args[0].Len())
	for _, e := range args[0].Elems() {
		if e.Kind() != value.String {
			return undef
		}
		parts = append(parts, e.Str())
	}
	return strV(strings.Join(parts, sep))
}

// StringSplit(s, delimiter) splits on every occurrence of the delimiter. An empty delimiter
// does not split at all: StringSplit("Helmet", "") is ["Helmet"] and StringSplit("", "") is
// [""] in the reference.
func stringSplit(args []value.Value) value.Value {
	s, ok1 := strArg(args, 0)
	d, ok2 := strArg(args, 1)
	if !ok1 || !ok2 {
		return undef
	}
	var parts []string
	if d == "" {
		parts = []string{s}
	} else {
		parts = strings.Split(s, d)
	}
	out := make([]value.Value, len(parts))
	for i, p := range parts {
		out[i] = strV(p)
	}
	return value.Arr(out)
}

func stringParse(want value.Kind) builtin {
	return fixed(1, pure(func(args []value.Value) value.Value {
		s, ok := strArg(args, 0)
		if !ok {
			return undef
		}
		v, err := value.Parse([]byte(s))
		if err != nil && want == value.Number {
			// Parse refuses numbers past the double range in documents; here they are
			// Infinity, as in JavaScript.
			t := strings.TrimSpace(s)
			if f, ferr := strconv.ParseFloat(t, 64); math.IsInf(f, 0) && errors.Is(ferr, strconv.ErrRange) && json.Valid([]byte(t)) {
				return value.Num(f)
			}
		}
		if err != nil || v.Kind() != want {
			return undef
		}
		return v
	}))
}

// substringAround builds SUBSTRINGAFTER/BEFORE and LASTSUBSTRINGAFTER/BEFORE: the text after
// or before the first (or last) occurrence of a delimiter. When the delimiter does not occur
// the result is "" — the reference shows only matching cases; "" is what "the text after the
// delimiter" is when there is no delimiter, as in XPath's substring-after.
func substringAround(last, before bool) func([]value.Value) value.Value {
	return func(args []value.Value) value.Value {
		s, ok1 := strArg(args, 0)
		d, ok2 := strArg(args, 1)
		if !ok1 || !ok2 {
			return undef
		}
		i := strings.Index(s, d)
		if last {
			i = strings.LastIndex(s, d)
		}
		switch {
		case i < 0:
			return strV("")
		case before:
			return strV(s[:i])
		}
		return strV(s[i+len(d):])
	}
}

// containsMany builds CONTAINS_ALL_CI/CS and CONTAINS_ANY_CI/CS: CONTAINS of each search
// string, combined with AND (all) or OR (any) in three-valued logic, so an undefined (or
// non-string) search term makes the result undefined unless another term already decides it:
// CONTAINS_ALL_CI(s, undefined, "had") is false when "had" is missing, and undefined when all
// the others are found.
func containsMany(all, ci bool) func([]value.Value) value.Value {
	return func(args []value.Value) value.Value {
		s, ok := strArg(args, 0)
		if !ok {
			return undef
		}
		if ci {
			s = foldCase(s)
		}
		unknown := false
		for i := 1; i < len(args); i++ {
			t, ok := strArg(args, i)
			if !ok {
				unknown = true
				continue
			}
			if ci {
				t = foldCase(t)
			}
			found := strings.Contains(s, t)
			if all && !found {
				return boolV(false)
			}
			if !all && found {
				return boolV(true)
			}
		}
		if unknown {
			return undef
		}
		return boolV(all)
	}
}
