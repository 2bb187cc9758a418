package document

import "bytes"

// The scanner below walks JSON that value.Parse has already accepted, so it only needs to
// find where values end, not to report syntax errors.

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// stringEnd returns the index just past the closing quote of the string starting at b[i] == '"'.
// It jumps from quote to quote (bytes.IndexByte is vectorized: strings are most of an item):
// a quote after an odd number of backslashes is escaped.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			break
		}
		i += q
		slashes := 0
		for j := i - 1; b[j] == '\\'; j-- {
			slashes++
		}
		if slashes%2 == 0 {
			return i + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the value starting at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	default: // number, true, false, null
		for ; i < len(b); i++ {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}

// member is one "key": value pair of an object, as offsets into the body.
type member struct {
	start    int    // first byte of the key's opening quote
	valStart int    // first byte of the value
	end      int    // just past the value
	key      string // the decoded key
}

// members calls fn for each member of the object starting at b[i] == '{' until fn returns false.
func members(b []byte, i int, fn func(m member) bool) {
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] == '"' {
		key, keyEnd := decodeString(b, i)
		v := skipSpace(b, keyEnd)
		v = skipSpace(b, v+1) // past ':'
		end := valueEnd(b, v)
		if !fn(member{start: i, valStart: v, end: end, key: key}) {
			return
		}
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
}
