package epk

import (
	"errors"
	"fmt"
)

// EPK is an effective partition key: raw bytes held in a string so that it is
// comparable, usable as a map key, and ordered by plain byte-string order
// (==, <), which is the order Cosmos DB uses for partition key ranges. Cosmos
// DB shows EPKs as uppercase hex; use Hex and ParseHex at the edges.
type EPK string

const (
	// Min is the smallest EPK, the inclusive start of the key space.
	Min EPK = ""
	// Max is the exclusive end of the key space (hex "FF"). Every hashed
	// EPK is below it: v1 EPKs start with 0x05 and v2/MultiHash EPKs with a
	// byte below 0x40.
	Max EPK = "\xff"
)

const hexDigits = "0123456789ABCDEF"

// Hex returns e as uppercase hex, the form Cosmos DB uses in /pkranges and
// feed ranges; Min gives "".
func (e EPK) Hex() string {
	b := make([]byte, 2*len(e))
	for i := 0; i < len(e); i++ {
		b[2*i] = hexDigits[e[i]>>4]
		b[2*i+1] = hexDigits[e[i]&0x0F]
	}
	return string(b)
}

// ErrInvalidHex is wrapped by every error ParseHex returns.
var ErrInvalidHex = errors.New("epk: invalid hex")

// ParseHex parses hex of either case into an EPK; "" is Min. It fails on an
// odd length or a character that is not a hex digit.
func ParseHex(s string) (EPK, error) {
	if len(s)%2 != 0 {
		return "", fmt.Errorf("%w: odd length %d", ErrInvalidHex, len(s))
	}
	b := make([]byte, len(s)/2)
	for i := range b {
		hi, ok1 := fromHexDigit(s[2*i])
		lo, ok2 := fromHexDigit(s[2*i+1])
		if !ok1 || !ok2 {
			j := 2 * i
			if ok1 {
				j++
			}
			return "", fmt.Errorf("%w: bad digit %q at offset %d", ErrInvalidHex, s[j], j)
		}
		b[i] = hi<<4 | lo
	}
	return EPK(b), nil
}

func fromHexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
