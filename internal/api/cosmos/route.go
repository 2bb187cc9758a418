package cosmos

import (
	"net/url"
	"strings"

	"github.com/partita-db/partita/internal/status"
)

// resource is what a URL names: its path segments (unescaped), and the resource type and link
// that the signature covers.
type resource struct {
	segs []string
	typ  string // e.g. "docs"
	link string // e.g. "dbs/d/colls/c"
}

// parseResource reads the escaped URL path. A feed (odd number of segments, e.g.
// dbs/d/colls) is typed by its last segment and linked to its parent; a single resource (even
// number) is typed by the second to last and linked to itself. Offers are linked by their rid,
// in lower case.
func parseResource(escapedPath string) (resource, error) {
	trimmed := strings.Trim(escapedPath, "/")
	var res resource
	if trimmed == "" {
		return res, nil
	}
	for _, s := range strings.Split(trimmed, "/") {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" {
			return res, status.BadRequest("The request path %q is not a valid resource path", escapedPath)
		}
		res.segs = append(res.segs, u)
	}
	n := len(res.segs)
	if n%2 == 1 {
		res.typ = res.segs[n-1]
		res.link = strings.Join(res.segs[:n-1], "/")
	} else {
		res.typ = res.segs[n-2]
		res.link = strings.Join(res.segs, "/")
	}
	if res.segs[0] == "offers" && n == 2 {
		res.link = strings.ToLower(res.segs[1])
	}
	return res, nil
}

// shape is the URL's pattern with the names left out, e.g. "dbs/*/colls/*/docs".
func (r resource) shape() string {
	parts := make([]string, len(r.segs))
	for i, s := range r.segs {
		if i%2 == 0 {
			parts[i] = s
		} else {
			parts[i] = "*"
		}
	}
	return strings.Join(parts, "/")
}
