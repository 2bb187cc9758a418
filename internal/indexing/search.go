package indexing

import (
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
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
	// termPath is Path in term-path form (as value.TermPath writes it), what FullTextTermPath
	// takes; set by Parse.
	termPath string
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
		segs, why := parseSegments(f.Path)
		if why != "" {
			return nil, fault.New(fault.BadRequest, "The full-text index path %q is not valid: %s", f.Path, why)
		}
		f.termPath = "/" + strings.Join(segs, "/")
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

// Full-text terms. An item's text at a path with a full-text index is recorded in the range
// index under a term path of its own, FullTextTermPath(path): it starts with a byte that no
// JSON term path starts with (those start with '/', the unindexed marker's is empty), so the
// two never meet. Under it, the item has one entry per distinct analyzed token (FullTextToken)
// and one entry holding its count of tokens (FullTextLength), which every indexed item has, 0
// when it has no text there: the partition's BM25 statistics (items, total length, items per
// token) come from these entries without reading an item.
const fullTextPrefix = "\x01"

// FullTextTermPath is the term path of the full-text entries of the text at path (a term path,
// "/text").
func FullTextTermPath(path string) string { return fullTextPrefix + path }

// IsFullTextTermPath reports whether a term path is a FullTextTermPath.
func IsFullTextTermPath(path string) bool { return strings.HasPrefix(path, fullTextPrefix) }

// The first byte of the encoded value of a full-text entry: a token or the item's length.
// Lengths sort first, so that the statistics read them in one span.
const (
	fullTextLength byte = 0x00
	fullTextToken  byte = 0x01
)

// FullTextToken is the encoded value of the entry of an analyzed token: exact-match reads
// ([v, v+0xFF)) find the items that hold it.
func FullTextToken(token string) []byte {
	return value.AppendEscaped([]byte{fullTextToken}, token)
}

// FullTextLength is the encoded value of the entry of an item's token count, big-endian so
// that the entries of a path sort by it.
func FullTextLength(n uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{fullTextLength}, n)
}

// FullTextLengths bounds the length entries of a path: [FullTextLengths()).
func FullTextLengths() (lo, hi []byte) { return []byte{fullTextLength}, []byte{fullTextToken} }

// ParseFullTextLength reads a length entry's value; ok is false for a token's.
func ParseFullTextLength(v []byte) (n uint32, ok bool) {
	if len(v) != 5 || v[0] != fullTextLength {
		return 0, false
	}
	return binary.BigEndian.Uint32(v[1:]), true
}

// indexesFullText reports whether the policy has a full-text index whose FullTextTermPath is
// path.
func (p *Policy) indexesFullText(path string) bool {
	for _, f := range p.fullText {
		if fullTextPrefix+f.termPath == path {
			return true
		}
	}
	return false
}

// WithoutFullText is the policy without its full-text indexes: what the entries written by a
// build without full-text terms follow (see the partition's indexing record). Its JSON is the
// policy's without the fullTextIndexes property.
func (p *Policy) WithoutFullText() (*Policy, error) {
	if p == nil || len(p.fullText) == 0 {
		return p, nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(p.raw, &doc); err != nil {
		return nil, err
	}
	for k := range doc {
		if strings.EqualFold(k, "fullTextIndexes") {
			delete(doc, k)
		}
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return parse(raw, p.legacy)
}
