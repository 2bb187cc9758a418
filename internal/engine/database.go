package engine

import (
	"encoding/json"
	"fmt"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/rid"
)

// Database is a database of the account. Its record changes only under Engine.mu.
type Database struct {
	rec        databaseRecord
	rid        rid.Database
	containers map[string]*Container
	// awaited are containers this node of a cluster holds no replica of yet, by id; they
	// join containers once their replicas have come (placement.go).
	awaited map[string]*Container
	users   map[string]*User // by id (users.go)
}

func newDatabase(r databaseRecord) *Database {
	return &Database{rec: r, rid: rid.ForDatabase(r.Num), containers: map[string]*Container{}, awaited: map[string]*Container{},
		users: map[string]*User{}}
}

// DatabaseInfo is a database as clients see it.
type DatabaseInfo struct {
	Resource
	Throughput *Throughput // shared by its containers; nil when none
	// Meta is a CQL keyspace's options and types (CreateKeyspace); nil for other databases.
	Meta json.RawMessage
}

func (d *Database) info() DatabaseInfo {
	return DatabaseInfo{Resource: databaseResource(d.rec), Throughput: d.rec.Throughput, Meta: d.rec.Meta}
}

func (e *Engine) database(id string) (*Database, error) {
	if e.closed {
		return nil, fault.New(fault.Unavailable, "The server is shutting down")
	}
	d := e.dbs[id]
	if d == nil {
		return nil, fault.New(fault.NotFound, "Database %q does not exist", id)
	}
	return d, nil
}

// writeDatabase runs change, under e.mu, on database dbID as of now (freshWrite): change
// writes the catalog.
func writeDatabase[T any](e *Engine, dbID string, change func(d *Database) (T, error)) (T, error) {
	return freshWritten(e, func() (T, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		d, err := e.database(dbID)
		if err != nil {
			var zero T
			return zero, err
		}
		return change(d)
	})
}

// CreateDatabase creates a database, optionally with throughput shared by its containers.
func (e *Engine) CreateDatabase(id string, shared *Throughput) (DatabaseInfo, error) {
	return e.createDatabase(id, shared, nil)
}

// CreateKeyspace creates a database that is a CQL keyspace: meta holds what the CQL engine
// keeps about it (its options and user types), and is what tells keyspaces apart.
func (e *Engine) CreateKeyspace(id string, meta json.RawMessage) (DatabaseInfo, error) {
	if meta == nil {
		return DatabaseInfo{}, fault.New(fault.BadRequest, "A keyspace needs its metadata")
	}
	return e.createDatabase(id, nil, meta)
}

func (e *Engine) createDatabase(id string, shared *Throughput, meta json.RawMessage) (DatabaseInfo, error) {
	if err := document.ValidateID(id); err != nil {
		return DatabaseInfo{}, err
	}
	if shared != nil {
		if err := shared.validate(); err != nil {
			return DatabaseInfo{}, err
		}
		if shared.IsZero() {
			shared = nil
		}
	}
	return freshWritten(e, func() (DatabaseInfo, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.closed {
			return DatabaseInfo{}, fault.New(fault.Unavailable, "The server is shutting down")
		}
		if e.dbs[id] != nil {
			return DatabaseInfo{}, fault.New(fault.Conflict, "Database %q already exists", id)
		}
		seq := e.seq
		e.seq.NextDB++
		rec := databaseRecord{ID: id, Num: e.seq.NextDB, Throughput: shared, TS: now(), Version: e.nextVersion(), Meta: meta}
		if err := e.persist(catalog.Databases, rec.Num, rec); err != nil {
			e.seq = seq
			return DatabaseInfo{}, err
		}
		d := newDatabase(rec)
		e.dbs[id] = d
		return d.info(), nil
	})
}

// Database returns a database.
func (e *Engine) Database(id string) (DatabaseInfo, error) {
	return missFresh(e, func() (DatabaseInfo, error) { return e.databaseInfo(id) })
}

func (e *Engine) databaseInfo(id string) (DatabaseInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	d, err := e.database(id)
	if err != nil {
		return DatabaseInfo{}, err
	}
	return d.info(), nil
}

// Databases lists the databases by id.
func (e *Engine) Databases() []DatabaseInfo {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make([]DatabaseInfo, 0, len(e.dbs))
	for _, id := range sortedKeys(e.dbs) {
		out = append(out, e.dbs[id].info())
	}
	return out
}

// DeleteDatabase deletes a database with all its containers and their items, and its users
// with their permissions. ifMatch, when not empty, is the etag the database must have.
func (e *Engine) DeleteDatabase(id, ifMatch string) error {
	return e.freshWrite(func() error {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.deleteDatabase(id, ifMatch)
	})
}

// deleteDatabase is DeleteDatabase against the catalog this node holds. Callers hold e.mu.
func (e *Engine) deleteDatabase(id, ifMatch string) error {
	d, err := e.database(id)
	if err != nil {
		return err
	}
	if err := checkVersion(fmt.Sprintf("database %q", id), d.rec.Version, ifMatch); err != nil {
		return err
	}
	e.nextVersion() // the catalog changed; its version says so
	b := e.db.NewBatch()
	defer b.Close()
	dels := []catalog.Key{{Kind: catalog.Databases, Num: d.rec.Num}}
	for _, c := range d.containers {
		dels = append(dels, catalog.Key{Kind: catalog.Containers, Num: c.rec.Num})
		if err := c.deleteData(b); err != nil {
			return fault.New(fault.Internal, "%w", err)
		}
	}
	for _, u := range d.users {
		dels = append(dels, catalog.Key{Kind: catalog.Users, Num: u.rec.Num})
	}
	ch, err := e.change(dels...)
	if err != nil {
		return fault.New(fault.Internal, "%w", err)
	}
	err = e.commitDeletion(ch, b, func() {
		for _, c := range d.containers {
			c.close()
		}
	})
	if err != nil {
		return err
	}
	delete(e.dbs, id)
	for _, c := range d.containers {
		e.hold.drop(c)
	}
	for _, u := range d.users {
		delete(e.users, u.rec.Num)
	}
	return nil
}
