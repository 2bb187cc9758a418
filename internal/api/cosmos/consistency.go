package cosmos

import (
	"strings"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
)

// Consistency. A request may ask for its account's default level or a weaker one, never a
// stronger one; what each level lets a replica serve is the engine's (engine/consistency.go).
// At Session, the request's session tokens (sessiontoken.go) say what it must see; the engine
// reads a child's token from its ancestors' too.

// ConsistencyRank is the strength of a level (0 strongest), or -1 when level is not one.
func ConsistencyRank(level string) int { return int(engine.LevelOf(level)) - 1 }

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
