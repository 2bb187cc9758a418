package cosmos

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"strconv"
	"time"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/masterkey"
)

// A resource token is what a permission's _token carries: the Authorization header value of a
// client that may use that permission and nothing else, in Cosmos's shape
//
//	type=resource&ver=1.0&sig=<claims>.<mac>
//
// claims is base64url (no padding) of
//
//	version(1)=1 | permission rid(16) | container rid(8) | mode(1: 'A' All, 'R' Read) |
//	issued(8) | expiry(8) (Unix seconds, big-endian) | partition key (JSON array; empty: none)
//
// and mac is base64url of HMAC-SHA256 over those bytes, under a key derived from the account's
// primary key (masterkey.Derive), so that no request signature can pass for a token nor a
// token for a signature. Both parts use only URL-safe characters: a client may send the
// token URL-encoded (the JavaScript SDK does) or as it is.
//
// The server keeps no token: it checks the mac, the expiry, and then that the permission
// still exists and grants exactly what the token says (engine.Grant). Deleting a permission,
// its user or its database revokes every token it issued; replacing it revokes them unless
// it grants the same as before. Changing the primary key revokes them all.

// Token lifetimes, as Cosmos allows them with x-ms-documentdb-expiry-seconds on a permission's
// create, read, replace or upsert: one hour unless asked, from 10 seconds to 5 hours.
const (
	defaultTokenLifetime = time.Hour
	minTokenLifetime     = 10 * time.Second
	maxTokenLifetime     = 5 * time.Hour
)

const (
	tokenVersion  = 1
	tokenFixedLen = 1 + 16 + 8 + 1 + 8 + 8
	// maxTokenLen bounds what is decoded of a sig: the fixed claims, a partition key of at
	// most a few kilobytes, and the mac.
	maxTokenLen = 16 << 10
)

// resourceTokens issues and verifies resource tokens.
type resourceTokens struct {
	key    []byte // derived from the primary key; never leaves this type
	grants *engine.Engine
}

func newResourceTokens(primary *masterkey.Key, eng *engine.Engine) *resourceTokens {
	return &resourceTokens{key: primary.Derive("resource token v1"), grants: eng}
}

// tokenClaims are what a token vouches for.
type tokenClaims struct {
	grant          engine.Grant
	issued, expiry time.Time
}

func (t *resourceTokens) mac(claims []byte) []byte {
	m := hmac.New(sha256.New, t.key)
	m.Write(claims)
	return m.Sum(nil)
}

// issue makes the token of grant g, valid from now for lifetime.
func (t *resourceTokens) issue(g engine.Grant, now time.Time, lifetime time.Duration) string {
	claims := make([]byte, tokenFixedLen, tokenFixedLen+32)
	claims[0] = tokenVersion
	copy(claims[1:17], g.Permission[:])
	copy(claims[17:25], g.Container[:])
	claims[25] = 'R'
	if g.Mode == engine.ModeAll {
		claims[25] = 'A'
	}
	binary.BigEndian.PutUint64(claims[26:34], uint64(now.Unix()))
	binary.BigEndian.PutUint64(claims[34:42], uint64(now.Add(lifetime).Unix()))
	if len(g.PartitionKey) > 0 {
		claims = append(claims, partitionKeyJSON(g.PartitionKey)...)
	}
	enc := base64.RawURLEncoding
	return "type=resource&ver=1.0&sig=" + enc.EncodeToString(claims) + "." + enc.EncodeToString(t.mac(claims))
}

// verify checks a token's sig (what follows "sig=") and reads its claims. Whatever is wrong
// with it, the answer is the same: the token was not issued by this server with this key.
func (t *resourceTokens) verify(sig []byte) (tokenClaims, error) {
	var c tokenClaims
	bad := unauthorized("The resource token is not valid: it was not issued by this account with its current key. Read the permission again for a new token")
	if len(sig) > maxTokenLen {
		return c, bad
	}
	dot := -1
	for i, b := range sig {
		if b == '.' {
			dot = i
		}
	}
	if dot < 0 {
		return c, bad
	}
	enc := base64.RawURLEncoding
	claims := make([]byte, enc.DecodedLen(dot))
	n, err := enc.Decode(claims, sig[:dot])
	if err != nil {
		return c, bad
	}
	claims = claims[:n]
	var given [sha256.Size + 3]byte
	if enc.DecodedLen(len(sig)-dot-1) > len(given) {
		return c, bad
	}
	m, err := enc.Decode(given[:], sig[dot+1:])
	if err != nil || !hmac.Equal(given[:m], t.mac(claims)) {
		return c, bad
	}
	// The mac holds: the claims are ours, so they are well formed unless the format changed.
	if len(claims) < tokenFixedLen || claims[0] != tokenVersion {
		return c, bad
	}
	copy(c.grant.Permission[:], claims[1:17])
	copy(c.grant.Container[:], claims[17:25])
	c.grant.Mode = engine.ModeRead
	if claims[25] == 'A' {
		c.grant.Mode = engine.ModeAll
	}
	c.issued = time.Unix(int64(binary.BigEndian.Uint64(claims[26:34])), 0)
	c.expiry = time.Unix(int64(binary.BigEndian.Uint64(claims[34:42])), 0)
	if len(claims) > tokenFixedLen {
		if c.grant.PartitionKey, err = parsePartitionKey(string(claims[tokenFixedLen:])); err != nil {
			return c, bad
		}
	}
	return c, nil
}

// authenticateResource checks a request that carries a resource token (sig is what follows
// "sig=" in its Authorization header): a token this server issued, not expired, whose
// permission still grants what it did, for a request within what it grants (allowed).
func (k keyring) authenticateResource(r *http.Request, res resource, now time.Time, sig []byte) error {
	if k.tokens == nil { // a keyring made without an engine, in tests
		return unauthorized("This server does not accept resource tokens")
	}
	c, err := k.tokens.verify(sig)
	if err != nil {
		return err
	}
	if now.Before(c.issued.Add(-maxClockSkew)) || !now.Before(c.expiry) {
		return fault.New(fault.Forbidden, "The authorization token is not valid at the current time. Please create another token and retry (token start time: %s, token expiry time: %s, current server time: %s)",
			c.issued.UTC().Format(http.TimeFormat), c.expiry.UTC().Format(http.TimeFormat), now.UTC().Format(http.TimeFormat))
	}
	g, err := k.tokens.grants.Grant(c.grant.Permission)
	if err != nil {
		return unauthorized("The resource token is no longer valid: its permission was deleted, with its user or database")
	}
	if g.Container != c.grant.Container || g.Mode != c.grant.Mode || len(g.PartitionKey) != len(c.grant.PartitionKey) || !g.PartitionKey.HasPrefix(c.grant.PartitionKey) {
		return unauthorized("The resource token is no longer valid: its permission was replaced and grants something else now. Read the permission again for a new token")
	}
	return k.tokens.allowed(r, res, g)
}

// insufficient is Cosmos's answer to a valid token used beyond what it grants.
func insufficient(why string) error {
	return fault.New(fault.Forbidden, "Insufficient permissions provided in the authorization header for the corresponding request. Please retry with another authorization header. (%s)", why)
}

// allowed decides whether a request is within what g grants. A token grants its container:
// reading the container and its partition key ranges; reading, querying and (with All) writing
// its items, in batches too; reading its scripts and (with All) running its stored procedures.
// It never grants changes to the catalog (containers, scripts, users, offers), nor anything
// outside its container, except reading the account (GET /), which the SDKs do first with
// whatever token they hold. A token for one partition key also needs every request on items
// to name a partition key within its own, so it never reaches other logical partitions.
func (t *resourceTokens) allowed(r *http.Request, res resource, g engine.Grant) error {
	segs := res.segs
	if len(segs) == 0 {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return nil
		}
		return insufficient("a resource token may only read the account")
	}
	if len(segs) < 4 || segs[0] != "dbs" || segs[2] != "colls" {
		return insufficient("a resource token grants one container's items and scripts, not " + res.shape())
	}
	ct, err := t.grants.Container(segs[1], segs[3])
	if err != nil || !ct.Granted(g) {
		return insufficient("the token grants another container")
	}
	read := isReadOnlyRequest(r)
	write := func() error {
		if g.Mode != engine.ModeAll {
			return insufficient("the token's permission is Read; this request writes")
		}
		return nil
	}
	rest := segs[4:]
	switch {
	case len(rest) == 0, len(rest) == 1 && (rest[0] == "pkranges" || rest[0] == "partitions"):
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return nil
		}
		return insufficient("a resource token may read a container, not change it")
	case rest[0] == "docs":
		if !read {
			if err := write(); err != nil {
				return err
			}
		}
		return checkTokenKey(r, g)
	case len(rest) == 2 && rest[0] == "operations" && rest[1] == "partitionkeydelete":
		if err := write(); err != nil {
			return err
		}
		return checkTokenKey(r, g)
	case rest[0] == "sprocs" || rest[0] == "triggers" || rest[0] == "udfs":
		if read {
			return nil
		}
		if len(rest) == 2 && rest[0] == "sprocs" && r.Method == http.MethodPost {
			if err := write(); err != nil {
				return err
			}
			return checkTokenKey(r, g)
		}
		return insufficient("a resource token may read and run a container's scripts, not change them")
	}
	return insufficient("a resource token grants one container's items and scripts, not " + res.shape())
}

// checkTokenKey keeps a request on items within the token's partition key, when it has one:
// the request must name a partition key under it, which scopes every item operation, query,
// feed and stored procedure to it; a bulk request, whose operations each name their own,
// must be a transactional batch, which runs under the header's key. The query plan request
// names none and reads nothing: it is let through.
func checkTokenKey(r *http.Request, g engine.Grant) error {
	if len(g.PartitionKey) == 0 || isTrue(r.Header.Get("X-Ms-Cosmos-Is-Query-Plan-Request")) {
		return nil
	}
	vals := r.Header.Values("X-Ms-Documentdb-Partitionkey")
	if len(vals) == 0 {
		return insufficient("the token is for partition key " + string(partitionKeyJSON(g.PartitionKey)) + ", and the request names none (a cross-partition query or feed)")
	}
	if len(vals) > 1 {
		return fault.New(fault.BadRequest, "The request has %d x-ms-documentdb-partitionkey headers; send one", len(vals))
	}
	key, err := parsePartitionKey(vals[0])
	if err != nil {
		return err
	}
	if !key.HasPrefix(g.PartitionKey) {
		return insufficient("the token is for partition key " + string(partitionKeyJSON(g.PartitionKey)) + ", not " + vals[0])
	}
	if r.Header.Get("X-Ms-Cosmos-Is-Batch-Request") != "" && !isTrue(r.Header.Get("X-Ms-Cosmos-Batch-Atomic")) {
		return insufficient("a token for one partition key cannot send bulk requests, whose operations name their own keys; send a transactional batch")
	}
	return nil
}

// tokenLifetime reads x-ms-documentdb-expiry-seconds: how long the tokens a permission request
// answers with are valid.
func tokenLifetime(r *http.Request) (time.Duration, error) {
	h := r.Header.Get("X-Ms-Documentdb-Expiry-Seconds")
	if h == "" {
		return defaultTokenLifetime, nil
	}
	n, err := strconv.Atoi(h)
	d := time.Duration(n) * time.Second
	if err != nil || d < minTokenLifetime || d > maxTokenLifetime {
		return 0, fault.New(fault.BadRequest, "x-ms-documentdb-expiry-seconds must be a whole number of seconds from %d to %d, not %q",
			int(minTokenLifetime.Seconds()), int(maxTokenLifetime.Seconds()), h)
	}
	return d, nil
}
