package cosmos

import (
	"net/http"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/ru"
)

// A database's users: dbs/{db}/users[/{user}]. A user holds permissions (permissions.go) and
// nothing else; replacing one renames it, as in Cosmos.

func userJSON(u engine.UserInfo) map[string]any {
	return map[string]any{"id": u.ID, "_rid": u.RID, "_self": u.Self, "_etag": quoted(u.ETag), "_ts": u.TS, "_permissions": "permissions/"}
}

func (c *call) userReply(code int, u engine.UserInfo) error {
	return c.replyResource(code, u.ETag, userJSON(u))
}

// readUserBody reads the body of a create or replace: its id; system properties are ignored.
func (c *call) readUserBody() (string, error) {
	var b struct {
		ID string `json:"id"`
	}
	err := c.decodeJSON(&b)
	return b.ID, err
}

// createUser creates a user, or with x-ms-documentdb-is-upsert replaces the one with its id.
func (c *call) createUser() error {
	id, err := c.readUserBody()
	if err != nil {
		return err
	}
	var u engine.UserInfo
	created := true
	if isTrue(c.r.Header.Get("X-Ms-Documentdb-Is-Upsert")) {
		u, created, err = c.h.engine.UpsertUser(c.res.segs[1], id)
	} else {
		u, err = c.h.engine.CreateUser(c.res.segs[1], id)
	}
	if err != nil {
		return err
	}
	c.charge = ru.CatalogWrite()
	if created {
		return c.userReply(http.StatusCreated, u)
	}
	return c.userReply(http.StatusOK, u)
}

func (c *call) readUser() error {
	u, err := c.h.engine.User(c.res.segs[1], c.res.segs[3])
	if err != nil {
		return err
	}
	c.charge = ru.Catalog()
	return c.userReply(http.StatusOK, u)
}

// replaceUser gives the user the body's id, which may be a new one.
func (c *call) replaceUser() error {
	id, err := c.readUserBody()
	if err != nil {
		return err
	}
	u, err := c.h.engine.ReplaceUser(c.res.segs[1], c.res.segs[3], id, c.ifMatch())
	if err != nil {
		return err
	}
	c.charge = ru.CatalogWrite()
	return c.userReply(http.StatusOK, u)
}

func (c *call) deleteUser() error {
	if err := c.h.engine.DeleteUser(c.res.segs[1], c.res.segs[3], c.ifMatch()); err != nil {
		return err
	}
	c.charge = ru.CatalogWrite()
	c.reply(http.StatusNoContent, nil)
	return nil
}

func (c *call) listUsers() error {
	db, err := c.h.engine.Database(c.res.segs[1])
	if err != nil {
		return err
	}
	users, err := c.h.engine.Users(c.res.segs[1])
	if err != nil {
		return err
	}
	lo, hi, err := c.page(len(users), func(i int) string { return users[i].ID })
	if err != nil {
		return err
	}
	list := []map[string]any{}
	for _, u := range users[lo:hi] {
		list = append(list, userJSON(u))
	}
	c.charge = ru.Catalog()
	return c.replyJSON(http.StatusOK, map[string]any{"_rid": db.RID, "Users": list, "_count": len(list)})
}

func (c *call) queryUsers() error {
	users, err := c.h.engine.Users(c.res.segs[1])
	if err != nil {
		return err
	}
	docs := make([]map[string]any, len(users))
	for i, u := range users {
		docs[i] = userJSON(u)
	}
	return c.querySlice("Users", docs)
}
