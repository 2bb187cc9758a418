package engine

import (
	"encoding/json"
	"fmt"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/storage"
)

// The catalog is persisted as one JSON record per database, per container and per user (with
// its permissions, users.go), written with a synced batch on every change, and read whole at
// start-up.

type databaseRecord struct {
	ID         string      `json:"id"`
	Num        uint32      `json:"num"` // in the database's rid; never reused
	Throughput *Throughput `json:"throughput,omitempty"`
	TS         int64       `json:"ts"`
	Version    uint64      `json:"version"` // catalog version of the last change; the etag derives from it
	// Meta is what a front end keeps about the database, opaque to the engine: a CQL
	// keyspace's options and user types (internal/cqlexec). Absent for Cosmos databases.
	Meta json.RawMessage `json:"meta,omitempty"`
}

type containerRecord struct {
	ID           string          `json:"id"`
	DB           uint32          `json:"db"`
	Num          uint32          `json:"num"` // in storage keys and the rid; never reused
	PartitionKey PartitionKeyDef `json:"partitionKey"`
	Throughput   *Throughput     `json:"throughput,omitempty"`
	// Ranges are the live physical partitions; they tile [epk.Min, epk.Max) in order.
	Ranges      []rangeRecord   `json:"ranges"`
	NextRangeID uint32          `json:"nextRangeId"`
	Indexing    json.RawMessage `json:"indexingPolicy,omitempty"`
	TS          int64           `json:"ts"`
	Version     uint64          `json:"version"`
	// DefaultTTL is the default time to live: nil off, -1 on without default, else seconds.
	DefaultTTL *int64 `json:"defaultTtl,omitempty"`
	// UniqueKeys is the unique key policy as given at creation, re-encoded; absent for none.
	// It never changes.
	UniqueKeys json.RawMessage `json:"uniqueKeyPolicy,omitempty"`
	// Scripts are the container's stored procedures, triggers and user-defined functions, in
	// creation order (scripts.go). They live here so that they are loaded, split and deleted
	// with the container; every change to the record (splits, policies) carries them along.
	Scripts []scriptRecord `json:"scripts,omitempty"`
	// NextScript is the number in the rid of the last script created; never reused.
	NextScript uint64 `json:"nextScript,omitempty"`
	// Meta is what a front end keeps about the container, opaque to the engine: a CQL
	// table's schema (internal/cqlexec). It is set exactly for tables (PartitionKey.Kind
	// "Murmur3"), whose rows the front end places itself (rows.go).
	Meta json.RawMessage `json:"meta,omitempty"`
}

type rangeRecord struct {
	ID      uint32   `json:"id"`
	Min     string   `json:"min"` // hex EPK
	Max     string   `json:"max"` // hex EPK
	Parents []uint32 `json:"parents,omitempty"`
}

func (r rangeRecord) epkRange() (epk.Range, error) {
	lo, err := epk.ParseHex(r.Min)
	if err != nil {
		return epk.Range{}, err
	}
	hi, err := epk.ParseHex(r.Max)
	return epk.Range{Min: lo, Max: hi}, err
}

// catalogSeq holds counters that must never go back, so numbers are never reused after deletes.
type catalogSeq struct {
	NextDB        uint32 `json:"nextDb"`
	NextContainer uint32 `json:"nextContainer"`
	NextUser      uint32 `json:"nextUser,omitempty"`
	Version       uint64 `json:"version"`
}

func putJSON(b *storage.Batch, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Set(key, data)
}

// catalogRecords are the catalog's records as stored.
type catalogRecords struct {
	seq        catalogSeq
	databases  []databaseRecord
	containers []containerRecord
	users      []userRecord
}

func loadCatalog(db *storage.DB) (recs catalogRecords, err error) {
	v, err := db.GetCopy(nil, storage.CatalogSeqKey())
	switch {
	case err == nil:
		if err = json.Unmarshal(v, &recs.seq); err != nil {
			return recs, fmt.Errorf("catalog counters: %w", err)
		}
	case !storage.IsNotFound(err):
		return recs, err
	}
	if err := scanRecords(db, storage.CatalogDatabase, func(d databaseRecord) { recs.databases = append(recs.databases, d) }); err != nil {
		return recs, err
	}
	if err := scanRecords(db, storage.CatalogContainer, func(c containerRecord) { recs.containers = append(recs.containers, c) }); err != nil {
		return recs, err
	}
	err = scanRecords(db, storage.CatalogUser, func(u userRecord) { recs.users = append(recs.users, u) })
	return recs, err
}

func scanRecords[T any](db *storage.DB, kind byte, fn func(T)) error {
	lo, hi := storage.CatalogSpan(kind)
	it, err := db.NewIter(lo, hi)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		var rec T
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			return fmt.Errorf("catalog record %x: %w", it.Key(), err)
		}
		fn(rec)
	}
	return it.Error()
}

// persist writes one catalog record with the counters, synced. Callers hold e.mu.
func (e *Engine) persist(key []byte, rec any) error {
	b := e.db.NewBatch()
	defer b.Close()
	err := putJSON(b, storage.CatalogSeqKey(), e.seq)
	if err == nil {
		err = putJSON(b, key, rec)
	}
	if err == nil {
		err = b.Commit()
	}
	if err != nil {
		return fault.New(fault.Unavailable, "Storage failed to commit: %v", err)
	}
	return nil
}
