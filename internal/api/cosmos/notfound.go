package cosmos

import (
	"errors"
	"net/http"

	"github.com/partita-db/partita/internal/fault"
)

// What a 404 carries besides its body, as the service sends it.
//
// When what the request addresses is missing because a resource that owns it is (its
// database, its container, or the user of a permission), the 404 carries substatus 1003,
// OwnerResourceNotFound: an item read under a deleted container is then told from a missing
// item, as clients do (the SDKs drop their cached container on it). A read of a database or
// container that does not exist, under an owner that does, carries none.
//
// A point operation on an item that does not exist carries the session token of the
// partition that would hold it: the SDKs merge the token of a 404 (every one but 404/1002),
// and a client that then writes the item and reads it elsewhere needs to have seen that
// partition's LSN. No other 404 names a partition; it carries no token.

// notFound is the substatus of the request's 404 (0 or subOwnerResourceNotFound), and sets the
// session token of one for a missing item.
func (c *call) notFound() int {
	if c.ownerMissing() {
		return subOwnerResourceNotFound
	}
	c.setItemSession()
	return 0
}

// ownerMissing reports whether a database, container or user that owns what the path names is
// missing. The path's segments are names, or, for a path by resource id whose resolution
// failed, names up to the segment that names nothing and resource ids from there on; looked
// up as names those find nothing, which is right: what they identify is missing.
func (c *call) ownerMissing() bool {
	s := c.res.segs
	owners := len(s) / 2 // (kind, id) pairs that own the addressed resource
	if len(s)%2 == 0 {
		owners-- // the last pair is the resource itself
	}
	if owners < 1 || s[0] != "dbs" {
		return false
	}
	eng := c.h.engine
	missing := func(err error) bool { return errors.Is(err, fault.NotFound) }
	if _, err := eng.Database(s[1]); missing(err) {
		return true
	}
	if owners < 2 {
		return false
	}
	switch s[2] {
	case "colls":
		_, err := eng.ContainerInfo(s[1], s[3])
		return missing(err)
	case "users":
		_, err := eng.User(s[1], s[3])
		return missing(err)
	}
	return false
}

// setItemSession sets, on the 404 of a point operation on an item, the session token of the
// partition its key routes to.
func (c *call) setItemSession() {
	switch c.r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return
	}
	s := c.res.segs
	if len(s) != 6 || s[0] != "dbs" || s[2] != "colls" || s[4] != "docs" {
		return
	}
	ct, err := c.h.engine.Container(s[1], s[3])
	if err != nil {
		return
	}
	key, err := c.partitionKey(ct)
	if err != nil {
		return
	}
	if id, lsn := ct.Session(key); lsn > 0 { // 0: the partition is held elsewhere, its LSN unknown here
		c.w.Header()["x-ms-session-token"] = []string{c.sessionToken(id, lsn)}
	}
}
