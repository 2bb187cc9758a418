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
	for _, d := range e.Databases() {
		if d.RID == r {
			return d.ID, nil
		}
	}
	return "", ridNotFound("database", r)
}

// ContainerByRID is the id of database dbID's container whose resource id is r.
func (e *Engine) ContainerByRID(dbID, r string) (string, error) {
	cs, err := e.Containers(dbID)
	if err != nil {
		return "", err
	}
	for _, c := range cs {
		if c.RID == r {
			return c.ID, nil
		}
	}
	return "", ridNotFound("container", r)
}

// UserByRID is the id of database dbID's user whose resource id is r.
func (e *Engine) UserByRID(dbID, r string) (string, error) {
	us, err := e.Users(dbID)
	if err != nil {
		return "", err
	}
	for _, u := range us {
		if u.RID == r {
			return u.ID, nil
		}
	}
	return "", ridNotFound("user", r)
}

// PermissionByRID is the id of the user's permission whose resource id is r.
func (e *Engine) PermissionByRID(dbID, userID, r string) (string, error) {
	ps, err := e.Permissions(dbID, userID)
	if err != nil {
		return "", err
	}
	for _, p := range ps {
		if p.RID == r {
			return p.ID, nil
		}
	}
	return "", ridNotFound("permission", r)
}

// ScriptByRID is the id of the container's script of a kind whose resource id is r.
func (c *Container) ScriptByRID(kind ScriptKind, r string) (string, error) {
	for _, s := range c.Scripts(kind) {
		if s.RID == r {
			return s.ID, nil
		}
	}
	return "", ridNotFound("script", r)
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
		return "", res.Charge, ridNotFound("document", r)
	}
	return res.Results[0].Str(), res.Charge, nil
}

func ridNotFound(what, r string) error {
	return fault.New(fault.NotFound, "Resource Not Found: no %s has the resource id %q", what, r)
}
