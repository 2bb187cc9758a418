package engine

import (
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/value"
)

// Lookups by resource id, for requests that address resources by their _self links
// (dbs/{rid}/colls/{rid}/docs/{rid}) rather than by name: each finds the id (the name) of the
// resource whose _rid is r, among its parent's; fault.NotFound when there is none.

// DatabaseByRID is the id of the database whose resource id is r.
func (e *Engine) DatabaseByRID(r string) (string, error) {
	return idByRID(e.Databases(), nil, func(d DatabaseInfo) (string, string) { return d.ID, d.RID }, "database", r)
}

// ContainerByRID is the id of database dbID's container whose resource id is r.
func (e *Engine) ContainerByRID(dbID, r string) (string, error) {
	cs, err := e.Containers(dbID)
	return idByRID(cs, err, func(c ContainerInfo) (string, string) { return c.ID, c.RID }, "container", r)
}

// UserByRID is the id of database dbID's user whose resource id is r.
func (e *Engine) UserByRID(dbID, r string) (string, error) {
	us, err := e.Users(dbID)
	return idByRID(us, err, func(u UserInfo) (string, string) { return u.ID, u.RID }, "user", r)
}

// PermissionByRID is the id of the user's permission whose resource id is r.
func (e *Engine) PermissionByRID(dbID, userID, r string) (string, error) {
	ps, err := e.Permissions(dbID, userID)
	return idByRID(ps, err, func(p PermissionInfo) (string, string) { return p.ID, p.RID }, "permission", r)
}

// ScriptByRID is the id of the container's script of a kind whose resource id is r.
func (c *Container) ScriptByRID(kind ScriptKind, r string) (string, error) {
	return idByRID(c.Scripts(kind), nil, func(s Script) (string, string) { return s.ID, s.RID }, "script", r)
}

// idByRID is the id of the element of list (listed with err) whose resource id is r.
func idByRID[T any](list []T, err error, ids func(T) (id, rid string), what, r string) (string, error) {
	if err != nil {
		return "", err
	}
	for _, x := range list {
		if id, rid := ids(x); rid == r {
			return id, nil
		}
	}
	return "", fault.New(fault.NotFound, "Resource Not Found: no %s has the resource id %q", what, r)
}

// ridOfItem finds an item by the _rid it was stored with.
var ridOfItem = func() *query.Prepared {
	p, err := query.Prepare("SELECT VALUE c.id FROM c WHERE c._rid = @rid")
	if err != nil {
		panic(err)
	}
	return p
}()

// ItemIDByRID is the id of the item of logical partition key whose resource id is r. It reads
// the logical partition's items (the one lookup that reads data), wherever the partition is.
func (c *Container) ItemIDByRID(key epk.Key, r string) (string, float64, error) {
	kr, err := c.KeyRange(key)
	if err != nil {
		return "", 0, err
	}
	res, err := c.Query(ridOfItem, kr, query.Options{Params: map[string]value.Value{"@rid": value.Str(r)}})
	if err != nil {
		return "", res.Charge, err
	}
	if len(res.Results) == 0 || res.Results[0].Kind() != value.String {
		return "", res.Charge, fault.New(fault.NotFound, "Resource Not Found: no document has the resource id %q", r)
	}
	return res.Results[0].Str(), res.Charge, nil
}
