package advisor

import (
	"sort"
	"strings"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/value"
)

// item is one sampled item: its parsed value and its size in bytes.
type item struct {
	v     value.Value
	bytes int64
}

// parseItems keeps the sample's JSON objects, in order.
func parseItems(raw [][]byte) []item {
	out := make([]item, 0, len(raw))
	for _, b := range raw {
		v, err := value.Parse(b)
		if err != nil || v.Kind() != value.Object {
			continue
		}
		out = append(out, item{v: v, bytes: int64(len(b))})
	}
	return out
}

// path is a property path, "/a/b", with its segments.
type path struct {
	text string
	segs []string
}

func parsePath(p string) (path, bool) {
	if !strings.HasPrefix(p, "/") || len(p) < 2 {
		return path{}, false
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
			segs[i] = s[1 : len(s)-1]
		}
		if segs[i] == "" {
			return path{}, false
		}
	}
	return path{text: p, segs: segs}, true
}

// get is the scalar at p in v, or undefined when it is missing or not a scalar (an object or
// array cannot be a partition key value).
func (p path) get(v value.Value) value.Value {
	for _, s := range p.segs {
		if v.Kind() != value.Object {
			return value.Undef()
		}
		v = v.Get(s)
	}
	if !v.IsPrimitive() {
		return value.Undef()
	}
	return v
}

// usableName reports whether a property name can be a partition key path segment as written:
// not a system property, and free of the characters paths reserve.
func usableName(name string, top bool) bool {
	if name == "" || strings.ContainsAny(name, `/"*?[]`) {
		return false
	}
	return !top || !strings.HasPrefix(name, "_")
}

// discoverPaths lists the scalar paths of the sample, nested ones included up to maxDepth
// segments (arrays are not descended: their elements cannot be keys), keeping the maxPaths
// present in the most items (ties by name, for determinism).
func discoverPaths(items []item) []path {
	seen := map[string]int{}
	var walk func(v value.Value, prefix string, depth int, mark map[string]bool)
	walk = func(v value.Value, prefix string, depth int, mark map[string]bool) {
		for _, m := range v.Members() {
			if !usableName(m.Key, depth == 0) {
				continue
			}
			p := prefix + "/" + m.Key
			switch {
			case m.Val.IsPrimitive():
				if !mark[p] {
					mark[p] = true
					seen[p]++
				}
			case m.Val.Kind() == value.Object && depth+1 < maxDepth:
				walk(m.Val, p, depth+1, mark)
			}
		}
	}
	for _, it := range items {
		walk(it.v, "", 0, map[string]bool{})
	}
	names := make([]string, 0, len(seen))
	for p := range seen {
		names = append(names, p)
	}
	sort.Slice(names, func(i, j int) bool {
		if seen[names[i]] != seen[names[j]] {
			return seen[names[i]] > seen[names[j]]
		}
		return names[i] < names[j]
	})
	if len(names) > maxPaths {
		names = names[:maxPaths]
	}
	sort.Strings(names)
	out := make([]path, 0, len(names))
	for _, n := range names {
		p, _ := parsePath(n)
		out = append(out, p)
	}
	return out
}

// keyOf is an item's key under paths: a canonical string for counting and the epk.Key.
func keyOf(v value.Value, paths []path) (string, epk.Key, bool) {
	var b strings.Builder
	key := make(epk.Key, len(paths))
	missing := false
	for i, p := range paths {
		x := p.get(v)
		if x.IsUndefined() {
			missing = true
		}
		b.WriteString(value.Key(x))
		b.WriteByte(0)
		key[i] = epkValue(x)
	}
	return b.String(), key, missing
}

// epkValue converts a scalar to a partition key component, as the engine does.
func epkValue(v value.Value) epk.Value {
	switch v.Kind() {
	case value.String:
		return epk.String(v.Str())
	case value.Number:
		return epk.Number(v.Num())
	case value.Boolean:
		return epk.Bool(v.Bool())
	case value.Null:
		return epk.Null()
	}
	return epk.Undefined()
}

// displayKey is an item's key as people read it: JSON values, "(missing)" for undefined ones.
func displayKey(v value.Value, paths []path) string {
	parts := make([]string, len(paths))
	for i, p := range paths {
		x := p.get(v)
		if x.IsUndefined() {
			parts[i] = "(missing)"
			continue
		}
		s := x.String()
		if len(s) > 40 {
			s = s[:37] + "..."
		}
		parts[i] = s
	}
	return strings.Join(parts, ", ")
}

// textOf is a scalar as a synthetic key embeds it: strings as they are, others as JSON,
// undefined as the empty string.
func textOf(v value.Value) string {
	switch v.Kind() {
	case value.Undefined:
		return ""
	case value.String:
		return v.Str()
	}
	return v.String()
}
