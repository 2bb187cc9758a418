package cosmos

import (
	"strconv"
	"strings"

	"github.com/partita-db/partita/internal/engine"
)

// Session tokens: the one home of their forms, what Partita answers and what it reads back.
//
// A token names a partition key range and the LSN a client has seen of it. The service's
// form depends on the request's API version (x-ms-version), as the SDKs that build tokens
// for the service's replicas show (the .NET SDK's SessionTokenHelper.Parse and its store
// client: the vector form only for versions after 2018-06-18):
//
//	up to 2018-06-18   simple   "<range>:<LSN>"
//	after              vector   "<range>:<version>#<LSN>", optionally followed by
//	                            "#<region>=<LSN>" entries (multi-region accounts)
//
// Clients of the older versions (the DocumentDB-era Node SDK 1.x, which sends 2017-11-15,
// and the Go client github.com/a8m/documentdb, 2017-02-22) parse only the simple form: the
// Node one throws on "0:-1#5" inside its response handler. The version Partita writes is -1,
// as in the service's tokens of a single-region account (the LSN carries the guarantee: a
// replica-set change does not renumber it). The LSN is the partition's, which a split's
// children continue, so a token handed out before a split holds after it.
//
// The service answered versions before 2015-12-16 (collections of one partition) with a bare
// "<LSN>". Partita answers them with the simple form: a bare LSN names no range, and sent
// back it would hold every partition of a container to the LSN of one. Coming back, every
// form is read whatever the version: the vector and simple forms, and a bare LSN (anyRange).
// Several tokens, one per range a response read or wrote, are joined with commas.

// tokenForm is the form of the session tokens a request is answered with.
type tokenForm uint8

const (
	vectorToken tokenForm = iota // "<range>:-1#<LSN>"
	simpleToken                  // "<range>:<LSN>"
)

// lastSimpleTokenVersion is the last API version the service answers with simple tokens.
const lastSimpleTokenVersion = "2018-06-18"

// tokenFormOf is the form of the tokens for API version v (x-ms-version; "" for none, which
// gets the latest behaviour). checkEnvelope admits only the versions of apiVersions, all
// written YYYY-MM-DD, so comparing them as strings compares the dates.
func tokenFormOf(v string) tokenForm {
	if v != "" && v <= lastSimpleTokenVersion {
		return simpleToken
	}
	return vectorToken
}

// tokenForm is the form of the tokens the request is answered with.
func (c *call) tokenForm() tokenForm {
	if v, ok := c.r.Header["X-Ms-Version"]; ok && len(v) > 0 {
		return tokenFormOf(v[0])
	}
	return vectorToken
}

// formatSessionToken is the token of partition at lsn in form f.
func formatSessionToken(f tokenForm, partition uint32, lsn uint64) string {
	var buf [48]byte
	return string(appendSessionToken(buf[:0], f, partition, lsn))
}

func appendSessionToken(dst []byte, f tokenForm, partition uint32, lsn uint64) []byte {
	dst = strconv.AppendUint(dst, uint64(partition), 10)
	if f == vectorToken {
		dst = append(dst, ":-1#"...)
	} else {
		dst = append(dst, ':')
	}
	return strconv.AppendUint(dst, lsn, 10)
}

// sessionToken is the token of partition at lsn, in the form the request's API version reads.
func (c *call) sessionToken(partition uint32, lsn uint64) string {
	return formatSessionToken(c.tokenForm(), partition, lsn)
}

// sessionTokens joins the tokens of the partitions a feed or query page read.
func (c *call) sessionTokens(partitions map[uint32]uint64) string {
	f := c.tokenForm()
	var buf []byte
	for id, lsn := range partitions {
		if len(buf) > 0 {
			buf = append(buf, ',')
		}
		buf = appendSessionToken(buf, f, id, lsn)
	}
	return string(buf)
}

// anyRange keys a bare-LSN token, which names no range, in engine.ReadConsistency.Session:
// the engine reads it as every range's.
const anyRange = engine.AnyRange

// parseSessionToken reads one session token of any form (validSessionTokens checked it): its
// range (anyRange for a bare LSN) and its global LSN.
func parseSessionToken(t string) (rangeID uint32, lsn uint64, ok bool) {
	if n, err := strconv.ParseUint(t, 10, 64); err == nil {
		return anyRange, n, true
	}
	r, rest, ok := strings.Cut(t, ":")
	if !ok {
		return 0, 0, false
	}
	id, err := strconv.ParseUint(r, 10, 32)
	if err != nil {
		return 0, 0, false
	}
	global := rest // the simple form: the LSN alone
	if _, after, vector := strings.Cut(rest, "#"); vector {
		global, _, _ = strings.Cut(after, "#") // after the version; region entries follow
	}
	n, err := strconv.ParseUint(global, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return uint32(id), n, true
}

// validSessionTokens reports whether h is a comma-separated list of session tokens of the forms
// the service hands out and SDKs merge: vector ("<range id>:<version>#<LSN>", optionally
// followed by "#<region>=<LSN>" entries), simple ("<range id>:<LSN>") or a bare "<LSN>".
func validSessionTokens(h string) bool {
	for _, t := range strings.Split(h, ",") {
		t = strings.Trim(t, " \t") // HTTP whitespace only
		if digits(t) {
			continue
		}
		rangeID, rest, ok := strings.Cut(t, ":")
		if !ok || !digits(rangeID) {
			return false
		}
		version, rest, vector := strings.Cut(rest, "#")
		if !vector {
			if !digits(version) { // the simple form's LSN
				return false
			}
			continue
		}
		// A version may be negative (-1 before any split) but carries no plus sign.
		if !digits(strings.TrimPrefix(version, "-")) {
			return false
		}
		for i, f := range strings.Split(rest, "#") {
			if i > 0 {
				region, lsn, ok := strings.Cut(f, "=")
				if !ok || !digits(region) {
					return false
				}
				f = lsn
			}
			if !digits(f) {
				return false
			}
		}
	}
	return true
}

// digits reports whether s is a decimal number without a sign.
func digits(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}
