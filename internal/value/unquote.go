package value

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// One decoder for the bodies of quoted strings, shared by the JSON parser, the SQL lexer, the
// partition key header and the item scanner, so that the same text always decodes to the
// same string: a partition key must hash alike whether it came in a header or in a body.
// Where JSON leaves a choice, encoding/json's answer is taken: a surrogate escape that does
// not pair with the escape right after it becomes U+FFFD and that next escape is read on its
// own; invalid UTF-8 becomes U+FFFD, one per bad byte.

// Dialect selects the escapes a quoted string may use beyond JSON's, and whether raw control
// characters are allowed.
type Dialect uint8

const (
	escApostrophe Dialect = 1 << iota // \'
	escGo                             // \a \v \xHH \UHHHHHHHH
	rawControls                       // bytes below 0x20 stand for themselves
)

const (
	// DialectJSON is RFC 8259: \" \\ \/ \b \f \n \r \t \uHHHH; no raw control characters.
	DialectJSON Dialect = 0
	// DialectSQL is Cosmos SQL string literals, in either quote: JSON's escapes plus \'.
	DialectSQL = escApostrophe
	// DialectGo is JSON read leniently enough for Go-quoted strings (strconv.Quote and %q),
	// as the Go SDK writes the partition key header: it adds \' \a \v \xHH and \UHHHHHHHH
	// and lets raw control characters through. \x escapes are bytes, so the string is
	// checked as a whole: bytes that do not form valid UTF-8, raw or escaped, become U+FFFD,
	// as encoding/json makes of the same Go string in a body.
	DialectGo = escApostrophe | escGo | rawControls
)

// UnquoteReason says what is wrong with a quoted string.
type UnquoteReason uint8

const (
	Unterminated  UnquoteReason = iota + 1 // no closing quote
	ControlChar                            // a raw byte below 0x20 where the dialect refuses it
	LoneBackslash                          // the input ends right after a backslash
	UnknownEscape                          // a backslash followed by a character the dialect does not know
	ShortHex                               // the input ends within the hex digits of \u, \x or \U
	BadHex                                 // \u, \x or \U followed by a character that is not a hex digit
	RuneRange                              // \U beyond U+10FFFF
)

var unquoteReasons = [...]string{
	Unterminated:  "unterminated string",
	ControlChar:   "control character in string",
	LoneBackslash: "unterminated escape",
	UnknownEscape: "invalid escape",
	ShortHex:      "hex escape cut short",
	BadHex:        "invalid hex escape",
	RuneRange:     "\\U escape out of range",
}

func (r UnquoteReason) String() string {
	if int(r) < len(unquoteReasons) && unquoteReasons[r] != "" {
		return unquoteReasons[r]
	}
	return "UnquoteReason(" + strconv.Itoa(int(r)) + ")"
}

// UnquoteError is what Unquote and AppendUnquoted return for a string they refuse. Off is an
// offset in their src: of the offending byte, of the backslash that starts a bad escape, or
// len(src) for Unterminated. Callers word it in their own messages.
type UnquoteError struct {
	Off    int
	Reason UnquoteReason
}

func (e *UnquoteError) Error() string {
	return e.Reason.String() + " at offset " + strconv.Itoa(e.Off)
}

// Unquote decodes the string body at the start of src, which is just past the opening quote,
// up to the closing quote, and returns it with the index in src just past that quote. A
// body without escapes or invalid UTF-8 costs no allocation when src is a string and one
// when it is a []byte.
func Unquote[S ~string | ~[]byte](src S, quote byte, d Dialect) (string, int, error) {
	return unquoteFrom(src, 0, quote, d)
}

// unquoteFrom is Unquote knowing that src[:i] needs no decoding.
func unquoteFrom[S ~string | ~[]byte](src S, i int, quote byte, d Dialect) (string, int, error) {
	for i < len(src) {
		c := src[i]
		if c == quote {
			return string(src[:i]), i + 1, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, n := decodeRune(src, i)
		if r == utf8.RuneError && n == 1 {
			break
		}
		i += n
	}
	var buf [128]byte // most strings with escapes are short: decode them on the stack
	out, end, err := appendUnquoted(buf[:0], src, i, quote, d)
	if err != nil {
		return "", 0, err
	}
	return string(out), end, nil
}

// AppendUnquoted is Unquote appending the decoded string to dst. On error dst is returned
// with part of the string appended.
func AppendUnquoted[S ~string | ~[]byte](dst []byte, src S, quote byte, d Dialect) ([]byte, int, error) {
	return appendUnquoted(dst, src, 0, quote, d)
}

// appendUnquoted decodes src into dst, knowing that src[:i] holds nothing to decode.
func appendUnquoted[S ~string | ~[]byte](dst []byte, src S, i int, quote byte, d Dialect) ([]byte, int, error) {
	base := len(dst)
	recheck := false // DialectGo: dst may hold invalid UTF-8, from \x escapes or raw
	run := 0         // start of the bytes not yet copied to dst, which stand for themselves
	for i < len(src) {
		c := src[i]
		switch {
		case c == quote:
			dst = append(dst, src[run:i]...)
			if recheck && !utf8.Valid(dst[base:]) {
				dst = replaceInvalidUTF8(dst, base)
			}
			return dst, i + 1, nil
		case c == '\\':
			dst = append(dst, src[run:i]...)
			var err error
			if dst, i, err = appendEscape(dst, src, i, d, &recheck); err != nil {
				return dst, 0, err
			}
			run = i
		case c < 0x20:
			if d&rawControls == 0 {
				return dst, 0, &UnquoteError{Off: i, Reason: ControlChar}
			}
			i++
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := decodeRune(src, i)
			if r == utf8.RuneError && n == 1 {
				if d&escGo != 0 {
					recheck = true // a \x escape may complete it
				} else {
					dst = append(dst, src[run:i]...)
					dst = append(dst, "\uFFFD"...)
					run = i + 1
				}
			}
			i += n
		}
	}
	return dst, 0, &UnquoteError{Off: len(src), Reason: Unterminated}
}

// appendEscape decodes the escape whose backslash is src[i] and returns the index past it.
func appendEscape[S ~string | ~[]byte](dst []byte, src S, i int, d Dialect, recheck *bool) ([]byte, int, error) {
	if i+1 >= len(src) {
		return dst, 0, &UnquoteError{Off: i, Reason: LoneBackslash}
	}
	switch e := src[i+1]; e {
	case '"', '\\', '/':
		return append(dst, e), i + 2, nil
	case 'b':
		return append(dst, '\b'), i + 2, nil
	case 'f':
		return append(dst, '\f'), i + 2, nil
	case 'n':
		return append(dst, '\n'), i + 2, nil
	case 'r':
		return append(dst, '\r'), i + 2, nil
	case 't':
		return append(dst, '\t'), i + 2, nil
	case 'u':
		h, err := hexEscape(src, i, 4)
		if err != nil {
			return dst, 0, err
		}
		r, end := rune(h), i+6
		if utf16.IsSurrogate(r) {
			// Only a pair makes a character; otherwise the lone half is U+FFFD and the
			// next escape is left to be read on its own.
			pair := utf8.RuneError
			if end+1 < len(src) && src[end] == '\\' && src[end+1] == 'u' {
				if lo, err := hexEscape(src, end, 4); err == nil {
					pair = utf16.DecodeRune(r, rune(lo))
				}
			}
			if r = pair; r != utf8.RuneError {
				end += 6
			}
		}
		return utf8.AppendRune(dst, r), end, nil
	case '\'':
		if d&escApostrophe != 0 {
			return append(dst, e), i + 2, nil
		}
	case 'a':
		if d&escGo != 0 {
			return append(dst, '\a'), i + 2, nil
		}
	case 'v':
		if d&escGo != 0 {
			return append(dst, '\v'), i + 2, nil
		}
	case 'x':
		if d&escGo != 0 {
			r, err := hexEscape(src, i, 2)
			if err != nil {
				return dst, 0, err
			}
			if r >= utf8.RuneSelf {
				*recheck = true
			}
			return append(dst, byte(r)), i + 4, nil
		}
	case 'U':
		if d&escGo != 0 {
			r, err := hexEscape(src, i, 8)
			if err != nil {
				return dst, 0, err
			}
			if r > utf8.MaxRune {
				return dst, 0, &UnquoteError{Off: i, Reason: RuneRange}
			}
			return utf8.AppendRune(dst, rune(r)), i + 10, nil // a surrogate becomes U+FFFD
		}
	}
	return dst, 0, &UnquoteError{Off: i, Reason: UnknownEscape}
}

// hexEscape reads the n hex digits after the two characters of the escape at src[i].
func hexEscape[S ~string | ~[]byte](src S, i, n int) (uint32, error) {
	i += 2
	if i+n > len(src) {
		return 0, &UnquoteError{Off: i - 2, Reason: ShortHex}
	}
	var r uint32
	for j := i; j < i+n; j++ {
		c, v := src[j], byte(0)
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, &UnquoteError{Off: i - 2, Reason: BadHex}
		}
		r = r<<4 | uint32(v)
	}
	return r, nil
}

// decodeRune is utf8.DecodeRune at src[i] for either kind of src, without converting src.
func decodeRune[S ~string | ~[]byte](src S, i int) (rune, int) {
	var b [utf8.UTFMax]byte
	n := copy(b[:], src[i:])
	return utf8.DecodeRune(b[:n])
}

// replaceInvalidUTF8 replaces each byte of dst[base:] that is not part of valid UTF-8 with
// U+FFFD, as encoding/json does.
func replaceInvalidUTF8(dst []byte, base int) []byte {
	tail := append([]byte(nil), dst[base:]...)
	dst = dst[:base]
	for j := 0; j < len(tail); {
		r, n := utf8.DecodeRune(tail[j:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, tail[j:j+n]...)
		}
		j += n
	}
	return dst
}
