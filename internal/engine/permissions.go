package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/rid"
)

// A permission lets its user read (mode Read) or read and write (mode All) the items of one
// container, or of one partition key of it. It lives in its user's record (users.go). The
// gateway issues resource tokens for it and checks every request that carries one against
// the permission's Grant as it is now, so deleting or narrowing a permission (or deleting
// its user or database) takes effect at once.
//
// A permission is bound to the container its resource link named when it was created or
// last replaced, by rid: a container deleted and created again under the same id is another
// container, which the permission does not grant.

// PermissionMode is what a permission allows: "All" or "Read".
type PermissionMode string

// The permission modes, spelled as Cosmos returns them.
const (
	ModeAll  PermissionMode = "All"
	ModeRead PermissionMode = "Read"
)

var permissionModes = []string{string(ModeAll), string(ModeRead)}

// PermissionSpec is what a client gives of a permission.
type PermissionSpec struct {
	ID string
	// Mode is "All" or "Read", in any case (the JavaScript SDK sends "all" and "read").
	Mode string
	// Resource is the link of a container of the user's database: dbs/{db}/colls/{coll} by
	// ids, or by rids as in the container's _self. It is kept as given.
	Resource string
	// PartitionKey limits the permission to one partition key value of the container (or,
	// for a hierarchical key, to every value under a prefix); nil or empty: the whole
	// container.
	PartitionKey epk.Key
}

// PermissionInfo is a permission as clients see it.
type PermissionInfo struct {
	Resource
	Mode         PermissionMode
	Link         string  // the resource link as given
	PartitionKey epk.Key // nil for the whole container
	Grant        Grant
}

// Grant is what a permission grants. Its fields are what a resource token vouches for; a
// token is honoured only while its permission's Grant is still the same.
type Grant struct {
	Permission   rid.Permission
	Container    rid.Container
	Mode         PermissionMode
	PartitionKey epk.Key // nil: every partition key of the container
}

// Granted reports whether g grants this container.
func (c *Container) Granted(g Grant) bool { return c.rid == g.Container }

// permissionRecord is a permission as its user's record keeps it.
type permissionRecord struct {
	ID       string         `json:"id"`
	Num      uint64         `json:"num"` // in the rid; never reused in the user
	Mode     PermissionMode `json:"mode"`
	Resource string         `json:"resource"`
	// Container is the number of the container the resource named (in its rid).
	Container    uint32           `json:"container"`
	PartitionKey []keyValueRecord `json:"partitionKey,omitempty"`
	TS           int64            `json:"ts"`
	Version      uint64           `json:"version"`
}

// keyValueRecord is one value of a partition key as a record keeps it.
type keyValueRecord struct {
	Kind epk.Kind `json:"k"`
	Num  float64  `json:"n,omitempty"`
	Str  string   `json:"s,omitempty"`
}

func keyRecord(k epk.Key) []keyValueRecord {
	if len(k) == 0 {
		return nil
	}
	out := make([]keyValueRecord, len(k))
	for i, v := range k {
		out[i] = keyValueRecord{Kind: v.Kind, Num: v.Num, Str: v.Str}
	}
	return out
}

func (r permissionRecord) key() epk.Key {
	if len(r.PartitionKey) == 0 {
		return nil
	}
	k := make(epk.Key, len(r.PartitionKey))
	for i, v := range r.PartitionKey {
		k[i] = epk.Value{Kind: v.Kind, Num: v.Num, Str: v.Str}
	}
	return k
}

func (u *User) permissionOf(r permissionRecord) PermissionInfo {
	id := rid.ForPermission(u.rid, r.Num).String()
	return PermissionInfo{
		Resource: Resource{ID: r.ID, RID: id, Self: "dbs/" + u.db.rid.String() + "/users/" + u.rid.String() + "/permissions/" + id + "/",
			ETag: versionETag(r.Version), TS: r.TS},
		Mode: r.Mode, Link: r.Resource, PartitionKey: r.key(), Grant: u.grantOf(r),
	}
}

func (u *User) grantOf(r permissionRecord) Grant {
	return Grant{Permission: rid.ForPermission(u.rid, r.Num), Container: rid.ForContainer(u.db.rid, r.Container), Mode: r.Mode, PartitionKey: r.key()}
}

// checkPermission validates a spec and resolves its resource in the user's database. Callers
// hold e.mu.
func (u *User) checkPermission(s *PermissionSpec) (*Container, error) {
	if err := document.ValidateID(s.ID); err != nil {
		return nil, err
	}
	mode, ok := spelled(s.Mode, permissionModes)
	if !ok {
		return nil, fault.New(fault.BadRequest, "The permissionMode %q of permission %q is not valid; it must be All or Read", s.Mode, s.ID)
	}
	s.Mode = mode
	c, err := u.db.resolveContainerLink(s.Resource)
	if err != nil {
		return nil, err
	}
	if len(s.PartitionKey) == 0 {
		s.PartitionKey = nil
		return c, nil
	}
	// The key must be one the container can hold (or, for a hierarchical key, a prefix).
	if _, err := c.KeyRange(s.PartitionKey); err != nil {
		return nil, fault.New(fault.BadRequest, "The resourcePartitionKey of permission %q does not fit container %q: %s", s.ID, c.rec.ID, fault.From(err).Message)
	}
	return c, nil
}

// resolveContainerLink finds the container a permission's resource link names. Callers hold
// e.mu.
func (d *Database) resolveContainerLink(link string) (*Container, error) {
	segs := strings.Split(strings.Trim(link, "/"), "/")
	if len(segs) != 4 || segs[0] != "dbs" || segs[1] == "" || segs[2] != "colls" || segs[3] == "" {
		return nil, fault.New(fault.BadRequest, "The resource %q of a permission must be the link of a container, dbs/{database}/colls/{container} by ids or by rids; Partita grants containers (or one partition key of one), not databases, items or scripts", link)
	}
	switch segs[1] {
	case d.rec.ID:
		if c := d.containers[segs[3]]; c != nil {
			return c, nil
		}
	case d.rid.String():
		for _, c := range d.containers {
			if c.rid.String() == segs[3] {
				return c, nil
			}
		}
	default:
		return nil, fault.New(fault.BadRequest, "The resource %q of a permission must be a container of the user's database %q", link, d.rec.ID)
	}
	return nil, fault.New(fault.NotFound, "The resource %q of the permission does not exist: database %q has no such container", link, d.rec.ID)
}

// samePartitionKey reports whether two keys are the same value by value.
func samePartitionKey(a, b epk.Key) bool { return len(a) == len(b) && a.HasPrefix(b) }

// findPermission finds a permission in u.rec for a change, checking ifMatch. Callers hold e.mu.
func (u *User) findPermission(id, ifMatch string) (int, error) {
	i := slices.IndexFunc(u.rec.Permissions, func(r permissionRecord) bool { return r.ID == id })
	if i < 0 {
		return 0, permissionNotFound(u.rec.ID, id)
	}
	if err := checkVersion(fmt.Sprintf("permission %q", id), u.rec.Permissions[i].Version, ifMatch); err != nil {
		return 0, err
	}
	return i, nil
}

func permissionNotFound(user, id string) error {
	return fault.New(fault.NotFound, "Permission %q of user %q does not exist", id, user)
}

// checkUnique refuses a permission of the user, other than the one at skip (-1: none), that
// already has the id of r, or grants the same container and partition key: Cosmos gives a
// user one permission per resource.
func (u *User) checkUnique(r permissionRecord, skip int) error {
	for i, o := range u.rec.Permissions {
		if i == skip {
			continue
		}
		if o.ID == r.ID {
			return fault.New(fault.Conflict, "Permission %q of user %q already exists", r.ID, u.rec.ID)
		}
		if o.Container == r.Container && samePartitionKey(o.key(), r.key()) {
			return fault.New(fault.Conflict, "User %q already has permission %q for resource %q with that partition key; a user has one permission per resource", u.rec.ID, o.ID, r.Resource)
		}
	}
	return nil
}

// CreatePermission gives a user a permission.
func (e *Engine) CreatePermission(dbID, userID string, s PermissionSpec) (PermissionInfo, error) {
	return writeUser(e, dbID, userID, func(u *User) (PermissionInfo, error) { return e.createPermission(u, s) })
}

// ReplacePermission replaces the permission id of a user whole, when ifMatch is empty or its
// current etag; s.ID may rename it. Tokens it issued before stop working unless it grants
// the same as before.
func (e *Engine) ReplacePermission(dbID, userID, id string, s PermissionSpec, ifMatch string) (PermissionInfo, error) {
	return writeUser(e, dbID, userID, func(u *User) (PermissionInfo, error) {
		i, err := u.findPermission(id, ifMatch)
		if err != nil {
			return PermissionInfo{}, err
		}
		return e.replacePermission(u, i, s)
	})
}

// UpsertPermission creates a permission, or replaces the one with its id. created says which.
func (e *Engine) UpsertPermission(dbID, userID string, s PermissionSpec) (p PermissionInfo, created bool, err error) {
	p, err = writeUser(e, dbID, userID, func(u *User) (PermissionInfo, error) {
		if i := slices.IndexFunc(u.rec.Permissions, func(r permissionRecord) bool { return r.ID == s.ID }); i >= 0 {
			created = false
			return e.replacePermission(u, i, s)
		}
		p, err := e.createPermission(u, s)
		created = err == nil
		return p, err
	})
	return p, created, err
}

// createPermission adds a permission to u. Callers hold e.mu.
func (e *Engine) createPermission(u *User, s PermissionSpec) (PermissionInfo, error) {
	c, err := u.checkPermission(&s)
	if err != nil {
		return PermissionInfo{}, err
	}
	rec := u.rec
	r := permissionRecord{ID: s.ID, Num: rec.NextPermission + 1, Mode: PermissionMode(s.Mode), Resource: s.Resource,
		Container: c.rec.Num, PartitionKey: keyRecord(s.PartitionKey)}
	if err := u.checkUnique(r, -1); err != nil {
		return PermissionInfo{}, err
	}
	rec.NextPermission = r.Num
	r.TS, r.Version = now(), e.nextVersion()
	rec.Permissions = append(slices.Clip(rec.Permissions), r) // a new array: u.rec keeps its own until the write succeeds
	if err := e.saveUser(u, rec); err != nil {
		return PermissionInfo{}, err
	}
	return u.permissionOf(r), nil
}

// replacePermission replaces u's permission at i. Callers hold e.mu.
func (e *Engine) replacePermission(u *User, i int, s PermissionSpec) (PermissionInfo, error) {
	c, err := u.checkPermission(&s)
	if err != nil {
		return PermissionInfo{}, err
	}
	r := permissionRecord{ID: s.ID, Num: u.rec.Permissions[i].Num, Mode: PermissionMode(s.Mode), Resource: s.Resource,
		Container: c.rec.Num, PartitionKey: keyRecord(s.PartitionKey)}
	if err := u.checkUnique(r, i); err != nil {
		return PermissionInfo{}, err
	}
	r.TS, r.Version = now(), e.nextVersion()
	rec := u.rec
	rec.Permissions = slices.Clone(rec.Permissions)
	rec.Permissions[i] = r
	if err := e.saveUser(u, rec); err != nil {
		return PermissionInfo{}, err
	}
	return u.permissionOf(r), nil
}

// Permission returns a permission of a user.
func (e *Engine) Permission(dbID, userID, id string) (PermissionInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	u, err := e.user(dbID, userID)
	if err != nil {
		return PermissionInfo{}, err
	}
	i, err := u.findPermission(id, "")
	if err != nil {
		return PermissionInfo{}, err
	}
	return u.permissionOf(u.rec.Permissions[i]), nil
}

// Permissions lists a user's permissions in creation order.
func (e *Engine) Permissions(dbID, userID string) ([]PermissionInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	u, err := e.user(dbID, userID)
	if err != nil {
		return nil, err
	}
	out := make([]PermissionInfo, len(u.rec.Permissions))
	for i, r := range u.rec.Permissions {
		out[i] = u.permissionOf(r)
	}
	return out, nil
}

// DeletePermission deletes a permission of a user, when ifMatch is empty or its current etag.
// The resource tokens it issued stop working with it.
func (e *Engine) DeletePermission(dbID, userID, id, ifMatch string) error {
	_, err := writeUser(e, dbID, userID, func(u *User) (struct{}, error) {
		i, err := u.findPermission(id, ifMatch)
		if err != nil {
			return struct{}{}, err
		}
		rec := u.rec
		rec.Permissions = slices.Delete(slices.Clone(rec.Permissions), i, i+1)
		e.nextVersion() // the catalog changed; its version says so
		return struct{}{}, e.saveUser(u, rec)
	})
	return err
}

// Grant returns what the permission with rid p grants now: NotFound once it, its user or its
// database is deleted. The gateway calls it for every request that carries a resource token.
func (e *Engine) Grant(p rid.Permission) (Grant, error) {
	db, user, n := p.Parts()
	e.mu.RLock()
	defer e.mu.RUnlock()
	if u := e.users[user]; u != nil && u.db.rec.Num == db {
		for _, r := range u.rec.Permissions {
			if r.Num == n {
				return u.grantOf(r), nil
			}
		}
	}
	return Grant{}, fault.New(fault.NotFound, "The permission %s no longer exists", p)
}
