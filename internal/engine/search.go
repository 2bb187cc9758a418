package engine

import (
	"encoding/json"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/searchpolicy"
	"github.com/partita-db/partita/internal/value"
)

// A container's vector embedding and full-text policies are set at creation and never change
// (package searchpolicy): a different dimension or distance function would invalidate every
// vector index entry, and Partita takes the service's strictest rule. The indexes over their
// paths are part of the indexing policy, which may change like any other index.

// searchPolicies are a container's two search policies, parsed.
type searchPolicies struct {
	vectors  *searchpolicy.VectorPolicy   // nil for none
	fullText *searchpolicy.FullTextPolicy // nil for none
	// olderFullText is set for a container created before partitions wrote the entries of
	// full-text indexes (containerRecord.FullTextTerms).
	olderFullText bool
}

// parseSearchPolicies validates a create request's (or a record's) search policies.
func parseSearchPolicies(vec, ft json.RawMessage) (searchPolicies, error) {
	var s searchPolicies
	var err error
	if s.vectors, err = searchpolicy.ParseVector(vec); err != nil {
		return s, err
	}
	s.fullText, err = searchpolicy.ParseFullText(ft)
	return s, err
}

// checkSearchIndexes refuses an indexing policy whose vector or full-text indexes the search
// policies do not allow: an index on an undeclared path, a flat index over more dimensions
// than it takes, a quantization larger than the vectors, or a vector path the range index
// also records.
func (s searchPolicies) checkSearchIndexes(pol *indexing.Policy) error {
	for _, vi := range pol.VectorIndexes() {
		emb, ok := s.vectors.LookupPath(vi.Path)
		if !ok {
			return fault.New(fault.BadRequest, "The vector index path %q is not declared in the container's vector embedding policy", vi.Path)
		}
		if vi.Type == "flat" && emb.Dimensions > searchpolicy.MaxFlatDimensions {
			return fault.New(fault.BadRequest, "A flat vector index takes vectors of at most %d dimensions; path %q declares %d: use quantizedFlat or diskANN", searchpolicy.MaxFlatDimensions, vi.Path, emb.Dimensions)
		}
		if vi.QuantizationBytes > emb.Dimensions {
			return fault.New(fault.BadRequest, "The quantizationByteSize of the vector index on path %q may be at most its %d dimensions", vi.Path, emb.Dimensions)
		}
		tp := value.TermPath(emb.Segs)
		if pol.Indexes(tp) || pol.Indexes(tp+"/[]") {
			return fault.New(fault.BadRequest, "The vector index path %q must be excluded from the range index: add {\"path\": \"%s/*\"} to excludedPaths", vi.Path, vi.Path)
		}
	}
	for _, fi := range pol.FullTextIndexes() {
		if _, ok := s.fullText.LookupPath(fi.Path); !ok {
			return fault.New(fault.BadRequest, "The full-text index path %q is not declared in the container's full-text policy", fi.Path)
		}
	}
	return nil
}

// sameSearchPolicies refuses a container replace that gives search policies other than the
// container's. Giving none keeps them: clients send back the properties they read, and older
// ones know nothing of these.
func (c *Container) sameSearchPolicies(vec, ft json.RawMessage) error {
	if len(vec) > 0 {
		p, err := searchpolicy.ParseVector(vec)
		if err != nil {
			return err
		}
		if !p.Equal(c.search.vectors) {
			return fault.New(fault.BadRequest, "The vector embedding policy of a container cannot be changed after it is created; create a new container with the new policy and copy the items over")
		}
	}
	if len(ft) > 0 {
		p, err := searchpolicy.ParseFullText(ft)
		if err != nil {
			return err
		}
		if string(p.JSON()) != string(c.search.fullText.JSON()) {
			return fault.New(fault.BadRequest, "The full-text policy of a container cannot be changed after it is created; create a new container with the new policy and copy the items over")
		}
	}
	return nil
}

// VectorPolicy and FullTextPolicy are the container's search policies (nil for none), for
// the query engine.
func (c *Container) VectorPolicy() *searchpolicy.VectorPolicy     { return c.search.vectors }
func (c *Container) FullTextPolicy() *searchpolicy.FullTextPolicy { return c.search.fullText }
