package indexing

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// Policy is a parsed indexing policy. The zero value, and a nil *Policy, index every path.
type Policy struct {
	// none is set by indexingMode "none": nothing is indexed.
	none bool
	// manual is set by automatic false: an item is indexed (under the rules) only when its
	// write asks for it with the Include directive (see Manual).
	manual     bool
	rules      []rule
	composites []Composite
	spatial    []Spatial
	vectors    []VectorIndex   // search.go
	fullText   []FullTextIndex // search.go
	// legacy marks the policy as a build before system paths applied it (systempaths.go):
	// _ts never indexed, id only by the rules. Only the index records of partitions hold such
	// policies, for the entries those builds wrote.
	legacy bool
	// raw is the JSON the policy was parsed from; nil for the default.
	raw json.RawMessage
}

// JSON is the policy as it was given ("{}" for the default), for records that keep it.
func (p *Policy) JSON() json.RawMessage {
	if p == nil || len(p.raw) == 0 {
		return json.RawMessage("{}")
	}
	return p.raw
}

type rule struct {
	segs    []string // in term-path form (escaped as value.Terms escapes property names)
	exact   bool     // "/?": the value at the path only; otherwise "/*", the whole subtree
	include bool
}

// Parse reads a policy as Cosmos's indexingPolicy JSON; nil or empty gives the default.
func Parse(raw []byte) (*Policy, error) {
	return parse(raw, false)
}

// parse is Parse; record says that raw comes from a partition's index record, where a policy
// may be marked legacy (ParseRecord).
func parse(raw []byte, record bool) (*Policy, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return &Policy{}, nil
	}
	var doc struct {
		Mode      *string `json:"indexingMode"`
		Automatic *bool   `json:"automatic"`
		Included  []struct {
			Path string `json:"path"`
		} `json:"includedPaths"`
		Excluded []struct {
			Path string `json:"path"`
		} `json:"excludedPaths"`
		Composites [][]compositePathJSON `json:"compositeIndexes"`
		Spatial    []spatialJSON         `json:"spatialIndexes"`
		Vectors    []vectorIndexJSON     `json:"vectorIndexes"`
		FullText   []FullTextIndex       `json:"fullTextIndexes"`
		Legacy     bool                  `json:"partitaLegacySystemPaths"` // systempaths.go
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fault.New(fault.BadRequest, "The indexing policy is not valid: %v", err)
	}
	p := &Policy{raw: append(json.RawMessage(nil), raw...), legacy: record && doc.Legacy}
	if doc.Mode != nil {
		switch strings.ToLower(*doc.Mode) {
		case "consistent", "lazy":
		case "none":
			p.none = true
		default:
			return nil, fault.New(fault.BadRequest, "The indexing mode %q is not valid; use consistent or none", *doc.Mode)
		}
	}
	if doc.Automatic != nil && !*doc.Automatic {
		p.manual = true
	}
	if p.none && doc.Automatic != nil && *doc.Automatic {
		return nil, fault.New(fault.BadRequest, "Indexing mode value cannot be 'none' when automatic indexing is specified as 'true'.")
	}
	for _, in := range doc.Included {
		r, err := parseRule(in.Path, true)
		if err != nil {
			return nil, err
		}
		p.rules = append(p.rules, r)
	}
	for _, ex := range doc.Excluded {
		r, err := parseRule(ex.Path, false)
		if err != nil {
			return nil, err
		}
		p.rules = append(p.rules, r)
	}
	var err error
	if p.composites, err = parseComposites(doc.Composites); err != nil {
		return nil, err
	}
	if p.spatial, err = parseSpatial(doc.Spatial); err != nil {
		return nil, err
	}
	if p.vectors, err = parseVectorIndexes(doc.Vectors); err != nil {
		return nil, err
	}
	if p.fullText, err = parseFullTextIndexes(doc.FullText); err != nil {
		return nil, err
	}
	return p, nil
}

func parseRule(path string, include bool) (rule, error) {
	bad := func(why string) (rule, error) {
		return rule{}, fault.New(fault.BadRequest, "The indexing path %q is not valid: %s", path, why)
	}
	if !strings.HasPrefix(path, "/") {
		return bad("it must start with /")
	}
	var r rule
	r.include = include
	switch {
	case path == "/*" || path == "/":
		return r, nil
	case strings.HasSuffix(path, "/?"):
		r.exact, path = true, strings.TrimSuffix(path, "/?")
	case strings.HasSuffix(path, "/*"):
		path = strings.TrimSuffix(path, "/*")
	default:
		return bad("it must end with /? or /*")
	}
	segs, why := parseSegments(path)
	if why != "" {
		return bad(why)
	}
	r.segs = segs
	return r, nil
}

// parseSegments splits "/a/\"b c\"/[]" into its segments in term-path form; why says what is
// wrong when it cannot.
func parseSegments(path string) (segs []string, why string) {
	if !strings.HasPrefix(path, "/") || path == "/" {
		return nil, "it must start with / and name a property"
	}
	for rest := path[1:]; ; {
		var seg string
		if strings.HasPrefix(rest, `"`) {
			end := strings.Index(rest[1:], `"`)
			if end < 0 {
				return nil, "a quote is not closed"
			}
			seg, rest = rest[1:1+end], rest[2+end:]
		} else {
			i := strings.IndexByte(rest, '/')
			if i < 0 {
				i = len(rest)
			}
			seg, rest = rest[:i], rest[i:]
		}
		if seg == "" || seg == "*" || seg == "?" {
			return nil, "it has an empty or wildcard segment"
		}
		if seg != "[]" {
			seg = value.TermPath([]string{seg})[1:] // escaped as in the index's term paths
		}
		segs = append(segs, seg)
		if rest == "" {
			return segs, ""
		}
		if rest[0] != '/' {
			return nil, "a quoted name must be followed by /"
		}
		rest = rest[1:]
	}
}

// Indexes reports whether the range index records the values at a term path ("/a/b",
// "/tags/[]"), or the full-text terms at a FullTextTermPath: exactly when the policy has a
// full-text index on that path.
func (p *Policy) Indexes(path string) bool {
	if IsFullTextTermPath(path) {
		return p != nil && !p.none && p.indexesFullText(path)
	}
	if p == nil {
		return true
	}
	if p.none {
		return false
	}
	if AlwaysIndexed(path) {
		if !p.legacy {
			return true
		}
		if path == "/_ts" {
			return false // earlier builds left every system property out
		}
	}
	return p.IndexesByRules(path)
}

// IndexesByRules reports whether the policy's included and excluded paths index path, as
// Indexes does for every path but the system paths (AlwaysIndexed), which earlier builds
// indexed by the rules too (id; _ts was left out).
func (p *Policy) IndexesByRules(path string) bool {
	if p == nil {
		return true
	}
	if p.none {
		return false
	}
	best, bestLen, bestExact, found := true, -1, false, false
	var buf [16]string // a term path's segments, without allocating: this runs for every term written
	segs := buf[:0]
	if path != "" {
		for rest := path[1:]; ; {
			i := strings.IndexByte(rest, '/')
			if i < 0 {
				segs = append(segs, rest)
				break
			}
			segs, rest = append(segs, rest[:i]), rest[i+1:]
		}
	}
	for _, r := range p.rules {
		if len(r.segs) > len(segs) || r.exact && len(r.segs) != len(segs) {
			continue
		}
		match := true
		for i, s := range r.segs {
			if segs[i] != s {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		n := len(r.segs)
		better := !found || n > bestLen || n == bestLen && r.exact && !bestExact ||
			n == bestLen && r.exact == bestExact && !r.include
		if better {
			best, bestLen, bestExact, found = r.include, n, r.exact, true
		}
	}
	return best
}

// ModeNone reports whether the policy's indexing mode is none.
func (p *Policy) ModeNone() bool { return p != nil && p.none }

// IndexesNothing reports whether no path at all is indexed, so that writes can skip computing
// index terms.
func (p *Policy) IndexesNothing() bool {
	if p == nil {
		return false
	}
	if p.none {
		return true
	}
	if !p.legacy {
		return false // the system paths, whatever the rules say
	}
	if p.manual {
		return false // Include writes index by the rules; the others are marked unindexed
	}
	if len(p.fullText) > 0 {
		return false // full-text terms, whatever the rules leave out
	}
	for _, r := range p.rules {
		if r.include {
			return false
		}
	}
	// Without an included path, only a root exclusion leaves nothing indexed.
	for _, r := range p.rules {
		if !r.include && len(r.segs) == 0 && !r.exact {
			return true
		}
	}
	return false
}

// Equal reports whether two policies index the same paths, whatever their JSON looked like:
// the order of the paths does not matter, nor rules on system properties (indexed or not
// whatever the rules say), nor an explicit "/*" that nothing else qualifies (Cosmos's
// default, and an empty policy). A legacy policy (systempaths.go) equals none of this
// build's, unless both index nothing.
func (p *Policy) Equal(q *Policy) bool {
	a, b := p.canonical(), q.canonical()
	if a.none != b.none || a.manual != b.manual || a.legacy != b.legacy || len(a.rules) != len(b.rules) ||
		!slices.EqualFunc(a.composites, b.composites, Composite.equal) ||
		!slices.EqualFunc(a.spatial, b.spatial, Spatial.equal) ||
		!equalAnyOrder(a.vectors, b.vectors, VectorIndex.equal) ||
		!equalAnyOrder(a.fullText, b.fullText, func(x, y FullTextIndex) bool { return x == y }) {
		return false
	}
	for i := range a.rules {
		if a.rules[i].key() != b.rules[i].key() {
			return false
		}
	}
	return true
}

// equalAnyOrder reports whether a and b hold the same entries (each at most once), in any order.
func equalAnyOrder[T any](a, b []T, eq func(T, T) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y T) bool { return eq(x, y) }) {
			return false
		}
	}
	return true
}

func (r rule) key() string {
	return fmt.Sprintf("%v %v %s", r.include, r.exact, strings.Join(r.segs, "/"))
}

// canonical is the policy with its rules sorted, without those on system properties and
// (unless legacy) the paths always indexed, and without a lone root inclusion, which changes
// nothing.
func (p *Policy) canonical() Policy {
	if p == nil {
		return Policy{}
	}
	out := Policy{none: p.none, manual: p.manual, legacy: p.legacy && !p.none, composites: p.composites, spatial: p.spatial, vectors: p.vectors, fullText: p.fullText}
	for _, r := range p.rules {
		if len(r.segs) == 1 && (document.IsSystemProperty(r.segs[0]) || !p.legacy && AlwaysIndexed("/"+r.segs[0])) {
			continue
		}
		out.rules = append(out.rules, r)
	}
	if len(out.rules) == 1 && out.rules[0].include && len(out.rules[0].segs) == 0 {
		out.rules = nil
	}
	sort.Slice(out.rules, func(i, j int) bool { return out.rules[i].key() < out.rules[j].key() })
	return out
}

// Manual reports whether the policy indexes items only when their write asks for it
// (automatic false): other writes leave the item out of the index, and out of queries.
// Under indexingMode none there is no index to include an item in, whatever automatic says.
func (p *Policy) Manual() bool { return p != nil && p.manual && !p.none }
