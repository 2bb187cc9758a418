package cosmos

import (
	"bytes"
	"crypto/hmac"
	"encoding/base64"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/masterkey"
)

// maxClockSkew is how far x-ms-date may be from the server's clock, as Cosmos allows.
const maxClockSkew = 15 * time.Minute

// keyring holds the decoded account keys.
type keyring struct {
	primary  *masterkey.Key
	readOnly *masterkey.Key // nil when there is no read-only key
	// tokens issues and verifies resource tokens (resourcetoken.go).
	tokens *resourceTokens
	// lastDate remembers the last x-ms-date parsed: clients sign many requests in the same
	// second, and parsing the date was a tenth of the signature check.
	lastDate *atomic.Pointer[parsedDate]
}

type parsedDate struct {
	text string
	when time.Time
}

// parseDate parses an RFC 1123 date in GMT, the only form Cosmos takes (http.ParseTime would
// also take RFC 850 and asctime dates), reusing the last answer for the same text.
func (k keyring) parseDate(text string) (time.Time, error) {
	if last := k.lastDate.Load(); last != nil && last.text == text {
		return last.when, nil
	}
	when, err := time.Parse(http.TimeFormat, text)
	if err == nil {
		k.lastDate.Store(&parsedDate{text: text, when: when})
	}
	return when, err
}

func newKeyring(primary, readOnly string) (keyring, error) {
	var k keyring
	var err error
	if k.primary, err = masterkey.Parse(primary); err != nil {
		return k, fault.New(fault.BadRequest, "the account key must be non-empty base64")
	}
	if readOnly != "" {
		if k.readOnly, err = masterkey.Parse(readOnly); err != nil {
			return k, fault.New(fault.BadRequest, "the read-only key must be base64")
		}
	}
	k.lastDate = new(atomic.Pointer[parsedDate])
	return k, nil
}

// authenticate checks the request's master-key signature over (verb, resource type, resource
// link, date). A read-only key is accepted only for requests that change nothing.
func (k keyring) authenticate(r *http.Request, res resource, now time.Time) error {
	raw := r.Header.Get("Authorization")
	if raw == "" {
		return unauthorized("The request has no Authorization header; sign it with the account key")
	}
	// The token is URL-encoded by the SDKs. Everything below works in stack buffers: this runs
	// on every request, and the strings would otherwise be garbage a moment later.
	var tokBuf [256]byte
	tok := appendUnescaped(tokBuf[:0], raw)
	var typ, sig []byte
	for len(tok) > 0 {
		var part []byte
		part, tok, _ = bytes.Cut(tok, []byte("&"))
		name, value, _ := bytes.Cut(part, []byte("="))
		switch string(name) {
		case "type":
			typ = value
		case "sig":
			sig = value
		}
	}
	if string(typ) == "resource" {
		return k.authenticateResource(r, res, now, sig)
	}
	if string(typ) != "master" {
		return unauthorized("Authorization type %q is not supported; use master key signatures (type=master)", string(typ))
	}
	var givenBuf [64]byte
	if base64.StdEncoding.DecodedLen(len(sig)) > len(givenBuf) {
		return unauthorized("The authorization signature is too long to be an HMAC-SHA256")
	}
	n, err := base64.StdEncoding.Decode(givenBuf[:], sig)
	if err != nil || n == 0 {
		return unauthorized("The authorization signature is not valid base64")
	}
	given := givenBuf[:n]
	date := r.Header.Get("X-Ms-Date")
	if date == "" {
		date = r.Header.Get("Date")
	}
	when, err := k.parseDate(date)
	if err != nil {
		return unauthorized("The request has no valid x-ms-date header (RFC 1123, e.g. %q)", now.UTC().Format(http.TimeFormat))
	}
	if d := now.Sub(when); d > maxClockSkew || d < -maxClockSkew {
		return fault.New(fault.Forbidden, "The request's x-ms-date is more than 15 minutes from the server's time; check the client's clock")
	}
	// The expected signature is copied out of the pooled HMAC state, so this stays on the stack.
	var wantBuf [masterkey.Size]byte
	if hmac.Equal(given, k.primary.AppendSignature(wantBuf[:0], r.Method, res.typ, res.link, date)) {
		return nil
	}
	if k.readOnly != nil && hmac.Equal(given, k.readOnly.AppendSignature(wantBuf[:0], r.Method, res.typ, res.link, date)) {
		if isReadOnlyRequest(r) {
			return nil
		}
		// 401 as Cosmos answers it: the key does not authorize the request.
		return unauthorized("The read-only key cannot be used for requests that write")
	}
	// Never say what the signature should have been: that would let anyone forge one.
	return unauthorized("The input authorization token can't serve the request. The signature does not match; check the key and that the request was signed for verb %q, resource type %q and link %q",
		strings.ToLower(r.Method), res.typ, res.link)
}

// appendUnescaped appends s with %XX escapes decoded and '+' read as a space, as
// url.QueryUnescape does; a malformed escape is kept as it is, and the signature check then
// fails.
func appendUnescaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			dst = append(dst, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		case c == '+':
			dst = append(dst, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

func isReadOnlyRequest(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return true
	case http.MethodPost:
		return isQuery(r)
	}
	return false
}

func unauthorized(format string, args ...any) error {
	return fault.New(fault.Unauthorized, format, args...)
}
