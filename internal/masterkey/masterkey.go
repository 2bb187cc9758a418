package masterkey

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"hash"
	"net/url"
	"sync"
)

// Size is the length of a raw signature, for callers' stack buffers.
const Size = sha256.Size

// Key is a decoded account key. It is safe for concurrent use.
type Key struct {
	secret  []byte
	signers sync.Pool // *signer
}

// signer is an HMAC state with buffers for the payload it signs and the signature. Buffers on
// the stack would escape to the heap as soon as they reach the hash.Hash interface, and cost an
// allocation per signature; pooled with the state, they cost nothing.
type signer struct {
	mac     hash.Hash
	payload []byte
	sum     []byte
}

// Parse decodes a base64 account key. The error never repeats the key.
func Parse(base64Key string) (*Key, error) {
	secret, err := base64.StdEncoding.DecodeString(base64Key)
	if err != nil {
		return nil, errors.New("the key is not valid base64")
	}
	if len(secret) == 0 {
		return nil, errors.New("the key is empty")
	}
	k := &Key{secret: secret}
	k.signers.New = func() any {
		return &signer{mac: hmac.New(sha256.New, k.secret), payload: make([]byte, 0, 256), sum: make([]byte, 0, Size)}
	}
	return k, nil
}

// AppendSignature appends the raw HMAC of the request's canonical payload to dst. It allocates
// nothing once the pool is warm and dst has room for Size bytes.
func (k *Key) AppendSignature(dst []byte, verb, resourceType, resourceLink, date string) []byte {
	s := k.signers.Get().(*signer)
	p := appendLower(s.payload[:0], verb)
	p = append(p, '\n')
	p = appendLower(p, resourceType)
	p = append(p, '\n')
	p = append(p, resourceLink...)
	p = append(p, '\n')
	p = appendLower(p, date)
	p = append(p, "\n\n"...)
	s.payload = p // keeps what it grew to for the next signature
	s.mac.Reset()
	s.mac.Write(p)
	s.sum = s.mac.Sum(s.sum[:0])
	dst = append(dst, s.sum...)
	k.signers.Put(s)
	return dst
}

// Derive returns a key for another use of the account key, named by purpose: the HMAC-SHA256,
// under the account key, of "partita derived key\n" + purpose. That text has fewer lines than
// any request payload (five newline-terminated fields), so a derived key is never a request
// signature, and what is signed with it can never pass for one.
func (k *Key) Derive(purpose string) []byte {
	mac := hmac.New(sha256.New, k.secret)
	mac.Write([]byte("partita derived key\n" + purpose))
	return mac.Sum(nil)
}

// Authorization returns the URL-query-escaped Authorization header value a client sends.
func (k *Key) Authorization(verb, resourceType, resourceLink, date string) string {
	var sum [Size]byte
	sig := base64.StdEncoding.EncodeToString(k.AppendSignature(sum[:0], verb, resourceType, resourceLink, date))
	// The prefix is url.QueryEscape("type=master&ver=1.0&sig="), spelled out.
	return "type%3Dmaster%26ver%3D1.0%26sig%3D" + url.QueryEscape(sig)
}

// appendLower appends s in ASCII lower case.
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}
