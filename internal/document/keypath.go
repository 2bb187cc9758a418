package document

import (
	"strings"

	"github.com/partita-db/partita/internal/fault"
)

// SplitKeyPath turns a partition key path such as "/a/b" into its segments ["a", "b"].
// Segments may be quoted: /"a b"/c. The server (reading a container's definition) and the
// tools (routing items to partition key ranges) both split paths here, so they agree.
func SplitKeyPath(p string) ([]string, error) {
	if !strings.HasPrefix(p, "/") || len(p) < 2 {
		return nil, fault.New(fault.BadRequest, "Partition key path %q must start with '/' and name a property, e.g. \"/pk\"", p)
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
			s = s[1 : len(s)-1]
			segs[i] = s
		}
		if s == "" || strings.ContainsAny(s, "*?[]") {
			return nil, fault.New(fault.BadRequest, "Partition key path %q is not valid: each segment must be a property name", p)
		}
	}
	return segs, nil
}
