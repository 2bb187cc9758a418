package cosmos

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/ru"
)

// A user's permissions: dbs/{db}/users/{user}/permissions[/{id}]. Every answer that shows a
// permission carries a fresh resource token (_token) for it, valid for
// x-ms-documentdb-expiry-seconds (resourcetoken.go).

func (c *call) permissionJSON(p engine.PermissionInfo, now time.Time, lifetime time.Duration) map[string]any {
	out := map[string]any{
		"id": p.ID, "permissionMode": p.Mode, "resource": p.Link,
		"_rid": p.RID, "_self": p.Self, "_etag": quoted(p.ETag), "_ts": p.TS,
		"_token": c.h.keys.tokens.issue(p.Grant, now, lifetime),
	}
	if len(p.PartitionKey) > 0 {
		out["resourcePartitionKey"] = json.RawMessage(partitionKeyJSON(p.PartitionKey))
	}
	return out
}

func (c *call) permissionReply(code int, p engine.PermissionInfo, lifetime time.Duration) error {
	return c.replyResource(code, p.ETag, c.permissionJSON(p, c.h.now(), lifetime))
}

// readPermissionBody reads the body of a create or replace; system properties are ignored.
// resourcePartitionKey is a JSON array like the partition key header (a single value may
// stand alone, as the JavaScript SDK's types allow); absent, null or [] for the whole
// container.
func (c *call) readPermissionBody() (engine.PermissionSpec, error) {
	var b struct {
		ID                   string          `json:"id"`
		PermissionMode       string          `json:"permissionMode"`
		Resource             string          `json:"resource"`
		ResourcePartitionKey json.RawMessage `json:"resourcePartitionKey"`
	}
	if err := c.decodeJSON(&b); err != nil {
		return engine.PermissionSpec{}, err
	}
	s := engine.PermissionSpec{ID: b.ID, Mode: b.PermissionMode, Resource: b.Resource}
	pk := bytes.TrimSpace(b.ResourcePartitionKey)
	if len(pk) == 0 || string(pk) == "null" {
		return s, nil
	}
	text := string(pk)
	if pk[0] != '[' {
		text = "[" + text + "]"
	}
	key, err := parsePartitionKey(text)
	if err != nil {
		return s, fault.New(fault.BadRequest, "The resourcePartitionKey %s of permission %q is not a partition key: send a JSON array such as [\"value\"]", pk, b.ID)
	}
	s.PartitionKey = key
	return s, nil
}

// createPermission creates a permission, or with x-ms-documentdb-is-upsert replaces the one
// with its id.
func (c *call) createPermission() error {
	lifetime, err := tokenLifetime(c.r)
	if err != nil {
		return err
	}
	s, err := c.readPermissionBody()
	if err != nil {
		return err
	}
	var p engine.PermissionInfo
	created := true
	if isTrue(c.r.Header.Get("X-Ms-Documentdb-Is-Upsert")) {
		p, created, err = c.h.engine.UpsertPermission(c.res.segs[1], c.res.segs[3], s)
	} else {
		p, err = c.h.engine.CreatePermission(c.res.segs[1], c.res.segs[3], s)
	}
	if err != nil {
		return err
	}
	c.charge = ru.CatalogWrite()
	if created {
		return c.permissionReply(http.StatusCreated, p, lifetime)
	}
	return c.permissionReply(http.StatusOK, p, lifetime)
}

func (c *call) readPermission() error {
	lifetime, err := tokenLifetime(c.r)
	if err != nil {
		return err
	}
	p, err := c.h.engine.Permission(c.res.segs[1], c.res.segs[3], c.res.segs[5])
	if err != nil {
		return err
	}
	c.charge = ru.Catalog()
	return c.permissionReply(http.StatusOK, p, lifetime)
}

// replacePermission replaces a permission whole; the body's id may rename it.
func (c *call) replacePermission() error {
	lifetime, err := tokenLifetime(c.r)
	if err != nil {
		return err
	}
	s, err := c.readPermissionBody()
	if err != nil {
		return err
	}
	p, err := c.h.engine.ReplacePermission(c.res.segs[1], c.res.segs[3], c.res.segs[5], s, c.ifMatch())
	if err != nil {
		return err
	}
	c.charge = ru.CatalogWrite()
	return c.permissionReply(http.StatusOK, p, lifetime)
}

func (c *call) deletePermission() error {
	if err := c.h.engine.DeletePermission(c.res.segs[1], c.res.segs[3], c.res.segs[5], c.ifMatch()); err != nil {
		return err
	}
	c.charge = ru.CatalogWrite()
	c.reply(http.StatusNoContent, nil)
	return nil
}

// permissionResources are the user's permissions in creation order, with the user.
func (c *call) permissionResources() (engine.UserInfo, []engine.PermissionInfo, error) {
	u, err := c.h.engine.User(c.res.segs[1], c.res.segs[3])
	if err != nil {
		return u, nil, err
	}
	list, err := c.h.engine.Permissions(c.res.segs[1], c.res.segs[3])
	return u, list, err
}

// listPermissions answers the feed of a user's permissions in creation order, each with a
// fresh token. Pages are cut by rid, which grows with creation, so a continuation survives
// deletes.
func (c *call) listPermissions() error {
	lifetime, err := tokenLifetime(c.r)
	if err != nil {
		return err
	}
	u, list, err := c.permissionResources()
	if err != nil {
		return err
	}
	lo, hi, err := c.page(len(list), func(i int) string { return string(list[i].Grant.Permission[:]) })
	if err != nil {
		return err
	}
	now := c.h.now()
	out := []map[string]any{}
	for _, p := range list[lo:hi] {
		out = append(out, c.permissionJSON(p, now, lifetime))
	}
	c.charge = ru.Catalog()
	return c.replyJSON(http.StatusOK, map[string]any{"_rid": u.RID, "Permissions": out, "_count": len(out)})
}

func (c *call) queryPermissions() error {
	lifetime, err := tokenLifetime(c.r)
	if err != nil {
		return err
	}
	_, list, err := c.permissionResources()
	if err != nil {
		return err
	}
	now := c.h.now()
	docs := make([]map[string]any, len(list))
	for i, p := range list {
		docs[i] = c.permissionJSON(p, now, lifetime)
	}
	return c.querySlice("Permissions", docs)
}
