package searchpolicy

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/partita-db/partita/internal/fault"
)

// FullTextPolicy is a container's full-text policy. A nil *FullTextPolicy declares none.
type FullTextPolicy struct {
	// DefaultLanguage is the language of paths that name none, and of text the policy does
	// not cover. As declared (e.g. "en-US").
	DefaultLanguage string
	Paths           []TextPath
}

// TextPath is one full-text path of the policy.
type TextPath struct {
	Path     string   // as declared, e.g. "/text"
	Segs     []string // Path's property names
	Language string   // as declared, or the default language
}

// Languages are the languages a full-text policy may name: the service's, in its spelling.
// Matching is case-insensitive.
var Languages = []string{"en-US", "de-DE", "es-ES", "fr-FR", "it-IT", "pt-BR", "pt-PT"}

// DefaultLanguage is the language of a policy that names none.
const DefaultLanguage = "en-US"

// ParseFullText reads a fullTextPolicy. It returns nil for an absent policy or null.
func ParseFullText(raw []byte) (*FullTextPolicy, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var doc struct {
		DefaultLanguage string `json:"defaultLanguage"`
		Paths           []struct {
			Path     string `json:"path"`
			Language string `json:"language"`
		} `json:"fullTextPaths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fault.New(fault.BadRequest, "The full-text policy is not valid: %v", err)
	}
	p := &FullTextPolicy{DefaultLanguage: DefaultLanguage}
	if doc.DefaultLanguage != "" {
		lang, err := language(doc.DefaultLanguage)
		if err != nil {
			return nil, err
		}
		p.DefaultLanguage = lang
	}
	for _, pj := range doc.Paths {
		segs, err := splitPath("full-text", pj.Path)
		if err != nil {
			return nil, err
		}
		tp := TextPath{Path: pj.Path, Segs: segs, Language: p.DefaultLanguage}
		if pj.Language != "" {
			if tp.Language, err = language(pj.Language); err != nil {
				return nil, err
			}
		}
		for _, prev := range p.Paths {
			if slices.Equal(prev.Segs, segs) {
				return nil, fault.New(fault.BadRequest, "The full-text policy declares the path %q twice", pj.Path)
			}
		}
		p.Paths = append(p.Paths, tp)
	}
	return p, nil
}

// language returns the supported language that name spells, in the service's spelling.
func language(name string) (string, error) {
	for _, l := range Languages {
		if strings.EqualFold(l, name) {
			return l, nil
		}
	}
	return "", fault.New(fault.BadRequest, "The full-text language %q is not supported; use one of %s", name, strings.Join(Languages, ", "))
}

// JSON is the policy as the catalog keeps it and the service returns it.
func (p *FullTextPolicy) JSON() json.RawMessage {
	if p == nil {
		return nil
	}
	type path struct {
		Path     string `json:"path"`
		Language string `json:"language"`
	}
	doc := struct {
		DefaultLanguage string `json:"defaultLanguage"`
		Paths           []path `json:"fullTextPaths"`
	}{DefaultLanguage: p.DefaultLanguage, Paths: []path{}}
	for _, tp := range p.Paths {
		doc.Paths = append(doc.Paths, path{tp.Path, tp.Language})
	}
	b, _ := json.Marshal(doc)
	return b
}

// Lookup returns the full-text path declared at the property path segs.
func (p *FullTextPolicy) Lookup(segs []string) (TextPath, bool) {
	if p == nil {
		return TextPath{}, false
	}
	for _, tp := range p.Paths {
		if slices.Equal(tp.Segs, segs) {
			return tp, true
		}
	}
	return TextPath{}, false
}

// LookupPath returns the full-text path declared at path, written as in a policy.
func (p *FullTextPolicy) LookupPath(path string) (TextPath, bool) {
	segs, err := splitPath("full-text", path)
	if err != nil {
		return TextPath{}, false
	}
	return p.Lookup(segs)
}

// Language is the language of the text at segs: its path's, else the policy's default, else
// DefaultLanguage.
func (p *FullTextPolicy) Language(segs []string) string {
	if tp, ok := p.Lookup(segs); ok {
		return tp.Language
	}
	if p != nil {
		return p.DefaultLanguage
	}
	return DefaultLanguage
}
