package engine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/rid"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/uniquekey"
)

// Container is an open container. Its partition key definition never changes; its partitions
// are published as an immutable routing table that is swapped whole when they change.
type Container struct {
	e   *Engine
	db  *Database
	rec containerRecord // changes only under Engine.mu
	def PartitionKeyDef // fixed at creation; readable without the lock
	id  string          // the container's id, c.rec.ID, readable without the lock
	num uint32          // the container's number, c.rec.Num, readable without the lock
	// ttl is the default time to live as partitions take it (ttlSetting of c.rec.DefaultTTL),
	// and deleting the logical partitions being deleted (keyDeletesOf c.rec), readable
	// without the lock.
	ttl      atomic.Int64
	deleting atomic.Pointer[map[epk.EPK]uint64]
	// session is what this node showed clients of each partition (consistency.go).
	session nodeSession
	// keyValues are the key values of logical partitions the metrics named (keyvalues.go).
	keyValues keyValues
	rid       rid.Container
	scheme    epk.Scheme
	paths     [][]string // the partition key paths, split into segments
	routes    atomic.Pointer[routing]
	// splitMu is held shared by every request and exclusively by a split, which therefore
	// never runs under a request, and delays requests without failing them.
	splitMu   sync.RWMutex
	splitOne  sync.Mutex  // held for the whole of a split: one split of a container at a time
	splitting atomic.Bool // a background split is running for this container
	// index is the indexing policy writes follow. A policy change stores it while it holds
	// splitMu exclusively (reindex.go), so a request sees one policy throughout.
	index atomic.Pointer[indexing.Policy]
	// reindexing is set while a goroutine rebuilds the container's index (reindex.go).
	reindexing atomic.Bool
	// olderSystemPaths is set for a container created before partitions indexed id and _ts
	// whatever the policy (containerRecord.SystemPaths): its partitions rebuild those entries.
	olderSystemPaths bool
	// unique is the unique key policy; fixed at creation, nil for none.
	unique *uniquekey.Policy
	// search are the vector embedding and full-text policies; fixed at creation.
	search searchPolicies
	// locks serializes scripts' transactions against the other writes to their logical
	// partitions.
	locks lockTable
	// scripts are the container's scripts as of c.rec, for lookups without the lock (scripts.go).
	scripts atomic.Pointer[scriptSet]
	// queries are the query texts recently run, for the partition key advisor (querylog.go).
	queries queryLog
	// have, while the container awaits replicas this node does not hold (errAway), are the
	// partitions of those it holds, by range id.
	have map[uint32]*partition.Partition
}

// policy is the indexing policy writes follow.
func (c *Container) policy() *indexing.Policy { return c.index.Load() }

// routing maps EPKs to partitions: parts and remote, each sorted by range, together tile
// [epk.Min, epk.Max).
type routing struct {
	// parts are this node's replicas of the container's partitions, in range order.
	parts []*partition.Partition
	// remote, on a node of a cluster that places each partition on some of the nodes only
	// (Cluster.Replicas), are the ranges of the partitions this node holds no replica of, in
	// range order (remote.go). Together with parts they tile the key space.
	remote []remoteRange
}

// lookup is this node's replica of the partition that owns e; nil when another node holds it
// (remoteAt).
func (r *routing) lookup(e epk.EPK) *partition.Partition {
	i := sort.Search(len(r.parts), func(i int) bool { return e < r.parts[i].Range().Max })
	if i == len(r.parts) || e < r.parts[i].Range().Min {
		return nil
	}
	return r.parts[i]
}

// remoteAt is the range held on other nodes that e falls in, if any.
func (r *routing) remoteAt(e epk.EPK) (remoteRange, bool) {
	i := sort.Search(len(r.remote), func(i int) bool { return e < r.remote[i].r.Max })
	if i == len(r.remote) || e < r.remote[i].r.Min {
		return remoteRange{}, false
	}
	return r.remote[i], true
}

// ContainerSpec is what a client asks for when creating a container.
type ContainerSpec struct {
	ID           string
	PartitionKey PartitionKeyDef
	Throughput   *Throughput     // nil: shared database throughput, or the default
	Indexing     json.RawMessage // the indexing policy as given; nil for the default
	DefaultTTL   *int64          // time to live: nil off, -1 on without default, else seconds
	UniqueKeys   json.RawMessage // the uniqueKeyPolicy as given; nil for none
	// VectorPolicy and FullTextPolicy are the vectorEmbeddingPolicy and fullTextPolicy as
	// given; nil for none.
	VectorPolicy, FullTextPolicy json.RawMessage
	// Meta, for a CQL table (PartitionKey.Kind TableKind), is its schema as the CQL engine
	// keeps it; nil for every other container.
	Meta json.RawMessage
}

// ContainerInfo is a container as clients see it.
type ContainerInfo struct {
	Resource
	PartitionKey PartitionKeyDef
	Throughput   *Throughput // its own; nil when it uses its database's
	Indexing     json.RawMessage
	Partitions   []PartitionInfo
	// RangeGeneration changes whenever the set of partitions changes; it is the etag of the
	// container's partition key ranges.
	RangeGeneration uint32
	DefaultTTL      *int64 // nil: time to live off
	// UniqueKeys is the unique key policy, as Cosmos returns it ({"uniqueKeys":[]} for none).
	UniqueKeys json.RawMessage
	// VectorPolicy and FullTextPolicy are the search policies (search.go); nil for none.
	VectorPolicy, FullTextPolicy json.RawMessage
	// IndexProgress is the percentage of items that follow the indexing policy: 100 unless
	// a rebuild after a policy change is in flight (reindex.go).
	IndexProgress int
	// Meta is a CQL table's schema (ContainerSpec.Meta); nil for other containers.
	Meta json.RawMessage
}

// PartitionInfo describes one physical partition (partition key range) of a container.
type PartitionInfo struct {
	ID      uint32
	Range   epk.Range
	Parents []uint32
	PartitionStats
}

func (c *Container) info() ContainerInfo {
	dbRID := c.db.rid.String()
	self := "dbs/" + dbRID + "/colls/" + c.rid.String() + "/"
	info := ContainerInfo{
		Resource:        Resource{ID: c.rec.ID, RID: c.rid.String(), Self: self, ETag: versionETag(c.rec.Version), TS: c.rec.TS},
		PartitionKey:    c.rec.PartitionKey,
		Throughput:      c.rec.Throughput,
		Indexing:        c.rec.Indexing,
		RangeGeneration: c.rec.NextRangeID,
		DefaultTTL:      c.rec.DefaultTTL,
		UniqueKeys:      c.unique.JSON(),
		VectorPolicy:    c.search.vectors.JSON(),
		FullTextPolicy:  c.search.fullText.JSON(),
		IndexProgress:   c.indexProgress(),
		Meta:            c.rec.Meta,
	}
	parents := map[uint32][]uint32{}
	for _, r := range c.rec.Ranges {
		parents[r.ID] = r.Parents
	}
	rt := c.routes.Load()
	for _, p := range rt.parts {
		info.Partitions = append(info.Partitions, PartitionInfo{ID: p.ID(), Range: p.Range(), Parents: parents[p.ID()], PartitionStats: statsOf(p)})
	}
	if len(rt.remote) > 0 {
		// Held on other nodes: their figures are theirs (below, once gathered).
		for _, rr := range rt.remote {
			info.Partitions = append(info.Partitions, PartitionInfo{ID: rr.id, Range: rr.r, Parents: parents[rr.id]})
		}
		slices.SortFunc(info.Partitions, func(a, b PartitionInfo) int { return cmp.Compare(a.Range.Min, b.Range.Min) })
	}
	if f := c.e.clusterFigures(); f != nil {
		// Sizes as every node reports them (x-ms-resource-usage); the LSN of a partition held
		// here stays its replica's, which this node's reads and session tokens go by.
		for i := range info.Partitions {
			pi := &info.Partitions[i]
			pf := f.parts[replica.Group(c.num, pi.ID)]
			if pf == nil {
				continue
			}
			pi.Items, pi.Bytes = pf.Items, pf.Bytes
			if rt.lookup(pi.Range.Min) == nil {
				pi.LSN = pf.LSN
			}
		}
	}
	return info
}

// CreateContainer creates a container in database dbID with as many physical partitions as
// Cosmos would give it for its throughput, and at least Options.MinPartitions. Either way they
// are created as Cosmos creates them: ids 0..n-1, no parents, the hash space split evenly.
func (e *Engine) CreateContainer(dbID string, spec ContainerSpec) (ContainerInfo, error) {
	return freshWritten(e, func() (ContainerInfo, error) { return e.createContainer(dbID, spec) })
}

// createContainer is CreateContainer against the catalog this node holds.
func (e *Engine) createContainer(dbID string, spec ContainerSpec) (ContainerInfo, error) {
	if err := document.ValidateID(spec.ID); err != nil {
		return ContainerInfo{}, err
	}
	pk, err := spec.PartitionKey.normalize()
	if err != nil {
		return ContainerInfo{}, err
	}
	if (pk.Kind == TableKind) != (spec.Meta != nil) {
		return ContainerInfo{}, fault.New(fault.BadRequest, "Partition key kind %q is not supported; use \"Hash\" or \"MultiHash\"", pk.Kind)
	}
	if spec.Throughput != nil {
		if err := spec.Throughput.validate(); err != nil {
			return ContainerInfo{}, err
		}
		if pk.SystemKey && max(spec.Throughput.Manual, spec.Throughput.AutoscaleMax) > MaxNonPartitionedThroughput {
			return ContainerInfo{}, fault.New(fault.BadRequest, "A container without a partition key is created with at most %d RU/s; give it a partition key for more, or raise its throughput once it is created", MaxNonPartitionedThroughput)
		}
	}
	if len(spec.Indexing) > 0 && !json.Valid(spec.Indexing) {
		return ContainerInfo{}, fault.New(fault.BadRequest, "The indexing policy is not valid JSON")
	}
	pol, err := indexing.Parse(spec.Indexing)
	if err != nil {
		return ContainerInfo{}, err
	}
	if err := checkDefaultTTL(spec.DefaultTTL); err != nil {
		return ContainerInfo{}, err
	}
	if err := checkTTLIndexed(pol, spec.DefaultTTL); err != nil {
		return ContainerInfo{}, err
	}
	uniqueKeys, err := uniqueKeysRecord(spec.UniqueKeys)
	if err != nil {
		return ContainerInfo{}, err
	}
	search, err := parseSearchPolicies(spec.VectorPolicy, spec.FullTextPolicy)
	if err != nil {
		return ContainerInfo{}, err
	}
	if err := search.checkSearchIndexes(pol); err != nil {
		return ContainerInfo{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	d, err := e.database(dbID)
	if err != nil {
		return ContainerInfo{}, err
	}
	if d.containers[spec.ID] != nil || d.awaited[spec.ID] != nil {
		return ContainerInfo{}, fault.New(fault.Conflict, "Container %q already exists in database %q", spec.ID, dbID)
	}
	own := spec.Throughput
	var shared Throughput
	if d.rec.Throughput != nil {
		shared = *d.rec.Throughput
	}
	if (own == nil || own.IsZero()) && shared.IsZero() {
		own = &Throughput{Manual: DefaultThroughput}
	}
	if own != nil && own.IsZero() {
		own = nil
	}
	var ownT Throughput
	if own != nil {
		ownT = *own
	}
	seq := e.seq
	e.seq.NextContainer++
	rec := containerRecord{
		ID: spec.ID, DB: d.rec.Num, Num: e.seq.NextContainer, PartitionKey: pk, Throughput: own,
		Indexing: spec.Indexing, TS: now(), Version: e.nextVersion(), DefaultTTL: spec.DefaultTTL,
		UniqueKeys: uniqueKeys, Meta: spec.Meta,
		VectorPolicy: search.vectors.JSON(), FullTextPolicy: search.fullText.JSON(), FullTextTerms: true,
		SystemPaths: true,
	}
	var members []replication.Member
	if e.cluster != nil {
		if members, err = e.placement(); err != nil {
			e.seq = seq
			return ContainerInfo{}, err
		}
	}
	n := max(initialPartitions(ownT, shared), e.opts.MinPartitions)
	if pk.SystemKey {
		n = 1 // a non-partitioned container's one partition
	}
	for i, r := range epk.InitialRanges(pk.Scheme(), n) {
		rec.Ranges = append(rec.Ranges, rangeRecord{ID: uint32(i), Min: r.Min.Hex(), Max: r.Max.Hex(), Members: members})
	}
	rec.NextRangeID = uint32(len(rec.Ranges))
	c, err := e.hold.create(d, rec, func() { e.seq = seq })
	if err != nil {
		return ContainerInfo{}, err
	}
	d.containers[spec.ID] = c
	e.refreshBudgets()
	return c.info(), nil
}

// openContainer opens a container and its partitions (replicated, bootstrapping a group for
// each that has none). On a node of a cluster that holds no replica of some of its ranges
// yet, it returns errAway with c among the containers d awaits (placement.go).
func (e *Engine) openContainer(d *Database, rec containerRecord) (*Container, error) {
	c, err := e.newContainer(d, rec)
	if err != nil {
		return nil, err
	}
	if err := c.openPartitions(); errors.Is(err, errAway) {
		e.await(c)
		return c, err
	} else if err != nil {
		c.e.hold.forget(c)
		return nil, err
	}
	return c, nil
}

// newContainer makes the container of rec, without its partitions (openPartitions).
func (e *Engine) newContainer(d *Database, rec containerRecord) (*Container, error) {
	c := &Container{e: e, db: d, rec: rec, def: rec.PartitionKey, id: rec.ID, num: rec.Num, rid: rid.ForContainer(d.rid, rec.Num),
		scheme: rec.PartitionKey.Scheme()}
	c.ttl.Store(ttlSetting(rec.DefaultTTL))
	gone := keyDeletesOf(rec)
	c.deleting.Store(&gone)
	pol, err := indexing.Parse(rec.Indexing)
	if err != nil {
		return nil, err
	}
	pol = tablePolicy(rec, pol) // rows.go
	if c.unique, err = uniquekey.Parse(rec.UniqueKeys); err != nil {
		return nil, err
	}
	if c.search, err = parseSearchPolicies(rec.VectorPolicy, rec.FullTextPolicy); err != nil {
		return nil, err
	}
	c.search.olderFullText = !rec.FullTextTerms
	c.olderSystemPaths = !rec.SystemPaths
	c.index.Store(pol)
	c.scripts.Store(c.newScriptSet(rec.Scripts))
	for _, p := range rec.PartitionKey.Paths {
		segs, err := document.SplitKeyPath(p)
		if err != nil {
			return nil, err
		}
		c.paths = append(c.paths, segs)
	}
	e.hold.register(c)
	return c, nil
}

// openPartitions opens the partitions of the container's ranges and publishes their routing.
//
// On a node of a cluster that holds no replica of some ranges, it publishes an empty routing
// table and returns errAway, with the partitions it holds in c.have.
func (c *Container) openPartitions() error {
	rt := &routing{}
	away := false
	for _, r := range c.rec.Ranges {
		er, err := r.epkRange()
		if err != nil {
			return err
		}
		if kids := c.e.hold.tiling(c, er); kids != nil {
			rt.parts = append(rt.parts, kids...)
			continue
		}
		p, err := c.e.hold.open(c, r)
		if errors.Is(err, errAway) && c.e.cluster.Replicas > 0 {
			// Placed on other nodes: requests for it go there (remote.go).
			rt.remote = append(rt.remote, remoteRange{id: r.ID, r: er})
			continue
		}
		if errors.Is(err, errAway) {
			away = true
			continue
		}
		if err != nil {
			c.e.hold.abandon(rt.parts)
			return err
		}
		rt.parts = append(rt.parts, p)
	}
	if away {
		c.have = map[uint32]*partition.Partition{}
		for _, p := range rt.parts {
			c.have[p.ID()] = p
		}
		c.routes.Store(&routing{})
		return errAway
	}
	c.e.hold.publish(c, rt)
	return nil
}

// PartitionKeyPaths are the container's partition key paths ("/pk").
func (c *Container) PartitionKeyPaths() []string { return c.rec.PartitionKey.Paths }

// Unsplit reports whether the container has one physical partition.
func (c *Container) Unsplit() bool {
	rt := c.routes.Load()
	return rt != nil && len(rt.parts)+len(rt.remote) == 1
}

// partitionConfig is what opens the partition of one of the container's ranges. It reads no
// field that changes under Engine.mu (a replica is opened on the host's goroutine, see
// replicas.go).
func (c *Container) partitionConfig(r rangeRecord) (partition.Config, error) {
	er, err := r.epkRange()
	if err != nil {
		return partition.Config{}, fmt.Errorf("container %q range %d: %w", c.id, r.ID, err)
	}
	return partition.Config{
		DB: c.e.db, Container: c.num, ID: r.ID, Range: er, ContainerRID: c.rid,
		SelfPrefix:       "dbs/" + c.db.rid.String() + "/colls/" + c.rid.String() + "/docs/",
		MaxLogicalBytes:  c.e.opts.MaxLogicalPartitionBytes,
		Index:            c.policy(),
		KeepImages:       c.e.opts.ChangeFeedRetention > 0,
		DefaultTTL:       c.ttl.Load(),
		KeyDeletes:       *c.deleting.Load(),
		Now:              c.e.unixClock(),
		Unique:           c.unique,
		Vectors:          c.search.vectors,
		FullText:         c.search.fullText,
		OlderFullText:    c.search.olderFullText,
		OlderSystemPaths: c.olderSystemPaths,
		// A node of the earlier build may lead the partition's group in a cluster that is
		// upgraded node by node (partition.Partition.IndexTrusted).
		DistrustSystemPaths: c.olderSystemPaths && c.e.cluster != nil,
	}, nil
}

func (c *Container) close() {
	if rt := c.routes.Load(); rt != nil {
		for _, p := range rt.parts {
			p.Close()
		}
	}
}

// deleteData adds to b the deletion of all the container's data, which commits with its
// record's deletion (commitCatalog).
func (c *Container) deleteData(b *storage.Batch) error {
	for _, span := range storage.ContainerSpans(c.rec.Num) {
		if err := b.DeleteRange(span.Start, span.End); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) container(dbID, id string) (*Container, error) {
	d, err := e.database(dbID)
	if err != nil {
		return nil, err
	}
	c := d.containers[id]
	if c == nil {
		if d.awaited[id] != nil {
			return nil, fault.New(fault.Unavailable, "This node has not received its replicas of container %q yet; retry, or send the request to another node", id)
		}
		return nil, fault.New(fault.NotFound, "Container %q does not exist in database %q", id, dbID)
	}
	return c, nil
}

// Container returns an open container for item operations. A CQL table is not one: its rows
// are read and written through the CQL engine (Table).
func (e *Engine) Container(dbID, id string) (*Container, error) {
	return missFresh(e, func() (*Container, error) { return e.openedContainer(dbID, id) })
}

func (e *Engine) openedContainer(dbID, id string) (*Container, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	c, err := e.container(dbID, id)
	if err == nil && c.IsTable() {
		return nil, fault.New(fault.BadRequest, "Container %q of database %q is a CQL table: read and write its rows through the Cassandra API", id, dbID)
	}
	return c, err
}

// ContainerInfo describes a container.
func (e *Engine) ContainerInfo(dbID, id string) (ContainerInfo, error) {
	return missFresh(e, func() (ContainerInfo, error) { return e.containerInfo(dbID, id) })
}

func (e *Engine) containerInfo(dbID, id string) (ContainerInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	c, err := e.container(dbID, id)
	if err != nil {
		return ContainerInfo{}, err
	}
	return c.info(), nil
}

// Containers lists the containers of a database by id.
func (e *Engine) Containers(dbID string) ([]ContainerInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	d, err := e.database(dbID)
	if err != nil {
		return nil, err
	}
	out := make([]ContainerInfo, 0, len(d.containers))
	for _, id := range sortedKeys(d.containers) {
		out = append(out, d.containers[id].info())
	}
	return out, nil
}

// DeleteContainer deletes a container and all its items. ifMatch, when not empty, is the
// etag the container must have.
func (e *Engine) DeleteContainer(dbID, id, ifMatch string) error {
	return e.freshWrite(func() error {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.deleteContainer(dbID, id, ifMatch)
	})
}

// deleteContainer is DeleteContainer against the catalog this node holds. Callers hold e.mu.
func (e *Engine) deleteContainer(dbID, id, ifMatch string) error {
	c, err := e.container(dbID, id)
	if err != nil {
		return err
	}
	if err := checkVersion(fmt.Sprintf("container %q", id), c.rec.Version, ifMatch); err != nil {
		return err
	}
	e.nextVersion() // the catalog changed; its version says so
	b := e.db.NewBatch()
	defer b.Close()
	ch, err := e.change(catalog.Key{Kind: catalog.Containers, Num: c.rec.Num})
	if err == nil {
		err = c.deleteData(b)
	}
	if err != nil {
		return fault.New(fault.Internal, "%w", err)
	}
	if err := e.commitDeletion(ch, b, c.close); err != nil {
		// The container still exists: open it again rather than leave it refusing writes (on
		// a node of a cluster it was not closed).
		e.hold.reopen(c)
		return err
	}
	delete(c.db.containers, id)
	e.hold.drop(c)
	e.refreshBudgets()
	return nil
}

// ContainerReplace is a container replace: the whole of what may change, and the checks
// that what the client replaces is what it read.
type ContainerReplace struct {
	// PartitionKey must name the container's definition (normalized alike); the zero value
	// skips the check. It never changes.
	PartitionKey PartitionKeyDef
	Indexing     json.RawMessage // the new indexing policy; nil keeps the current one
	DefaultTTL   *int64          // the new default time to live; nil turns it off
	// UniqueKeys, when given, must be the container's policy, which never changes.
	UniqueKeys json.RawMessage
	// VectorPolicy and FullTextPolicy, when given, must be the container's, which never
	// change.
	VectorPolicy, FullTextPolicy json.RawMessage
	IfMatch                      string // when not empty, the etag (unquoted) the container must have
}

// ReplaceContainer changes what may change of a container: its indexing policy and its
// default time to live. Nothing changes unless every check passes. A new indexing policy is
// returned at once and the index is rebuilt in the background (reindex.go).
func (e *Engine) ReplaceContainer(dbID, id string, r ContainerReplace) (ContainerInfo, error) {
	if len(r.Indexing) > 0 && !json.Valid(r.Indexing) {
		return ContainerInfo{}, fault.New(fault.BadRequest, "The indexing policy is not valid JSON")
	}
	if err := checkDefaultTTL(r.DefaultTTL); err != nil {
		return ContainerInfo{}, err
	}
	var changed *Container
	info, err := freshWritten(e, func() (info ContainerInfo, err error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		info, changed, _, err = e.replaceContainer(dbID, id, r)
		return info, err
	})
	if changed != nil {
		return e.changeIndexing(changed, dbID, id, r)
	}
	return info, err
}

// replaceContainer checks r and applies it when it needs no rebuild, or returns the container
// whose policy changes to pol. Callers hold e.mu.
func (e *Engine) replaceContainer(dbID, id string, r ContainerReplace) (ContainerInfo, *Container, *indexing.Policy, error) {
	c, err := e.container(dbID, id)
	if err != nil {
		return ContainerInfo{}, nil, nil, err
	}
	if err := checkVersion(fmt.Sprintf("container %q", id), c.rec.Version, r.IfMatch); err != nil {
		return ContainerInfo{}, nil, nil, err
	}
	if len(r.PartitionKey.Paths) > 0 {
		n, err := r.PartitionKey.normalize()
		if err != nil {
			return ContainerInfo{}, nil, nil, err
		}
		cur := c.rec.PartitionKey
		if n.Kind != cur.Kind || n.Version != cur.Version || strings.Join(n.Paths, ",") != strings.Join(cur.Paths, ",") {
			return ContainerInfo{}, nil, nil, fault.New(fault.BadRequest, "The partition key definition of a container cannot be changed")
		}
	}
	if err := c.sameUniqueKeys(r.UniqueKeys); err != nil {
		return ContainerInfo{}, nil, nil, err
	}
	if err := c.sameSearchPolicies(r.VectorPolicy, r.FullTextPolicy); err != nil {
		return ContainerInfo{}, nil, nil, err
	}
	target := c.policy()
	if len(r.Indexing) > 0 {
		if target, err = indexing.Parse(r.Indexing); err != nil {
			return ContainerInfo{}, nil, nil, err
		}
		if err := c.search.checkSearchIndexes(target); err != nil {
			return ContainerInfo{}, nil, nil, err
		}
	}
	if err := checkTTLIndexed(target, r.DefaultTTL); err != nil {
		return ContainerInfo{}, nil, nil, err
	}
	policy := r.Indexing
	if len(policy) > 0 {
		pol, err := indexing.Parse(policy)
		if err != nil {
			return ContainerInfo{}, nil, nil, err
		}
		if !pol.Equal(c.policy()) {
			return ContainerInfo{}, c, pol, nil
		}
	} else {
		policy = c.rec.Indexing
	}
	rec := c.rec
	rec.Indexing = policy
	rec.DefaultTTL = r.DefaultTTL
	rec.Version = e.nextVersion()
	if err := e.persist(catalog.Containers, rec.Num, rec); err != nil {
		return ContainerInfo{}, nil, nil, err
	}
	c.rec = rec
	c.applyLiveness()
	return c.info(), nil, nil, nil
}
