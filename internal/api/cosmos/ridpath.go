package cosmos

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/rid"
)

// Paths by resource id. Besides names (dbs/{db}/colls/{container}/docs/{id}), a client may
// address resources by the _self links the service returns, made of resource ids
// (dbs/{rid}/colls/{rid}/docs/{rid}): older SDKs do, the Python SDK 3.x among them. As the
// service, Partita reads a path as rid-based when its database segment is a database's
// resource id (eight characters of base64, four bytes). Such a request is signed over the
// resource id of what it names (of its parent, for a feed), in lower case, as the SDKs sign
// it; once the signature is checked, each id segment is replaced by the name of the resource
// it identifies, so that the rest of the gateway serves the request as if it named them.

// byRID marks res as rid-based when its database segment is the resource id of a database,
// and sets the link its signature covers. A segment shaped like a resource id that is neither
// a database's id nor a database's name is a link to a deleted resource, or a name that names
// nothing: res keeps the name reading and the rid link beside it, and the signature decides
// (authenticate).
func (h *Handler) byRID(res resource) resource {
	s := res.segs
	if len(s) < 2 || s[0] != "dbs" || len(s[1]) != 8 {
		return res
	}
	if b, ok := rid.Decode(s[1]); !ok || len(b) != 4 {
		return res
	}
	if _, err := h.engine.DatabaseByRID(s[1]); err != nil {
		if _, err := h.engine.Database(s[1]); err != nil {
			res.ridLink = ridLinkOf(s)
		}
		return res // a database named like a resource id, or none: by name
	}
	res.link, res.byRID = ridLinkOf(s), true
	return res
}

// ridLinkOf is the link a request for an rid-based path is signed over: the resource id of
// what the path names, or of a feed's parent, in lower case.
func ridLinkOf(s []string) string {
	last := len(s) - 1
	if len(s)%2 == 1 {
		last--
	}
	return strings.ToLower(s[last])
}

// authenticate checks the request's signature (keyring.authenticate), or one over the
// path's other resource type (res.altType), and returns the path as it is to be read. A path whose rid-shaped database segment names no database (res.ridLink)
// is read by resource id when the request is signed over the rid link, as clients sign the
// _self links they kept: resolveRIDs then answers 404, as the service does for a deleted
// resource's link, where the name reading would refuse the signature with 401.
func (h *Handler) authenticate(r *http.Request, res resource) (resource, error) {
	now := h.now()
	err := h.keys.authenticate(r, res, now)
	if err != nil && res.altType != "" && errors.Is(err, fault.Unauthorized) {
		alt := res
		alt.typ = res.altType
		if h.keys.authenticate(r, alt, now) == nil {
			return res, nil
		}
	}
	if err == nil || res.ridLink == "" || !errors.Is(err, fault.Unauthorized) {
		return res, err
	}
	alt := res
	alt.link, alt.byRID, alt.ridLink = res.ridLink, true, ""
	if h.keys.authenticate(r, alt, now) == nil {
		return alt, nil
	}
	return res, err
}

// resolveRIDs replaces the resource ids of an rid-based path by the names of the resources
// they identify: 404 when one identifies none under its parent. The segments are replaced as
// they resolve, so that a 404 can tell which owner is missing (notfound.go).
func (c *call) resolveRIDs() error {
	s := slices.Clone(c.res.segs)
	c.res.segs = s
	eng := c.h.engine
	var err error
	if s[1], err = eng.DatabaseByRID(s[1]); err != nil {
		return err
	}
	if len(s) >= 4 {
		switch s[2] {
		case "colls":
			s[3], err = eng.ContainerByRID(s[1], s[3])
		case "users":
			s[3], err = eng.UserByRID(s[1], s[3])
		}
		if err != nil {
			return err
		}
	}
	if len(s) >= 6 && s[2] == "users" && s[4] == "permissions" {
		if s[5], err = eng.PermissionByRID(s[1], s[3], s[5]); err != nil {
			return err
		}
	}
	if len(s) >= 6 && s[2] == "colls" {
		ct, err := eng.Container(s[1], s[3])
		if err != nil {
			return err
		}
		switch s[4] {
		case "docs":
			key, err := c.partitionKey(ct)
			if err != nil {
				return err
			}
			if s[5], _, err = ct.ItemIDByRID(key, s[5]); err != nil {
				return err
			}
		case "sprocs", "triggers", "udfs":
			if s[5], err = ct.ScriptByRID(c.scriptKind(), s[5]); err != nil {
				return err
			}
		}
	}
	return nil
}
