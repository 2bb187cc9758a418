package uniquekey

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/fault"
)

// Cosmos's limits on a unique key policy.
const (
	MaxKeys  = 10 // unique keys in one policy
	MaxPaths = 16 // paths in one unique key
)

// Policy is a parsed unique key policy with at least one key; a nil *Policy has none, and
// costs writes nothing.
type Policy struct {
	keys []key
}

// key is one unique key: the values at all its paths together must be unique.
type key struct {
	paths []string   // as the client wrote them, for the policy's JSON and for messages
	segs  [][]string // each path's property names, unquoted
}

// wire is the policy's JSON shape.
type wire struct {
	UniqueKeys []wireKey `json:"uniqueKeys"`
}

type wireKey struct {
	Paths []string `json:"paths"`
}

// Parse reads a uniqueKeyPolicy as Cosmos's JSON. Nothing, null, or a policy without keys
// give nil. A policy Cosmos would refuse (too many keys or paths, a path that is not a plain
// property path, a path repeated in a key, a key repeated) is a BadRequest.
func Parse(raw []byte) (*Policy, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var w wire
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fault.New(fault.BadRequest, "The unique key policy is not valid: %v; write it as {\"uniqueKeys\": [{\"paths\": [\"/email\"]}]}", err)
	}
	if len(w.UniqueKeys) == 0 {
		return nil, nil
	}
	if len(w.UniqueKeys) > MaxKeys {
		return nil, fault.New(fault.BadRequest, "A unique key policy has at most %d unique keys; got %d", MaxKeys, len(w.UniqueKeys))
	}
	p := &Policy{}
	seen := map[string]int{} // a key's canonical form -> its number
	for i, wk := range w.UniqueKeys {
		switch {
		case len(wk.Paths) == 0:
			return nil, fault.New(fault.BadRequest, "Unique key %d has no paths; each unique key needs between 1 and %d", i, MaxPaths)
		case len(wk.Paths) > MaxPaths:
			return nil, fault.New(fault.BadRequest, "Unique key %d has %d paths; the limit is %d", i, len(wk.Paths), MaxPaths)
		}
		k := key{paths: wk.Paths}
		for _, path := range wk.Paths {
			segs, err := parsePath(path)
			if err != nil {
				return nil, err
			}
			k.segs = append(k.segs, segs)
		}
		names := k.canonical()
		for j := 1; j < len(names); j++ {
			if names[j] == names[j-1] {
				return nil, fault.New(fault.BadRequest, "Unique key %d names the path %s more than once", i, pathOf(names[j]))
			}
		}
		c := strings.Join(names, "\x00\x00")
		if j, ok := seen[c]; ok {
			return nil, fault.New(fault.BadRequest, "Unique keys %d and %d have the same paths; give each set of paths once", j, i)
		}
		seen[c] = i
		p.keys = append(p.keys, k)
	}
	return p, nil
}

// canonical is the key's paths as sorted, unambiguous strings: the order of a key's paths
// does not change which items it lets in, so two keys that list the same paths are the same.
func (k key) canonical() []string {
	out := make([]string, len(k.segs))
	for i, segs := range k.segs {
		out[i] = strings.Join(segs, "\x00")
	}
	slices.Sort(out)
	return out
}

func pathOf(canonical string) string { return "/" + strings.ReplaceAll(canonical, "\x00", "/") }

// parsePath splits a unique key path ("/email", "/address/city", "/\"odd name\"/x") into its
// property names. Wildcards and array elements are refused: a unique key names one value.
func parsePath(path string) ([]string, error) {
	bad := func(why string) ([]string, error) {
		return nil, fault.New(fault.BadRequest, "The unique key path %q is not valid: %s", path, why)
	}
	if !strings.HasPrefix(path, "/") || len(path) < 2 {
		return bad("it must start with / and name a property, e.g. \"/email\"")
	}
	var segs []string
	for rest := path[1:]; ; {
		var seg string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				return bad("a quote is not closed")
			}
			seg, rest = rest[1:1+end], rest[2+end:]
			if seg == "" {
				return bad("it has an empty segment")
			}
		} else {
			i := strings.IndexByte(rest, '/')
			if i < 0 {
				i = len(rest)
			}
			seg, rest = rest[:i], rest[i:]
			if seg == "" || seg == "*" || seg == "?" || seg == "[]" || strings.ContainsAny(seg, `*?[]"`) {
				return bad("each segment must be a property name (no wildcards, array elements or empty segments)")
			}
		}
		segs = append(segs, seg)
		if rest == "" {
			break
		}
		if rest[0] != '/' {
			return bad("a quoted name must be followed by /")
		}
		rest = rest[1:]
	}
	if document.IsSystemProperty(segs[0]) {
		// The server writes these; the client's copy is dropped, so they would constrain
		// nothing the client controls.
		return bad("it names a system property, which the server sets")
	}
	return segs, nil
}

// Len is the number of unique keys.
func (p *Policy) Len() int {
	if p == nil {
		return 0
	}
	return len(p.keys)
}

// Paths are the paths of unique key i, as the client wrote them.
func (p *Policy) Paths(i int) []string { return p.keys[i].paths }

// Equal reports whether two policies constrain items alike: the same keys, each with the
// same paths, in any order.
func (p *Policy) Equal(q *Policy) bool {
	if p.Len() != q.Len() {
		return false
	}
	if p == nil {
		return true
	}
	set := func(p *Policy) []string {
		var out []string
		for _, k := range p.keys {
			out = append(out, strings.Join(k.canonical(), "\x00\x00"))
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(set(p), set(q))
}

// JSON is the policy as Cosmos returns it; a nil policy is {"uniqueKeys":[]}, as Cosmos
// returns for a container created without one.
func (p *Policy) JSON() json.RawMessage {
	w := wire{UniqueKeys: []wireKey{}}
	if p != nil {
		for _, k := range p.keys {
			w.UniqueKeys = append(w.UniqueKeys, wireKey{Paths: k.paths})
		}
	}
	out, _ := json.Marshal(w) // strings and slices only: it cannot fail
	return out
}
