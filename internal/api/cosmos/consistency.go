package cosmos

import (
	"strconv"
	"strings"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
)

// Consistency. A request may ask for its account's default level or a weaker one, never a
// stronger one; what each level lets a replica serve is the engine's (engine/consistency.go).
// Session tokens are "<range id>:<version>#<LSN>", one per partition key range a response
// read or wrote. The version is -1, as in the service's tokens of a single-region account
// (the LSN carries the guarantee: a replica-set change does not renumber it); the LSN is the
// partition's, which a split's children continue, so a
// token handed out before a split holds after it, and the engine reads a child's token from
// its ancestors' too.

// ConsistencyRank is the strength of a level (0 strongest), or -1 when level is not one.
func ConsistencyRank(level string) int { return int(engine.LevelOf(level)) - 1 }

// anyRange keys an old-form session token (a bare LSN, which names no range) in
// engine.ReadConsistency.Session: the engine reads it as every range's.
const anyRange = engine.AnyRange

// checkConsistency refuses a request that asks for an unknown consistency level, one stronger
// than the account's default, or that carries a malformed session token.
func (c *call) checkConsistency() error {
	if level := c.r.Header.Get("X-Ms-Consistency-Level"); level != "" {
		rank := ConsistencyRank(level)
		if rank < 0 {
			return fault.New(fault.BadRequest, "x-ms-consistency-level must be one of %s, not %q", strings.Join(engine.ConsistencyLevels, ", "), level)
		}
		if def := ConsistencyRank(c.h.consistency); rank < def {
			return fault.New(fault.BadRequest, "The requested consistency level %s is stronger than the account's default, %s; "+
				"a request may only ask for the default or a weaker level", engine.ConsistencyLevels[rank], engine.ConsistencyLevels[def])
		}
	}
	if tok := c.r.Header.Get("X-Ms-Session-Token"); tok != "" && !validSessionTokens(tok) {
		return fault.New(fault.BadRequest, "The session token %q is malformed; pass back the x-ms-session-token a response returned", tok)
	}
	return nil
}

// readConsistency is how the request's read may be served: at the level it asks for (checked
// by checkConsistency), else the account's, with its session tokens at Session.
func (c *call) readConsistency() engine.ReadConsistency {
	rc := engine.ReadConsistency{Level: c.h.level}
	if h := c.r.Header.Get("X-Ms-Consistency-Level"); h != "" {
		rc.Level = engine.LevelOf(h)
	}
	h := c.r.Header.Get("X-Ms-Session-Token")
	if rc.Level != engine.Session || h == "" {
		return rc
	}
	for _, t := range strings.Split(h, ",") {
		id, lsn, ok := parseSessionToken(strings.Trim(t, " \t"))
		if !ok {
			continue
		}
		if rc.Session == nil {
			rc.Session = map[uint32]uint64{}
		}
		rc.Session[id] = max(rc.Session[id], lsn)
	}
	return rc
}

// parseSessionToken reads one session token (validSessionTokens checked its form): its range
// (anyRange for a bare LSN) and its global LSN.
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
	_, rest, _ = strings.Cut(rest, "#")    // the version
	global, _, _ := strings.Cut(rest, "#") // region entries follow
	n, err := strconv.ParseUint(global, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return uint32(id), n, true
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
