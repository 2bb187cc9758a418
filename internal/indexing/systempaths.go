package indexing

import (
	"encoding/json"
)

// The paths every policy indexes. On the service, "the system properties id and _ts are always
// indexed when the cosmos account indexing mode is consistent": whatever the included and
// excluded paths say, a filter or an ORDER BY on c.id or c._ts reads the index (the usual
// incremental sync, WHERE c._ts > @t, among them). Only indexingMode none indexes nothing.
//
// Builds before this one indexed _ts never and id only when the rules included it. The
// entries they wrote follow the Legacy form of their policy; a partition's index record lists
// it among the policies its items may follow while the rebuild that adds the system paths'
// entries runs (partition/reindex.go), so that queries trust the index for them only once every
// item has them. The legacy form exists only in those records: its JSON carries a member the
// service's policies do not have, read by ParseRecord alone, so a client cannot ask for it.

// legacyMember marks a policy's JSON in an index record as Legacy.
const legacyMember = "partitaLegacySystemPaths"

// AlwaysIndexed reports whether the term path is one every policy of this build indexes, the
// rules notwithstanding (unless its indexing mode is none).
func AlwaysIndexed(path string) bool { return path == "/id" || path == "/_ts" }

// Legacy is p as a build before the system paths applied it: _ts not indexed, id only by the
// rules. Its JSON (for index records) is p's with the legacy member.
func (p *Policy) Legacy() (*Policy, error) {
	if p != nil && p.legacy {
		return p, nil
	}
	doc := map[string]json.RawMessage{}
	if raw := p.JSON(); len(raw) > 0 {
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, err
		}
	}
	doc[legacyMember] = json.RawMessage("true")
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return ParseRecord(raw)
}

// IsLegacy reports whether p is a Legacy policy.
func (p *Policy) IsLegacy() bool { return p != nil && p.legacy }

// ParseRecord reads a policy as a partition's index record keeps it: Parse, and the legacy
// marker that Legacy writes.
func ParseRecord(raw []byte) (*Policy, error) {
	return parse(raw, true)
}
