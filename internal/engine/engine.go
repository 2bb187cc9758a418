package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/distribution"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/rid"
	"github.com/partita-db/partita/internal/script"
	"github.com/partita-db/partita/internal/storage"
)

// Options configure an engine.
type Options struct {
	Dir string // the data directory; the Pebble database lives in Dir/db
	// FS, when set, holds the data directory in memory instead of on disk: power-loss tests
	// open the engine on it, and again on what survives a Crash.
	FS        *storage.MemFS
	CacheSize int64 // read cache in bytes, hot items and storage blocks (0: storage.DefaultCacheSize)
	// MaxLogicalPartitionBytes caps one logical partition (0: DefaultMaxLogicalPartitionBytes).
	MaxLogicalPartitionBytes int64
	// MaxPartitionBytes is the stored size past which a physical partition splits
	// (0: DefaultMaxPartitionBytes).
	MaxPartitionBytes int64
	// RateLimit refuses requests (fault.Throttled) once a partition has spent its share of the
	// throughput for the second. Charges are computed and recorded either way.
	RateLimit bool
	// BurstCapacity lets a partition under ru.BurstRate bank the request units it leaves idle
	// and spend them on what its rate would refuse (the service's account setting of that
	// name; ru/burst.go).
	BurstCapacity bool
	// ChangeFeedRetention is how long the all-versions-and-deletes change feed keeps changes
	// that no longer hold a current version (0: none are kept and that mode is refused). The
	// latest-version feed is not bounded by it.
	ChangeFeedRetention time.Duration
	// ManualReindex leaves an index rebuild after a policy change to explicit steps (tests
	// that advance it deterministically) instead of a background goroutine.
	ManualReindex bool
	Logger        *slog.Logger
	// Now, when set, is the clock items' _ts and their expiry follow (tests fake it); nil is
	// the system clock.
	Now func() time.Time
	// Scripts bounds the calls of stored procedures, triggers and UDFs (zero fields: the
	// defaults of package script).
	Scripts script.Limits
	// MinPartitions is the fewest physical partitions a new container starts with (0 or 1:
	// as many as its throughput gives, as in Cosmos; at most MaxMinPartitions), so that local
	// tests exercise cross-partition paths without provisioning throughput for them.
	MinPartitions int
	// Staleness bounds Bounded Staleness reads in a cluster (zero fields: DefaultStaleness).
	Staleness Staleness
	// Cluster makes the engine a node of a cluster (cluster.go); nil for a node alone.
	Cluster *Cluster
	// Replicated runs every physical partition as a Raft group on the node's replication host
	// (replicas.go), of one replica, as a cluster's nodes run them; false keeps the direct
	// path (docs/design/replication.md, "Single node").
	Replicated bool
}

// MaxMinPartitions bounds Options.MinPartitions: every partition costs a budget and a key span
// per container, and 64 is already more than any test needs to see fan-out.
const MaxMinPartitions = 64

// DefaultChangeFeedRetention is how long the all-versions change feed reaches back by default.
const DefaultChangeFeedRetention = 24 * time.Hour

// DefaultMaxLogicalPartitionBytes is Cosmos's 20 GB cap on a logical partition.
const DefaultMaxLogicalPartitionBytes = 20 << 30

// Engine is one account: its databases, containers and their partitions.
type Engine struct {
	db *storage.DB
	// catalog keeps the catalog's records: local, in db, on a single node; the cluster's
	// otherwise (cluster.go).
	catalog catalog.Backend
	local   *catalog.Local // nil in a cluster
	opts    Options
	log     *slog.Logger

	// mu guards the catalog: the maps and seq. Item operations take it only to look up their
	// container; catalog changes hold it while their record is synced.
	mu  sync.RWMutex
	dbs map[string]*Database
	seq catalogSeq
	// seqAt is seq as of rev, in a cluster: the catalog's counters. seq differs from it only
	// while a change is decided, under mu, and goes back to it when the change does not
	// commit, so that nothing reads counters the catalog never held (the CQL schema cache
	// is keyed by their version).
	seqAt  catalogSeq
	closed bool
	// users indexes every database's users by their number, which is unique in the account:
	// a resource token names its permission by rid, and is checked on every request.
	users map[uint32]*User

	// background counts split goroutines and the log purger, which Close waits for before
	// closing storage; stop tells the purger to end.
	background sync.WaitGroup
	stop       chan struct{}
	// ready is how far the node has caught up with its groups since it opened (ready.go);
	// opened is when it did.
	ready  readiness
	opened time.Time
	// stopped is canceled when stop closes: calls to the control plane made for background
	// work give up at once then.
	stopped context.Context
	cancel  context.CancelFunc

	// reap is where the reaper of expired items got to; owned by its goroutine.
	reap reapState

	// scripts runs the containers' JavaScript.
	scripts *script.Runner

	// hold is how the node holds its partitions (holding.go): direct, or replicas when
	// Options.Replicated.
	hold holding
	// replicas is the replication host and its partitions when Options.Replicated, always on
	// a node of a cluster; nil on the direct path.
	replicas *replicaSet

	// cluster is Options.Cluster; nil on a node alone (cluster.go). rev is the revision of
	// the cluster's catalog that the engine holds (under mu), and caught is closed, and
	// replaced, whenever it moves.
	cluster *Cluster
	rev     int64
	caught  chan struct{}
	// served counts the requests this node ran for other nodes (NodeMetrics; those it sent
	// them: asker.Sent).
	served atomic.Uint64
	// readsLeading and readsFollowing count clients' reads this node's replicas served, as
	// leaders and as followers (NodeMetrics).
	readsLeading, readsFollowing atomic.Uint64
	// dir knows where the partitions this node holds no replica of are, and asker asks the
	// other nodes (remote.go, forward.go); both set in a cluster only.
	dir   *distribution.Directory
	asker *distribution.Asker
	// figures are the cluster's load figures as the placement loop, or the loop that keeps
	// the figures of every partition (figures.go), last gathered them (load.go); nil before
	// either did. gathering is held while they are gathered, so that both do not at once.
	figures   atomic.Pointer[loadFigures]
	gathering sync.Mutex
	// shares are the budgets of the partitions held here as their replicas share them
	// (shares.go).
	shares shareTable
}

// Open opens the engine on opts.Dir, loading the catalog and opening every partition.
func Open(opts Options) (*Engine, error) {
	if opts.MaxLogicalPartitionBytes <= 0 {
		opts.MaxLogicalPartitionBytes = DefaultMaxLogicalPartitionBytes
	}
	if opts.MaxPartitionBytes <= 0 {
		opts.MaxPartitionBytes = DefaultMaxPartitionBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MinPartitions < 0 || opts.MinPartitions > MaxMinPartitions {
		return nil, fmt.Errorf("the minimum number of partitions must be from 1 to %d, not %d", MaxMinPartitions, opts.MinPartitions)
	}
	db, err := storage.Open(opts.Dir+"/db", storage.Options{CacheSize: opts.CacheSize, Stalls: opts.Logger, FS: opts.FS})
	if err != nil {
		return nil, err
	}
	if db.Format() != storage.FormatVersion {
		if err := upgrade(db, opts.Logger, partition.UpgradeOptions{}); err != nil {
			db.Close()
			return nil, err
		}
	}
	e := &Engine{db: db, opts: opts, log: opts.Logger, dbs: map[string]*Database{}, users: map[uint32]*User{}, stop: make(chan struct{}),
		scripts: script.NewRunner(opts.Scripts)}
	e.stopped, e.cancel = context.WithCancel(context.Background())
	if opts.Cluster != nil {
		e.cluster, e.catalog, opts.Replicated = opts.Cluster, opts.Cluster.Catalog, true
		e.dir = distribution.NewDirectory(opts.Cluster.Groups)
		e.asker = &distribution.Asker{Self: opts.Cluster.Node, Call: opts.Cluster.Call}
		e.opts.Replicated = true
		e.caught = make(chan struct{})
	} else {
		e.local = catalog.NewLocal(db)
		e.catalog = e.local
	}
	e.hold = direct{e}
	if opts.Replicated {
		e.replicas = newReplicaSet(e)
		e.hold = e.replicas
	}
	if err := e.load(); err != nil {
		e.closePartitions()
		db.Close()
		return nil, err
	}
	e.opened = time.Now()
	if e.cluster != nil {
		e.background.Add(5)
		go e.follow()
		go e.placeLoop()
		go e.catchUp()
		go e.shareLoop()
		go e.figuresLoop()
	}
	e.background.Add(2)
	go e.every(e.purgeEvery(), e.purgeLogsOnce)
	go e.every(reapEvery, func(now time.Time) { e.reapOnce(now) })
	e.resumeReindex()
	return e, nil
}

// catalogLoadWait bounds how long a node of a cluster waits for the catalog at its start.
const catalogLoadWait = 5 * time.Minute

func (e *Engine) load() error {
	recs, err := loadCatalog(e.catalog)
	// A cluster's catalog is read from the control plane, which may not answer for a while (it
	// is electing, or the connection to a member is dead): a node that starts then waits.
	for deadline := time.Now().Add(catalogLoadWait); err != nil && e.cluster != nil && time.Now().Before(deadline); {
		e.log.Warn("reading the cluster's catalog failed; trying again", "err", err)
		time.Sleep(500 * time.Millisecond)
		recs, err = loadCatalog(e.catalog)
	}
	if err != nil {
		return err
	}
	e.seq, e.seqAt, e.rev = recs.seq, recs.seq, recs.rev
	byNum := map[uint32]*Database{}
	for _, r := range recs.databases {
		d := newDatabase(r)
		e.dbs[r.ID] = d
		byNum[r.Num] = d
	}
	var cs []*Container
	for _, r := range recs.containers {
		d := byNum[r.DB]
		if d == nil {
			return fmt.Errorf("catalog: container %q belongs to unknown database %d", r.ID, r.DB)
		}
		c, err := e.newContainer(d, r)
		if err != nil {
			return err
		}
		d.containers[r.ID] = c
		cs = append(cs, c)
	}
	// A replicated node's host opens the replicas it holds: every container they belong to
	// is known.
	if err := e.hold.start(); err != nil {
		return err
	}
	for _, c := range cs {
		if err := c.openPartitions(); errors.Is(err, errAway) {
			delete(c.db.containers, c.id)
			e.await(c)
			continue
		} else if err != nil {
			return err
		}
		if e.cluster != nil {
			continue // a cluster's partitions are reconciled by their leaders (place)
		}
		if err := c.reconcile(); err != nil {
			return fmt.Errorf("container %q: %w", c.id, err)
		}
	}
	for _, r := range recs.users {
		d := byNum[r.DB]
		if d == nil {
			return fmt.Errorf("catalog: user %q belongs to unknown database %d", r.ID, r.DB)
		}
		e.addUser(d, r)
	}
	e.refreshBudgets()
	e.log.Info("catalog loaded", "databases", len(recs.databases), "containers", len(recs.containers), "users", len(recs.users))
	return nil
}

// keepsUp reports whether this node does the background work of its replica p: the change
// feed's retention, TTL expiry and index rebuilds, which write through the partition's log
// for every replica. A single node does all of it; in a cluster, the node that leads p's
// group.
func (e *Engine) keepsUp(p *partition.Partition) bool { return e.cluster == nil || p.Leading() }

// Close finishes queued writes, closes every partition and the storage.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	if e.cluster != nil {
		e.handOff()
	}
	close(e.stop)
	e.cancel()
	done := make(chan struct{})
	go func() {
		e.background.Wait() // a running split sees closed and stops before its switch
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeWait):
		// Background work waits for its groups: in a cluster whose other nodes stopped first,
		// a proposal that cannot commit. Stopping the host fails it.
		e.hold.close()
		<-done
	}
	e.closePartitions()
	return e.db.Close()
}

// closeWait is how long Close lets background work finish before it stops the replication
// host under it.
const closeWait = 2 * time.Second

func (e *Engine) closePartitions() {
	e.hold.close()
	for _, d := range e.dbs {
		for _, c := range d.containers {
			c.close()
		}
	}
}

// nextVersion advances the catalog version; callers hold e.mu and persist e.seq.
func (e *Engine) nextVersion() uint64 {
	e.seq.Version++
	return e.seq.Version
}

// Resource is what every catalog resource shows of itself.
type Resource struct {
	ID   string
	RID  string
	Self string
	ETag string
	TS   int64
}

func versionETag(v uint64) string { return fmt.Sprintf("00000000-0000-0000-0000-%012x", v) }

// checkVersion is If-Match for catalog resources (databases, containers, offers, scripts): it
// refuses a change to the resource named by what when ifMatch is neither empty, "*", nor the
// etag of version v.
func checkVersion(what string, v uint64, ifMatch string) error {
	if ifMatch == "" || ifMatch == "*" || ifMatch == versionETag(v) {
		return nil
	}
	return fault.New(fault.PreconditionFailed, "Operation cannot be performed because one of the specified precondition is not met: the etag of %s is not %q", what, ifMatch)
}

func now() int64 { return time.Now().Unix() }

func databaseResource(r databaseRecord) Resource {
	id := rid.ForDatabase(r.Num).String()
	return Resource{ID: r.ID, RID: id, Self: "dbs/" + id + "/", ETag: versionETag(r.Version), TS: r.TS}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// every runs f every d, with the tick's time, until the engine closes. Callers add it to
// e.background.
func (e *Engine) every(d time.Duration, f func(now time.Time)) {
	defer e.background.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case now := <-t.C:
			select {
			case <-e.stop: // both were ready, and select chose the tick
				return
			default:
			}
			f(now)
		}
	}
}
