package engine

import (
	"fmt"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/rid"
)

// A database's users are catalog resources: one record per user, which also holds the user's
// permissions in creation order (permissions.go), as a container's record holds its scripts.
// They change under Engine.mu with a synced write and a new catalog version (their etag), and
// go with their database. A user is only a name that permissions hang off: it has no
// credentials of its own; the gateway hands out resource tokens for its permissions.

// User is a user of a database. Its record changes only under Engine.mu.
type User struct {
	rec userRecord
	rid rid.User
	db  *Database
}

// userRecord is a user as the catalog keeps it.
type userRecord struct {
	ID      string `json:"id"`
	DB      uint32 `json:"db"`
	Num     uint32 `json:"num"` // in the rid; unique in the account and never reused
	TS      int64  `json:"ts"`
	Version uint64 `json:"version"` // catalog version of the last change; the etag derives from it
	// Permissions are the user's permissions in creation order.
	Permissions []permissionRecord `json:"permissions,omitempty"`
	// NextPermission is the number in the rid of the last permission created; never reused.
	NextPermission uint64 `json:"nextPermission,omitempty"`
}

// maxUsers is how many users an account can ever create: a user's number is the low 31 bits
// of the second half of its rid (the high bit would make it a container's).
const maxUsers = 1<<31 - 1

// UserInfo is a user as clients see it.
type UserInfo struct {
	Resource
}

func (u *User) info() UserInfo {
	id := u.rid.String()
	return UserInfo{Resource{ID: u.rec.ID, RID: id, Self: "dbs/" + u.db.rid.String() + "/users/" + id + "/",
		ETag: versionETag(u.rec.Version), TS: u.rec.TS}}
}

// addUser makes a user of d from its record and indexes it. Callers hold e.mu.
func (e *Engine) addUser(d *Database, r userRecord) *User {
	u := &User{rec: r, rid: rid.ForUser(d.rid, r.Num), db: d}
	d.users[r.ID] = u
	e.users[r.Num] = u
	return u
}

// user finds a user. Callers hold e.mu.
func (e *Engine) user(dbID, id string) (*User, error) {
	d, err := e.database(dbID)
	if err != nil {
		return nil, err
	}
	u := d.users[id]
	if u == nil {
		return nil, fault.New(fault.NotFound, "User %q does not exist in database %q", id, dbID)
	}
	return u, nil
}

// writeUser runs change, under e.mu, on user userID of database dbID as of now (freshWrite):
// change writes the user's record.
func writeUser[T any](e *Engine, dbID, userID string, change func(u *User) (T, error)) (T, error) {
	return freshWritten(e, func() (T, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		u, err := e.user(dbID, userID)
		if err != nil {
			var zero T
			return zero, err
		}
		return change(u)
	})
}

// changeUser finds a user for a change, checking ifMatch (empty: no condition). Callers hold
// e.mu.
func (e *Engine) changeUser(dbID, id, ifMatch string) (*User, error) {
	u, err := e.user(dbID, id)
	if err != nil {
		return nil, err
	}
	if err := checkVersion(fmt.Sprintf("user %q", id), u.rec.Version, ifMatch); err != nil {
		return nil, err
	}
	return u, nil
}

// saveUser writes a user's new record, synced. Callers hold e.mu and have advanced the
// catalog version.
func (e *Engine) saveUser(u *User, rec userRecord) error {
	if err := e.persist(catalog.Users, rec.Num, rec); err != nil {
		return err
	}
	u.rec = rec
	return nil
}

// CreateUser creates a user in a database: Conflict when one has its id.
func (e *Engine) CreateUser(dbID, id string) (UserInfo, error) {
	if err := document.ValidateID(id); err != nil {
		return UserInfo{}, err
	}
	return writeDatabase(e, dbID, func(d *Database) (UserInfo, error) { return e.createUser(d, id) })
}

// createUser adds user id to d. Callers hold e.mu.
func (e *Engine) createUser(d *Database, id string) (UserInfo, error) {
	if d.users[id] != nil {
		return UserInfo{}, fault.New(fault.Conflict, "User %q already exists in database %q", id, d.rec.ID)
	}
	if e.seq.NextUser >= maxUsers {
		return UserInfo{}, fault.New(fault.Forbidden, "The account has created %d users, as many as user ids can number", maxUsers)
	}
	seq := e.seq
	e.seq.NextUser++
	rec := userRecord{ID: id, DB: d.rec.Num, Num: e.seq.NextUser, TS: now(), Version: e.nextVersion()}
	if err := e.persist(catalog.Users, rec.Num, rec); err != nil {
		e.seq = seq
		return UserInfo{}, err
	}
	return e.addUser(d, rec).info(), nil
}

// UpsertUser creates a user, or replaces the one with its id (which changes only its etag
// and timestamp: a user has nothing else to replace). created says which.
func (e *Engine) UpsertUser(dbID, id string) (info UserInfo, created bool, err error) {
	if err := document.ValidateID(id); err != nil {
		return UserInfo{}, false, err
	}
	info, err = writeDatabase(e, dbID, func(d *Database) (UserInfo, error) {
		if u := d.users[id]; u != nil {
			created = false
			return e.replaceUser(u, id)
		}
		info, err := e.createUser(d, id)
		created = err == nil
		return info, err
	})
	return info, created, err
}

// User returns a user.
func (e *Engine) User(dbID, id string) (UserInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	u, err := e.user(dbID, id)
	if err != nil {
		return UserInfo{}, err
	}
	return u.info(), nil
}

// Users lists a database's users by id.
func (e *Engine) Users(dbID string) ([]UserInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	d, err := e.database(dbID)
	if err != nil {
		return nil, err
	}
	out := make([]UserInfo, 0, len(d.users))
	for _, id := range sortedKeys(d.users) {
		out = append(out, d.users[id].info())
	}
	return out, nil
}

// ReplaceUser replaces a user, when ifMatch is empty or its current etag. Its id is the only
// thing a user has to replace, as in Cosmos: newID renames it (Conflict when another user has
// that id). Its permissions, and the tokens they issued, stay valid: they name the user by
// rid.
func (e *Engine) ReplaceUser(dbID, id, newID, ifMatch string) (UserInfo, error) {
	if err := document.ValidateID(newID); err != nil {
		return UserInfo{}, err
	}
	return freshWritten(e, func() (UserInfo, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		u, err := e.changeUser(dbID, id, ifMatch)
		if err != nil {
			return UserInfo{}, err
		}
		return e.replaceUser(u, newID)
	})
}

// replaceUser gives u the id newID (which may be its own). Callers hold e.mu.
func (e *Engine) replaceUser(u *User, newID string) (UserInfo, error) {
	old := u.rec.ID
	if newID != old && u.db.users[newID] != nil {
		return UserInfo{}, fault.New(fault.Conflict, "User %q already exists in database %q", newID, u.db.rec.ID)
	}
	rec := u.rec
	rec.ID, rec.TS, rec.Version = newID, now(), e.nextVersion()
	if err := e.saveUser(u, rec); err != nil {
		return UserInfo{}, err
	}
	delete(u.db.users, old)
	u.db.users[newID] = u
	return u.info(), nil
}

// DeleteUser deletes a user with its permissions, when ifMatch is empty or its current etag.
// The resource tokens its permissions issued stop working with it.
func (e *Engine) DeleteUser(dbID, id, ifMatch string) error {
	return e.freshWrite(func() error {
		e.mu.Lock()
		defer e.mu.Unlock()
		u, err := e.changeUser(dbID, id, ifMatch)
		if err != nil {
			return err
		}
		e.nextVersion() // the catalog changed; its version says so
		ch, err := e.change(catalog.Key{Kind: catalog.Users, Num: u.rec.Num})
		if err == nil {
			err = e.commitCatalog(ch, nil)
		}
		if err != nil {
			return err
		}
		delete(u.db.users, id)
		delete(e.users, u.rec.Num)
		return nil
	})
}
