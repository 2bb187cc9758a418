package indexing

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/partita-db/partita/internal/fault"
)

// VectorIndex is one entry of the policy's vectorIndexes: an index over a path that the
// container's vector embedding policy declares (the engine checks that it does, and that the
// range index leaves the path out).
type VectorIndex struct {
	Path string // as given, e.g. "/embedding"
	// Type is flat (exact search), quantizedFlat or diskANN, in the service's spelling.
	Type string
	// QuantizationBytes is quantizationByteSize (quantizedFlat and diskANN): the bytes each
	// vector's compressed form takes, 1 to min(dimensions, 512). 0 when not given.
	QuantizationBytes int
	// SearchListSize is indexingSearchListSize (diskANN): the candidate list an insert
	// searches with, 25 to 500. 0 when not given.
	SearchListSize int
	// ShardKeys is vectorIndexShardKey (quantizedFlat and diskANN): paths whose values split
	// the index into independent ones.
	ShardKeys []string
}

// FullTextIndex is one entry of the policy's fullTextIndexes: an inverted index over a path
// the container's full-text policy declares.
type FullTextIndex struct {
	Path string
}

// VectorIndexTypes are the vector index types, in the service's spelling; requests may use any
// case.
var VectorIndexTypes = []string{"flat", "quantizedFlat", "diskANN"}

type vectorIndexJSON struct {
	Path              string          `json:"path"`
	Type              string          `json:"type"`
	QuantizationBytes json.RawMessage `json:"quantizationByteSize,omitempty"`
	SearchListSize    json.RawMessage `json:"indexingSearchListSize,omitempty"`
	ShardKeys         []string        `json:"vectorIndexShardKey,omitempty"`
}

func parseVectorIndexes(raw []vectorIndexJSON) ([]VectorIndex, error) {
	var out []VectorIndex
	for _, vj := range raw {
		if !strings.HasPrefix(vj.Path, "/") || len(vj.Path) < 2 || strings.ContainsAny(vj.Path, "*?[]") {
			return nil, fault.New(fault.BadRequest, "The vector index path %q is not valid: it must name the property a vector embedding path declares, as in \"/embedding\"", vj.Path)
		}
		i := slices.IndexFunc(VectorIndexTypes, func(t string) bool { return strings.EqualFold(t, vj.Type) })
		if i < 0 {
			return nil, fault.New(fault.BadRequest, "The vector index type %q of path %q is not supported; use flat, quantizedFlat or diskANN", vj.Type, vj.Path)
		}
		vi := VectorIndex{Path: vj.Path, Type: VectorIndexTypes[i], ShardKeys: vj.ShardKeys}
		var err error
		if vi.QuantizationBytes, err = optionalInt(vj.QuantizationBytes, "quantizationByteSize", vj.Path, 1, 512); err != nil {
			return nil, err
		}
		if vi.SearchListSize, err = optionalInt(vj.SearchListSize, "indexingSearchListSize", vj.Path, 25, 500); err != nil {
			return nil, err
		}
		if vi.QuantizationBytes != 0 && vi.Type == "flat" {
			return nil, fault.New(fault.BadRequest, "quantizationByteSize applies to quantizedFlat and diskANN vector indexes, not to the flat index of path %q", vj.Path)
		}
		if vi.SearchListSize != 0 && vi.Type != "diskANN" {
			return nil, fault.New(fault.BadRequest, "indexingSearchListSize applies to diskANN vector indexes, not to the %s index of path %q", vi.Type, vj.Path)
		}
		if len(vi.ShardKeys) > 0 && vi.Type == "flat" {
			return nil, fault.New(fault.BadRequest, "vectorIndexShardKey applies to quantizedFlat and diskANN vector indexes, not to the flat index of path %q", vj.Path)
		}
		for _, k := range vi.ShardKeys {
			if !strings.HasPrefix(k, "/") || len(k) < 2 {
				return nil, fault.New(fault.BadRequest, "The vector index shard key %q of path %q is not a path", k, vj.Path)
			}
		}
		if slices.ContainsFunc(out, func(o VectorIndex) bool { return o.Path == vi.Path }) {
			return nil, fault.New(fault.BadRequest, "The indexing policy has two vector indexes on path %q", vj.Path)
		}
		out = append(out, vi)
	}
	return out, nil
}

// optionalInt reads an optional whole-number option in [lo, hi]; 0 when absent.
func optionalInt(raw json.RawMessage, name, path string, lo, hi int) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil || f != float64(int(f)) || f < float64(lo) || f > float64(hi) {
		return 0, fault.New(fault.BadRequest, "The %s of the vector index on path %q must be a whole number from %d to %d, not %s", name, path, lo, hi, raw)
	}
	return int(f), nil
}

func parseFullTextIndexes(raw []FullTextIndex) ([]FullTextIndex, error) {
	var out []FullTextIndex
	for _, f := range raw {
		if !strings.HasPrefix(f.Path, "/") || len(f.Path) < 2 || strings.ContainsAny(f.Path, "*?[]") {
			return nil, fault.New(fault.BadRequest, "The full-text index path %q is not valid: it must name the property a full-text path declares, as in \"/text\"", f.Path)
		}
		if slices.Contains(out, f) {
			return nil, fault.New(fault.BadRequest, "The indexing policy has two full-text indexes on path %q", f.Path)
		}
		out = append(out, f)
	}
	return out, nil
}

func (v VectorIndex) equal(w VectorIndex) bool {
	return v.Path == w.Path && v.Type == w.Type && v.QuantizationBytes == w.QuantizationBytes &&
		v.SearchListSize == w.SearchListSize && slices.Equal(v.ShardKeys, w.ShardKeys)
}

// VectorIndexes are the policy's vector indexes.
func (p *Policy) VectorIndexes() []VectorIndex {
	if p == nil {
		return nil
	}
	return p.vectors
}

// FullTextIndexes are the policy's full-text indexes.
func (p *Policy) FullTextIndexes() []FullTextIndex {
	if p == nil {
		return nil
	}
	return p.fullText
}
