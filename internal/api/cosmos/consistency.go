package cosmos

import (
	"strconv"
	"strings"

	"github.com/partita-db/partita/internal/fault"
)

// Consistency levels, strongest first, as Cosmos names them. A request may ask for its
// account's default level or a weaker one, never a stronger one.
//
// On one node every level reads the same thing: a write is acknowledged once it is committed
// and visible, so every later read, query and change feed page, on any range, sees it (strong
// consistency in effect). Session tokens are numbered per range by LSN; the children of a split
// continue their parent's LSNs, so a token handed back before a split is also satisfied after it.
var consistencyLevels = []string{"Strong", "BoundedStaleness", "Session", "ConsistentPrefix", "Eventual"}

// ConsistencyRank is the strength of a level (0 strongest), or -1 when level is not one.
func ConsistencyRank(level string) int {
	for i, l := range consistencyLevels {
		if strings.EqualFold(l, level) {
			return i
		}
	}
	return -1
}

// checkConsistency refuses a request that asks for an unknown consistency level, one stronger
// than the account's default, or that carries a malformed session token.
func (c *call) checkConsistency() error {
	if level := c.r.Header.Get("X-Ms-Consistency-Level"); level != "" {
		rank := ConsistencyRank(level)
		if rank < 0 {
			return fault.New(fault.BadRequest, "x-ms-consistency-level must be one of %s, not %q", strings.Join(consistencyLevels, ", "), level)
		}
		if def := ConsistencyRank(c.h.consistency); rank < def {
			return fault.New(fault.BadRequest, "The requested consistency level %s is stronger than the account's default, %s; "+
				"a request may only ask for the default or a weaker level", consistencyLevels[rank], consistencyLevels[def])
		}
	}
	if tok := c.r.Header.Get("X-Ms-Session-Token"); tok != "" && !validSessionTokens(tok) {
		return fault.New(fault.BadRequest, "The session token %q is malformed; pass back the x-ms-session-token a response returned", tok)
	}
	return nil
}

// validSessionTokens reports whether h is a comma-separated list of session tokens of the forms
// Cosmos hands out and SDKs merge: "<range id>:<version>#<LSN>", optionally followed by
// "#<region>=<LSN>" entries, or a bare "<LSN>" (the oldest form).
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
		version, rest, ok := strings.Cut(rest, "#")
		// A version may be negative (-1 before any split) but carries no plus sign.
		if !ok || !digits(strings.TrimPrefix(version, "-")) {
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
