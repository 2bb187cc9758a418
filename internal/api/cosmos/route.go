package cosmos

import (
	"net/url"
	"strings"

	"github.com/partita-db/partita/internal/fault"
)

// resource is what a URL names: its path segments (unescaped), and the resource type and link
// that the signature covers.
type resource struct {
	segs []string
	typ  string // e.g. "docs"
	link string // e.g. "dbs/d/colls/c"
	// byRID: the path names resources by resource id (ridpath.go); segs hold their names
	// once resolveRIDs has run.
	byRID bool
	// ridLink, for a path whose database segment is shaped like a resource id but names no
	// database by id or by name, is the link a signature over the path read by resource id
	// covers (ridpath.go): a deleted resource's _self link, signed as the SDKs sign it.
	ridLink string
	// altType is another resource type a signature of the path may name, where the SDKs do
	// not agree (see parseResource).
	altType string
}

// parseResource reads the escaped URL path. A feed (odd number of segments, e.g.
// dbs/d/colls) is typed by its last segment and linked to its parent; a single resource (even
// number) is typed by the second to last and linked to itself. Offers are linked by their rid,
// in lower case. One slash may end the path (SDKs address offers as "offers/<rid>/"), and one
// more may begin it: clients that join the endpoint the account advertises, which ends in "/",
// with a path that begins with one send "//dbs/...", which the service serves. Any other empty
// segment is refused rather than read as if it were not there.
func parseResource(escapedPath string) (resource, error) {
	escapedPath = strings.TrimPrefix(escapedPath, "/")
	trimmed := strings.TrimSuffix(strings.TrimPrefix(escapedPath, "/"), "/")
	var res resource
	if escapedPath == "" || escapedPath == "/" {
		return res, nil
	}
	res.segs = make([]string, 0, strings.Count(trimmed, "/")+1)
	escaped := strings.IndexByte(trimmed, '%') >= 0
	for rest := trimmed; ; {
		s, tail, more := strings.Cut(rest, "/")
		if escaped {
			var err error
			if s, err = url.PathUnescape(s); err != nil {
				s = "" // refused below, like an empty segment
			}
		}
		if s == "" {
			return res, fault.New(fault.BadRequest, "The request path %q is not a valid resource path", escapedPath)
		}
		res.segs = append(res.segs, s)
		if !more {
			break
		}
		rest = tail
	}
	n := len(res.segs)
	switch {
	case !escaped && n%2 == 1:
		// Without escapes the link is the path itself, or its prefix: no copy needed.
		res.typ, res.link = res.segs[n-1], strings.TrimSuffix(trimmed[:len(trimmed)-len(res.segs[n-1])], "/")
	case !escaped:
		res.typ, res.link = res.segs[n-2], trimmed
	case n%2 == 1:
		res.typ, res.link = res.segs[n-1], strings.Join(res.segs[:n-1], "/")
	default:
		res.typ, res.link = res.segs[n-2], strings.Join(res.segs, "/")
	}
	if res.segs[0] == "offers" && n == 2 {
		res.link = strings.ToLower(res.segs[1])
	}
	if n == 6 && res.segs[0] == "dbs" && res.segs[2] == "colls" && res.segs[4] == "operations" {
		// An operation on a container (.../operations/partitionkeydelete) is signed over the
		// container's link: as a "partitionkey" resource by the .NET, Java and Python SDKs, as
		// "colls" by the JavaScript SDK.
		res.typ, res.altType = "partitionkey", "colls"
		res.link = strings.Join(res.segs[:4], "/")
	}
	return res, nil
}

// shape is the URL's pattern with the names left out, e.g. "dbs/*/colls/*/docs".
func (r resource) shape() string {
	var buf [64]byte
	return string(r.appendShape(buf[:0]))
}

// appendShape appends the shape to b; dispatch switches on it without allocating.
func (r resource) appendShape(b []byte) []byte {
	for i, s := range r.segs {
		if i > 0 {
			b = append(b, '/')
		}
		if i%2 == 0 {
			b = append(b, s...)
		} else {
			b = append(b, '*')
		}
	}
	return b
}
