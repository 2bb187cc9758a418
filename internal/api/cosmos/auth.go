package cosmos

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/partita-db/partita/internal/status"
)

// maxClockSkew is how far x-ms-date may be from the server's clock, as Cosmos allows.
const maxClockSkew = 15 * time.Minute

// keyring holds the decoded account keys.
type keyring struct {
	primary  []byte
	readOnly []byte // nil when there is no read-only key
	// macs reuse HMAC states per key: every request computes one or two signatures.
	primaryMACs, readOnlyMACs *sync.Pool
}

func macPool(key []byte) *sync.Pool {
	return &sync.Pool{New: func() any { return hmac.New(sha256.New, key) }}
}

func newKeyring(primary, readOnly string) (keyring, error) {
	var k keyring
	var err error
	if k.primary, err = base64.StdEncoding.DecodeString(primary); err != nil || len(k.primary) == 0 {
		return k, status.BadRequest("the account key must be non-empty base64")
	}
	if readOnly != "" {
		if k.readOnly, err = base64.StdEncoding.DecodeString(readOnly); err != nil {
			return k, status.BadRequest("the read-only key must be base64")
		}
		k.readOnlyMACs = macPool(k.readOnly)
	}
	k.primaryMACs = macPool(k.primary)
	return k, nil
}

// authenticate checks the request's master-key signature over (verb, resource type, resource
// link, date). A read-only key is accepted only for requests that change nothing.
func (k keyring) authenticate(r *http.Request, res resource, now time.Time) error {
	raw := r.Header.Get("Authorization")
	if raw == "" {
		return unauthorized("The request has no Authorization header; sign it with the account key")
	}
	if dec, err := url.QueryUnescape(raw); err == nil {
		raw = dec
	}
	var typ, sig string
	for _, part := range strings.Split(raw, "&") {
		name, value, _ := strings.Cut(part, "=")
		switch name {
		case "type":
			typ = value
		case "sig":
			sig = value
		}
	}
	if typ != "master" {
		return unauthorized("Authorization type %q is not supported; use master key signatures (type=master)", typ)
	}
	given, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || len(given) == 0 {
		return unauthorized("The authorization signature is not valid base64")
	}
	date := r.Header.Get("x-ms-date")
	if date == "" {
		date = r.Header.Get("Date")
	}
	when, err := http.ParseTime(date)
	if err != nil {
		return unauthorized("The request has no valid x-ms-date header (RFC 1123, e.g. %q)", now.UTC().Format(http.TimeFormat))
	}
	if d := now.Sub(when); d > maxClockSkew || d < -maxClockSkew {
		return &status.Error{Status: http.StatusForbidden, Message: "The request's x-ms-date is more than 15 minutes from the server's time; check the client's clock"}
	}
	payload := strings.ToLower(r.Method) + "\n" + strings.ToLower(res.typ) + "\n" + res.link + "\n" + strings.ToLower(date) + "\n\n"
	if hmac.Equal(given, sign(k.primaryMACs, payload)) {
		return nil
	}
	if k.readOnly != nil && hmac.Equal(given, sign(k.readOnlyMACs, payload)) {
		if isReadOnlyRequest(r) {
			return nil
		}
		return &status.Error{Status: http.StatusForbidden, Message: "The read-only key cannot be used for requests that write"}
	}
	// Never say what the signature should have been: that would let anyone forge one.
	return unauthorized("The input authorization token can't serve the request. The signature does not match; check the key and that the request was signed for verb %q, resource type %q and link %q",
		strings.ToLower(r.Method), res.typ, res.link)
}

func sign(macs *sync.Pool, payload string) []byte {
	m := macs.Get().(hash.Hash)
	defer macs.Put(m)
	m.Reset()
	m.Write([]byte(payload))
	return m.Sum(nil)
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
	e := status.BadRequest(format, args...)
	e.Status = http.StatusUnauthorized
	return e
}
