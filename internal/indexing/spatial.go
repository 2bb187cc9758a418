package indexing

import (
	"slices"
	"strings"

	"github.com/partita-db/partita/internal/fault"
)

// Spatial is one spatial index of the policy. Partita keeps it so that the policy reads back
// as given and is validated as Cosmos validates it; queries with spatial functions are
// answered by evaluating them on every item the rest of the query selects.
type Spatial struct {
	Path  string   // as given ("/location/*" or "/location/?")
	Types []string // "Point", "LineString", "Polygon", "MultiPolygon"
}

type spatialJSON struct {
	Path  string   `json:"path"`
	Types []string `json:"types"`
}

var spatialTypes = []string{"Point", "LineString", "Polygon", "MultiPolygon"}

func parseSpatial(raw []spatialJSON) ([]Spatial, error) {
	var out []Spatial
	for _, s := range raw {
		if _, err := parseRule(s.Path, true); err != nil {
			return nil, err
		}
		if s.Path == "/*" || s.Path == "/" {
			return nil, fault.New(fault.BadRequest, "The spatial index path %q is not valid: it must name a property", s.Path)
		}
		sp := Spatial{Path: s.Path}
		for _, t := range s.Types {
			i := slices.IndexFunc(spatialTypes, func(k string) bool { return strings.EqualFold(k, t) })
			if i < 0 {
				return nil, fault.New(fault.BadRequest, "The spatial type %q of path %q is not valid; use Point, LineString, Polygon or MultiPolygon", t, s.Path)
			}
			sp.Types = append(sp.Types, spatialTypes[i])
		}
		out = append(out, sp)
	}
	return out, nil
}

func (s Spatial) equal(t Spatial) bool { return s.Path == t.Path && slices.Equal(s.Types, t.Types) }

// Spatial are the policy's spatial indexes.
func (p *Policy) Spatial() []Spatial {
	if p == nil {
		return nil
	}
	return p.spatial
}
