package engine

import (
	"slices"
	"strings"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/query"
)

// The values of a write's indexing directive (x-ms-indexing-directive).
const (
	DirectiveDefault = ""        // as the policy says: indexed, unless the policy is manual
	DirectiveInclude = "Include" // indexed, even under a manual policy
	DirectiveExclude = "Exclude" // kept out of the index, and so out of every query
)

// ParseIndexingDirective reads an indexing directive as Cosmos accepts it ("Default",
// "Include", "Exclude", in any case); anything else is a bad request.
func ParseIndexingDirective(s string) (string, error) {
	switch strings.ToLower(s) {
	case "", "default":
		return DirectiveDefault, nil
	case "include":
		return DirectiveInclude, nil
	case "exclude":
		return DirectiveExclude, nil
	}
	return "", fault.New(fault.BadRequest, "The indexing directive %q is not valid; use Include, Exclude or Default", s)
}

// direct sets the index terms of a write as its indexing directive asks. Where the policy
// indexes nothing (indexingMode none) a directive changes nothing: there is no index to keep
// an item out of, and queries read every item.
func (c *Container) direct(op *partition.Operation, item *document.Item, directive string) error {
	d, err := ParseIndexingDirective(directive)
	if err != nil || d == DirectiveDefault {
		return err
	}
	pol := c.policy()
	if pol.IndexesNothing() {
		return nil
	}
	if d == DirectiveExclude {
		op.Terms = partition.NotIndexed()
	} else {
		op.Terms = partition.IncludedTerms(item.Value, pol, c.search.fullText)
	}
	return nil
}

// checkOrderBy refuses, as Cosmos does, an ORDER BY the indexing policy cannot serve: one key
// on a path the policy leaves out, or several without a matching composite index. It returns
// the composite index that serves the query, if any. Partita still sorts by evaluation (the
// composite index stores nothing); the check keeps what runs here running on Cosmos.
func (c *Container) checkOrderBy(p *query.Prepared) (indexing.Composite, error) {
	keys, ok := p.OrderKeys()
	if !ok {
		return nil, nil
	}
	return c.policy().ServesOrderBy(compositePaths(keys))
}

func compositePaths(keys []query.OrderKey) []indexing.CompositePath {
	out := make([]indexing.CompositePath, len(keys))
	for i, k := range keys {
		out[i] = indexing.CompositePath{Path: k.Path, Desc: k.Desc}
	}
	return out
}

// IndexMetrics is what a query's execution did with the indexing policy, and what the policy
// lacks for it: the body of x-ms-cosmos-index-utilization. Single indexes are written as
// Cosmos writes included paths ("/name/?"), composite ones as "/name ASC".
type IndexMetrics struct {
	UtilizedSingle, PotentialSingle       []string
	UtilizedComposite, PotentialComposite [][]string
}

// IndexMetrics describes an execution of p that used the index as use says. Utilized are the
// indexes the execution read (the filter's range, the ORDER BY's order), and the composite
// index that allowed an ORDER BY over several keys; potential are the paths the query filters
// or orders on that the policy leaves out, and the composite indexes that would serve an
// equality filter with the ORDER BY, or several filters, better than single paths.
func (c *Container) IndexMetrics(p *query.Prepared, use query.IndexUse) IndexMetrics {
	pol := c.policy()
	var m IndexMetrics
	single := func(path string) string { return path + "/?" }
	add := func(list *[]string, s string) {
		if !slices.Contains(*list, s) {
			*list = append(*list, s)
		}
	}
	for _, path := range []string{use.Filter, use.Order} {
		// A full-text index is none of the single or composite indexes these metrics name.
		if path != "" && !indexing.IsFullTextTermPath(path) {
			add(&m.UtilizedSingle, single(path))
		}
	}
	paths := p.FilterPaths()
	keys, ordered := p.OrderKeys()
	if ordered && len(keys) == 1 {
		paths = append(paths, keys[0].Path)
	}
	for _, path := range paths {
		if !pol.Indexes(path) {
			add(&m.PotentialSingle, single(path))
		}
	}
	if ordered && len(keys) > 1 {
		if comp, err := pol.ServesOrderBy(compositePaths(keys)); err == nil && comp != nil {
			m.UtilizedComposite = append(m.UtilizedComposite, compositeSpecs(comp))
		}
	}
	for _, cand := range p.CompositeCandidates() {
		comp := indexing.Composite(compositePaths(cand))
		if served, err := pol.ServesOrderBy(comp); err == nil && served != nil {
			continue // the policy has it already
		}
		m.PotentialComposite = append(m.PotentialComposite, compositeSpecs(comp))
	}
	return m
}

func compositeSpecs(c indexing.Composite) []string {
	out := make([]string, len(c))
	for i, p := range c {
		out[i] = p.String()
	}
	return out
}
