package engine

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/storage"
)

// The catalog is persisted as one JSON record per database, per container and per user (with
// its permissions, users.go), kept in a catalog.Backend: every change writes the counters and
// the records it changes, synced, and the whole is read at start-up.

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
	// VectorPolicy and FullTextPolicy are the search policies as given at creation,
	// re-encoded (search.go); absent for none. They never change.
	VectorPolicy   json.RawMessage `json:"vectorEmbeddingPolicy,omitempty"`
	FullTextPolicy json.RawMessage `json:"fullTextPolicy,omitempty"`
	// FullTextTerms is set at creation by a build whose partitions write the entries of
	// full-text indexes. A container without it was created before: its partitions rebuild
	// those entries unless their own record says they hold them (partition.Config.OlderFullText).
	FullTextTerms bool `json:"fullTextTerms,omitempty"`
	// SystemPaths is set at creation by a build whose partitions index id and _ts whatever
	// the indexing policy says (indexing.AlwaysIndexed). A container without it was created
	// before: its partitions rebuild those entries unless their own record says they hold
	// them (partition.Config.OlderSystemPaths).
	SystemPaths bool `json:"systemPaths,omitempty"`
	// Scripts are the container's stored procedures, triggers and user-defined functions, in
	// creation order (scripts.go). They live here so that they are loaded, split and deleted
	// with the container; every change to the record (splits, policies) carries them along.
	Scripts []scriptRecord `json:"scripts,omitempty"`
	// NextScript is the number in the rid of the last script created; never reused.
	NextScript uint64 `json:"nextScript,omitempty"`
	// KeyDeletes are the logical partitions whose items are being deleted (keydelete.go), in
	// the order asked; absent for none. A release before cluster version v3 does not know
	// them, so none is asked before the cluster is there.
	KeyDeletes []keyDeleteRecord `json:"keyDeletes,omitempty"`
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
	// Members, in a cluster, are the replicas the range's group was bootstrapped with, which
	// every node bootstraps alike; the group's own descriptor says where they are after.
	Members []replication.Member `json:"members,omitempty"`
	// Share is the range's part of its container's own throughput once it was redistributed
	// (redistribute.go): either every range of a container has one, and they add up to 1, or
	// none has, and the throughput is divided evenly.
	Share float64 `json:"share,omitempty"`
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

// catalogRecords are the catalog's records as stored.
type catalogRecords struct {
	rev        int64 // the catalog's revision (catalog.Contents)
	seq        catalogSeq
	databases  []databaseRecord
	containers []containerRecord
	users      []userRecord
}

func loadCatalog(store catalog.Backend) (recs catalogRecords, err error) {
	cur, err := store.Load()
	if err != nil {
		return recs, err
	}
	recs.rev = cur.Revision
	if cur.Counters != nil {
		if err = json.Unmarshal(cur.Counters, &recs.seq); err != nil {
			return recs, fmt.Errorf("catalog counters: %w", err)
		}
	}
	for _, r := range cur.Records {
		switch r.Kind {
		case catalog.Databases:
			err = decodeRecord(r, &recs.databases)
		case catalog.Containers:
			err = decodeRecord(r, &recs.containers)
		case catalog.Users:
			err = decodeRecord(r, &recs.users)
		}
		if err != nil {
			return recs, err
		}
	}
	return recs, nil
}

func decodeRecord[T any](r catalog.Record, into *[]T) error {
	var rec T
	if err := json.Unmarshal(r.Value, &rec); err != nil {
		return fmt.Errorf("catalog record %s: %w", r.Key, err)
	}
	*into = append(*into, rec)
	return nil
}

// change is a catalog change that writes the counters and deletes dels. Callers hold e.mu.
func (e *Engine) change(dels ...catalog.Key) (catalog.Change, error) {
	counters, err := json.Marshal(e.seq)
	return catalog.Change{Counters: counters, Delete: dels}, err
}

// changeRecord is a catalog change that writes the counters and rec as the record of kind and
// num. Callers hold e.mu.
func (e *Engine) changeRecord(kind catalog.Kind, num uint32, rec any) (catalog.Change, error) {
	ch, err := e.change()
	if err != nil {
		return ch, err
	}
	v, err := json.Marshal(rec)
	ch.Put = []catalog.Record{{Key: catalog.Key{Kind: kind, Num: num}, Value: v}}
	return ch, err
}

// persist writes one catalog record with the counters, synced. Callers hold e.mu.
func (e *Engine) persist(kind catalog.Kind, num uint32, rec any) error {
	ch, err := e.changeRecord(kind, num, rec)
	if err != nil {
		return fault.New(fault.Internal, "%w", err)
	}
	return e.commitCatalog(ch, nil)
}

// commitCatalog commits ch, and with it data, writes of the node's own storage (nil for none):
// in one synced batch on a single node; in a cluster, ch in the cluster's catalog first, if
// it has not changed since this node last read it, then data. Callers hold e.mu.
func (e *Engine) commitCatalog(ch catalog.Change, data *storage.Batch) error {
	var err error
	switch {
	case e.local != nil && data != nil:
		err = e.local.Stage(data, ch)
		if err == nil {
			err = data.Commit()
		}
	case e.local != nil:
		_, err = e.local.Commit(ch)
	default:
		if err = e.commitCluster(ch); err != nil {
			// Not committed, or not known to be: the catalog's counters are those it holds,
			// and a change that did commit comes back through follow.
			e.seq = e.seqAt
			if errors.Is(err, catalog.ErrStale) {
				return errCatalogMoved
			}
		} else if data != nil {
			err = data.Commit()
		}
	}
	if err != nil {
		return fault.New(fault.Unavailable, "Storage failed to commit: %v", err)
	}
	return nil
}

// commitDeletion commits ch, which deletes containers from the catalog, with data, the
// deletion of their data (commitCatalog), and closes them with closeAll before data commits,
// so that no write queued on them lands after it. On a node of a cluster the catalog commits
// first: a change another node made meanwhile (errCatalogMoved) leaves the containers open
// and serving, and once it has committed the containers are gone, so data failing to commit
// leaves only rows nothing reads (container numbers are never reused), which is logged.
// Callers hold e.mu.
func (e *Engine) commitDeletion(ch catalog.Change, data *storage.Batch, closeAll func()) error {
	if e.cluster == nil {
		closeAll()
		return e.commitCatalog(ch, data)
	}
	if err := e.commitCatalog(ch, nil); err != nil {
		return err
	}
	closeAll()
	if err := data.Commit(); err != nil {
		e.log.Warn("deleting the data of deleted containers", "err", err)
	}
	return nil
}

// errCatalogMoved is commitCatalog's answer, on a node of a cluster, when another node changed
// the catalog since this node last read it: nothing was committed. freshWrite catches up and
// decides again; a client sees it only when that keeps failing.
var errCatalogMoved = fault.New(fault.Unavailable, "The catalog changed on another node meanwhile; retry the request")

// commitCluster commits ch in the cluster's catalog if the catalog has not changed since this
// node last read it (catalog.ErrStale otherwise), and records that the node holds the result.
// Callers hold e.mu.
func (e *Engine) commitCluster(ch catalog.Change) error {
	ch.After = e.rev
	rev, err := e.catalog.Commit(ch)
	if err == nil {
		e.caughtUp(rev)
	}
	return err
}
