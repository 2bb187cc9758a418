package searchpolicy

import (
	"strings"

	"github.com/partita-db/partita/internal/fault"
)

// splitPath turns "/a/b" into its property names; a segment may be quoted ("/\"a b\"/c").
// Search paths name one property each: no wildcards, no array positions. what names the
// policy for the error.
func splitPath(what, p string) ([]string, error) {
	bad := fault.New(fault.BadRequest, "The %s path %q is not valid: it must start with / and name a property, as in \"/embedding\"", what, p)
	if !strings.HasPrefix(p, "/") || len(p) < 2 {
		return nil, bad
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
			s = s[1 : len(s)-1]
			segs[i] = s
		}
		if s == "" || strings.ContainsAny(s, "*?[]\"") {
			return nil, bad
		}
	}
	return segs, nil
}
