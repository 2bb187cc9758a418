package searchpolicy

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/partita-db/partita/internal/fault"
)

// VectorPolicy is a container's vector embedding policy. A nil *VectorPolicy declares none.
type VectorPolicy struct {
	Embeddings []Embedding
}

// Embedding is one vector path of the policy.
type Embedding struct {
	Path string   // as declared, e.g. "/embedding"
	Segs []string // Path's property names
	// DataType is how the vectors' numbers are stored: float32 (the default), float16, int8 or
	// uint8. Lower case, whatever the request's case.
	DataType string
	// Distance is the distance function VectorDistance uses on this path unless a query
	// names another: cosine (the default), dotproduct or euclidean. Lower case.
	Distance string
	// Dimensions is the vectors' length: 1 to MaxDimensions.
	Dimensions int
}

// MaxDimensions is the longest vector a policy may declare (the service's limit; a flat index
// takes at most MaxFlatDimensions of them).
const (
	MaxDimensions     = 4096
	MaxFlatDimensions = 505
)

// DataTypes and Distances are the values a policy (and VectorDistance's options) may name.
var (
	DataTypes = []string{"float32", "float16", "int8", "uint8"}
	Distances = []string{"cosine", "dotproduct", "euclidean"}
)

type embeddingJSON struct {
	Path             string          `json:"path"`
	DataType         string          `json:"dataType,omitempty"`
	Dimensions       json.RawMessage `json:"dimensions,omitempty"`
	DistanceFunction string          `json:"distanceFunction,omitempty"`
}

// ParseVector reads a vectorEmbeddingPolicy. It returns nil for an absent policy, null, or a
// policy without embeddings.
func ParseVector(raw []byte) (*VectorPolicy, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var doc struct {
		Embeddings []embeddingJSON `json:"vectorEmbeddings"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fault.New(fault.BadRequest, "The vector embedding policy is not valid: %v", err)
	}
	if len(doc.Embeddings) == 0 {
		return nil, nil
	}
	p := &VectorPolicy{}
	for _, ej := range doc.Embeddings {
		e, err := parseEmbedding(ej)
		if err != nil {
			return nil, err
		}
		for _, prev := range p.Embeddings {
			if slices.Equal(prev.Segs, e.Segs) {
				return nil, fault.New(fault.BadRequest, "The vector embedding policy declares the path %q twice", e.Path)
			}
			if isPrefix(prev.Segs, e.Segs) || isPrefix(e.Segs, prev.Segs) {
				return nil, fault.New(fault.BadRequest, "The vector embedding paths %q and %q overlap: one vector path may not hold another", prev.Path, e.Path)
			}
		}
		p.Embeddings = append(p.Embeddings, e)
	}
	return p, nil
}

func parseEmbedding(ej embeddingJSON) (Embedding, error) {
	segs, err := splitPath("vector embedding", ej.Path)
	if err != nil {
		return Embedding{}, err
	}
	e := Embedding{Path: ej.Path, Segs: segs, DataType: "float32", Distance: "cosine"}
	if ej.DataType != "" {
		if e.DataType = strings.ToLower(ej.DataType); !slices.Contains(DataTypes, e.DataType) {
			return Embedding{}, fault.New(fault.BadRequest, "The vector embedding data type %q of path %q is not supported; use one of %s", ej.DataType, ej.Path, strings.Join(DataTypes, ", "))
		}
	}
	if ej.DistanceFunction != "" {
		if e.Distance = strings.ToLower(ej.DistanceFunction); !slices.Contains(Distances, e.Distance) {
			return Embedding{}, fault.New(fault.BadRequest, "The vector distance function %q of path %q is not supported; use one of %s", ej.DistanceFunction, ej.Path, strings.Join(Distances, ", "))
		}
	}
	var dims float64
	if len(ej.Dimensions) == 0 || json.Unmarshal(ej.Dimensions, &dims) != nil || dims != float64(int(dims)) || dims < 1 || dims > MaxDimensions {
		return Embedding{}, fault.New(fault.BadRequest, "The vector embedding path %q must give its dimensions, a whole number from 1 to %d", ej.Path, MaxDimensions)
	}
	e.Dimensions = int(dims)
	return e, nil
}

func isPrefix(pre, segs []string) bool {
	return len(pre) < len(segs) && slices.Equal(pre, segs[:len(pre)])
}

// JSON is the policy as the catalog keeps it and the service returns it.
func (p *VectorPolicy) JSON() json.RawMessage {
	if p == nil {
		return nil
	}
	type out struct {
		Path             string `json:"path"`
		DataType         string `json:"dataType"`
		DistanceFunction string `json:"distanceFunction"`
		Dimensions       int    `json:"dimensions"`
	}
	doc := struct {
		Embeddings []out `json:"vectorEmbeddings"`
	}{}
	for _, e := range p.Embeddings {
		doc.Embeddings = append(doc.Embeddings, out{e.Path, e.DataType, e.Distance, e.Dimensions})
	}
	b, _ := json.Marshal(doc)
	return b
}

// Lookup returns the embedding declared at the property path segs.
func (p *VectorPolicy) Lookup(segs []string) (Embedding, bool) {
	if p == nil {
		return Embedding{}, false
	}
	for _, e := range p.Embeddings {
		if slices.Equal(e.Segs, segs) {
			return e, true
		}
	}
	return Embedding{}, false
}

// LookupPath returns the embedding declared at path, written as in a policy ("/a/b", with
// quoted segments or not).
func (p *VectorPolicy) LookupPath(path string) (Embedding, bool) {
	segs, err := splitPath("vector", path)
	if err != nil {
		return Embedding{}, false
	}
	return p.Lookup(segs)
}

// Equal reports whether two policies declare the same embeddings, in any order.
func (p *VectorPolicy) Equal(q *VectorPolicy) bool {
	if p == nil || q == nil {
		return p == q
	}
	if len(p.Embeddings) != len(q.Embeddings) {
		return false
	}
	for _, e := range p.Embeddings {
		f, ok := q.Lookup(e.Segs)
		if !ok || f.DataType != e.DataType || f.Distance != e.Distance || f.Dimensions != e.Dimensions {
			return false
		}
	}
	return true
}
