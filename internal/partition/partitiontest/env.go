package partitiontest

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/rid"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/uniquekey"
)

const (
	// container is the number, in storage keys, of the container the partitions belong to.
	container = 7
	// firstID is the id of the partition open creates, which owns the whole EPK space.
	firstID = 1
)

var containerRID = rid.ForContainer(rid.ForDatabase(3), container)

// Env is one scenario: a store, the partitions open on it and what the commands so far left
// behind (saved etags, a split in flight, a held writer). Its Run handles one command.
type Env struct {
	t   testing.TB // the test Close reports to
	dir string
	mem *storage.MemFS // the store's file system when opened with fs=memory; nil on disk
	// cut is what survived the power cut cut-power armed, once its sync came; the next crash
	// reopens on it.
	cut        *powerCut
	db         *storage.DB
	maxLogical int64
	parts      []*partition.Partition // open, in range order
	parents    []*partition.Partition // closed by a split
	items      *Items

	split  *partition.Split
	unique *uniquekey.Policy // the container's unique keys; nil for none
	// running is the hold the writer is blocked in; pending is what is queued behind it.
	running *hold
	pending []*queued
}

// New returns the Env of a scenario; Close releases what its commands left open.
func New(t testing.TB) *Env {
	return &Env{t: t, items: NewItems(nil)}
}

// Close releases the writer if a hold blocks it, waits for the requests queued behind it,
// aborts the split in flight and closes the partitions and the store.
func (env *Env) Close() {
	for _, q := range env.pending {
		if q.hold != nil {
			q.hold.releasedOnce.Do(func() { close(q.hold.release) })
		}
	}
	if env.running != nil {
		env.running.releasedOnce.Do(func() { close(env.running.release) })
	}
	for _, q := range env.pending {
		<-q.done
	}
	if env.split != nil {
		if err := env.split.Abort(); err != nil {
			env.t.Errorf("abort at cleanup: %v", err)
		}
	}
	for _, p := range env.parts {
		p.Close()
	}
	if env.db != nil {
		if err := env.db.Close(); err != nil {
			env.t.Errorf("closing storage: %v", err)
		}
	}
}

// Run handles one command of a scenario (see the package's documentation) and returns its
// output. Mistakes in the scenario itself fail the test.
func (env *Env) Run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "open":
		// open [max-logical-bytes=N] [unique=(KEY,...)] [fs=memory]
		return env.handleOpen(t, d)
	case "create", "replace", "upsert", "delete", "read", "mutate":
		// create pk=P id=I [if-match=ETAG] [as=NAME] [probe] [pad=N] [field=value...]
		return env.handleOp(t, d)
	case "batch":
		// batch, with one operation a line in the input
		return env.handleBatch(t, d)
	case "get":
		// get pk=P id=I
		return env.handleGet(t, d)
	case "race":
		// race n=N <operation>
		return env.handleRace(t, d)
	case "hold":
		// hold name=H
		return env.handleHold(t, d)
	case "queue":
		// queue name=Q <operation> | queue name=Q batch | queue name=Q bulk=N [requests=K] pk=P prefix=X
		return env.handleQueue(t, d)
	case "release":
		// release name=H
		return env.handleRelease(t, d)
	case "stats":
		return env.handleStats(t, d)
	case "index":
		// index path=/p
		return env.handleIndex(t, d)
	case "index-entries":
		// index-entries id=N [path=/p]
		return env.handleIndexEntries(t, d)
	case "state-record":
		// state-record id=N
		return env.handleStateRecord(t, d)
	case "epks":
		// epks pks=(a,b,...)
		return env.handleEPKs(t, d)
	case "unique-entries":
		return env.handleUniqueEntries(t, d)
	case "split-start", "split-backfill", "split-commit", "split-abort":
		// split-start (at=HEX | at-pk=P) left=L right=R
		return env.handleSplit(t, d)
	case "cut-power":
		// cut-power sync=K [keep=P seed=S]
		return env.handleCutPower(t, d)
	case "crash":
		// crash [keep=P seed=S]
		return env.handleCrash(t, d)
	case "restart":
		// restart [max-logical-bytes=N]
		return env.handleRestart(t, d)
	case "log":
		return env.handleLog(t, d)
	}
	t.Fatalf("unknown command %s", d.Cmd)
	return ""
}

// config is the Config of partition id over r, on the current store.
func (env *Env) config(id uint32, r epk.Range) partition.Config {
	return partition.Config{
		DB: env.db, Container: container, ID: id, Range: r, ContainerRID: containerRID,
		SelfPrefix:      "dbs/" + rid.ForDatabase(3).String() + "/colls/" + containerRID.String() + "/docs/",
		MaxLogicalBytes: env.maxLogical, Unique: env.unique,
	}
}

// mustNotBeHeld fails the test while a hold blocks the writer.
func (env *Env) mustNotBeHeld(t testing.TB) {
	if env.running != nil {
		t.Fatalf("the writer is held by %s: release it first", env.running.name)
	}
}

// describe prints a partition's id, range and Stats.
func describe(p *partition.Partition) string {
	st := p.Stats()
	return fmt.Sprintf("p%d %v lsn=%d items=%d bytes=%d", p.ID(), p.Range(), st.LSN, st.Items, st.Bytes)
}

// byID is partition id, open or closed by a split.
func (env *Env) byID(t testing.TB, id uint32) *partition.Partition {
	for _, p := range append(append([]*partition.Partition(nil), env.parts...), env.parents...) {
		if p.ID() == id {
			return p
		}
	}
	t.Fatalf("no partition %d", id)
	return nil
}

// route is the open partition that owns e.
func (env *Env) route(t testing.TB, e epk.EPK) *partition.Partition {
	for _, p := range env.parts {
		if p.Range().Contains(e) {
			return p
		}
	}
	t.Fatalf("no open partition owns %s", e.Hex())
	return nil
}

// target is the partition op goes to: the one its on=N names, or else the open partition
// that owns its key. A probe records that partition's committed LSN.
func (env *Env) target(t testing.TB, op *Op) *partition.Partition {
	p := env.route(t, op.Op.EPK)
	if op.On != 0 {
		p = env.byID(t, op.On)
	}
	op.Committed = func() uint64 { return p.Stats().LSN }
	return p
}

// targets routes each of ops (for their probes); a command goes to the first one's partition.
func (env *Env) targets(t testing.TB, ops []*Op) *partition.Partition {
	var first *partition.Partition
	for i, op := range ops {
		if p := env.target(t, op); i == 0 {
			first = p
		}
	}
	return first
}

// waitFor polls cond for up to ten seconds.
func waitFor(t testing.TB, what string, cond func() bool) {
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(50 * time.Microsecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
