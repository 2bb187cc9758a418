package indexing

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/partita-db/partita/internal/fault"
)

// Composite is one composite index: two or more paths, each with its direction. Cosmos needs
// one to serve an ORDER BY over several expressions; Partita keeps the policy's word on that
// (ServesOrderBy) and still sorts by evaluation, so composites store nothing.
type Composite []CompositePath

// CompositePath is one path of a composite index.
type CompositePath struct {
	Path string // in term-path form, as value.TermPath writes it ("/a/b")
	Desc bool
}

type compositePathJSON struct {
	Path  string          `json:"path"`
	Order json.RawMessage `json:"order"`
}

// parseComposites validates compositeIndexes as Cosmos does: every index has at least two
// paths, each a property path without wildcards or a trailing /? or /*, ordered "ascending"
// (the default) or "descending".
func parseComposites(raw [][]compositePathJSON) ([]Composite, error) {
	var out []Composite
	for _, idx := range raw {
		if len(idx) < 2 {
			return nil, fault.New(fault.BadRequest, "The composite index %s is not valid: a composite index needs at least 2 paths", compositeText(idx))
		}
		var c Composite
		for _, cp := range idx {
			var segs []string
			why := "composite index paths name one property, without /?, /* or []"
			if !strings.HasSuffix(cp.Path, "/?") && !strings.HasSuffix(cp.Path, "/*") {
				if segs, why = parseSegments(cp.Path); why == "" && slices.Contains(segs, "[]") {
					why = "composite index paths name one property, without /?, /* or []"
				}
			}
			if why != "" {
				return nil, fault.New(fault.BadRequest, "The composite index path %q is not valid: %s", cp.Path, why)
			}
			desc, err := parseOrder(cp.Order)
			if err != nil {
				return nil, err
			}
			c = append(c, CompositePath{Path: "/" + strings.Join(segs, "/"), Desc: desc})
		}
		out = append(out, c)
	}
	return out, nil
}

// parseOrder reads a composite path's "order": absent or null is ascending.
func parseOrder(raw json.RawMessage) (desc bool, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return false, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch strings.ToLower(s) {
		case "ascending":
			return false, nil
		case "descending":
			return true, nil
		}
	}
	return false, fault.New(fault.BadRequest, "The composite index order %s is not valid; use \"ascending\" or \"descending\"", raw)
}

func compositeText(idx []compositePathJSON) string {
	b, _ := json.Marshal(idx)
	return string(b)
}

func (c Composite) equal(d Composite) bool { return slices.Equal(c, d) }

// String writes the index as index metrics name it: "/a ASC, /b DESC".
func (c Composite) String() string {
	parts := make([]string, len(c))
	for i, p := range c {
		parts[i] = p.String()
	}
	return strings.Join(parts, ", ")
}

func (p CompositePath) String() string {
	if p.Desc {
		return p.Path + " DESC"
	}
	return p.Path + " ASC"
}

// Composites are the policy's composite indexes.
func (p *Policy) Composites() []Composite {
	if p == nil {
		return nil
	}
	return p.composites
}

// The errors Cosmos gives an ORDER BY its indexing policy cannot serve (status 400).
const (
	msgNoComposite = "The order by query does not have a corresponding composite index that it can be served from."
	msgExcluded    = "The index path corresponding to the specified order-by item is excluded."
)

// ServesOrderBy checks that the policy can serve an ORDER BY over keys (term paths of the
// root, with directions), as Cosmos requires: one key needs its path range-indexed; several
// need a composite index with the same paths in the same order and either the same
// directions or all of them reversed. Without an index at all (indexingMode none) nothing is
// checked: such containers are read by scanning. The composite it matched is returned, nil
// for one key.
func (p *Policy) ServesOrderBy(keys []CompositePath) (Composite, error) {
	if p == nil || p.none || len(keys) == 0 {
		return nil, nil
	}
	if len(keys) == 1 {
		// Cosmos always indexes id, whatever the policy says (and so does ORDER BY c.id).
		if keys[0].Path != "/id" && !p.Indexes(keys[0].Path) {
			return nil, fault.New(fault.BadRequest, "%s", msgExcluded)
		}
		return nil, nil
	}
	if c := p.compositeFor(keys); c != nil {
		return c, nil
	}
	return nil, fault.New(fault.BadRequest, "%s", msgNoComposite)
}

// compositeFor is the composite index that serves an ORDER BY over keys, nil when none does.
func (p *Policy) compositeFor(keys []CompositePath) Composite {
	for _, c := range p.Composites() {
		if len(c) != len(keys) {
			continue
		}
		same, reversed := true, true
		for i, k := range keys {
			if c[i].Path != k.Path {
				same, reversed = false, false
				break
			}
			same = same && c[i].Desc == k.Desc
			reversed = reversed && c[i].Desc != k.Desc
		}
		if same || reversed {
			return c
		}
	}
	return nil
}
