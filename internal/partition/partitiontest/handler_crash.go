package partitiontest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/storage"
)

// powerCut is a cut armed by cut-power; fs is set, on the goroutine that syncs, when it fires.
type powerCut struct {
	mu   sync.Mutex
	fs   *storage.MemFS
	note string
}

// survivorRNG reads how much of what was not synced survives (keep=P percent, seed=S).
func survivorRNG(t testing.TB, d *datadriven.TestData) (int, *rand.Rand) {
	keep, seed := 0, uint64(1)
	d.MaybeScanArgs(t, "keep", &keep)
	d.MaybeScanArgs(t, "seed", &seed)
	return keep, rand.New(rand.NewPCG(seed, 0))
}

// handleCutPower arms a power cut just before the K-th sync from now, on a store opened with
// fs=memory.
//
//	cut-power sync=K [keep=P seed=S]
func (env *Env) handleCutPower(t *testing.T, d *datadriven.TestData) string {
	if env.mem == nil {
		t.Fatal("cut-power needs a store opened with fs=memory")
	}
	var k int
	d.ScanArgs(t, "sync", &k)
	keep, rng := survivorRNG(t, d)
	cut := &powerCut{}
	env.cut = cut
	mem, n := env.mem, 0
	mem.BeforeSync(func() {
		cut.mu.Lock()
		defer cut.mu.Unlock()
		if n++; n == k {
			cut.fs = mem.Crash(keep, rng)
			cut.note = fmt.Sprintf("the power went before sync %d", k)
		}
	})
	return fmt.Sprintf("the power goes before sync %d from now", k)
}

// handleCrash cuts the power now (or takes the cut cut-power armed), closes everything without
// aborting a split, and reopens the store on what survived, with the partitions whose state
// record survived among those the scenario knew (or partition 1 over the whole space when
// none did). It checks that their ranges tile the EPK space.
//
//	crash [keep=P seed=S]
func (env *Env) handleCrash(t *testing.T, d *datadriven.TestData) string {
	env.mustNotBeHeld(t)
	if env.mem == nil {
		t.Fatal("crash needs a store opened with fs=memory")
	}
	var survived *storage.MemFS
	note := "the power went now"
	if env.cut != nil {
		env.cut.mu.Lock()
		survived, note = env.cut.fs, env.cut.note
		env.cut.mu.Unlock()
		if survived == nil {
			t.Fatal("crash: the sync cut-power waits for never came")
		}
	} else {
		keep, rng := survivorRNG(t, d)
		survived = env.mem.Crash(keep, rng)
	}
	env.mem.BeforeSync(nil)
	env.cut = nil

	// The store that lost power goes on as a process would until it dies: whatever it does
	// from here reaches nothing that survived. Its resources are released so the test leaks
	// none, the split's included (its Abort writes there, not to what survived).
	if env.split != nil {
		if err := env.split.Abort(); err != nil {
			t.Fatal(err)
		}
		env.split = nil
	}
	known := map[uint32]epk.Range{}
	for _, p := range env.parents {
		known[p.ID()] = p.Range()
	}
	for _, p := range env.parts {
		known[p.ID()] = p.Range()
		p.Close()
	}
	if err := env.db.Close(); err != nil {
		t.Fatal(err)
	}

	env.mem = survived
	db, err := storage.Open(env.dir, storage.Options{FS: env.mem})
	if err != nil {
		t.Fatalf("reopening after the power cut: %v", err)
	}
	env.db, env.parts, env.parents = db, nil, nil
	var ids []uint32
	for id := range known {
		switch _, err := db.GetCopy(nil, storage.PartitionKey(container, id)); {
		case err == nil:
			ids = append(ids, id)
		case !storage.IsNotFound(err):
			t.Fatal(err)
		}
	}
	if len(ids) == 0 {
		ids, known[firstID] = []uint32{firstID}, epk.All
	}
	slices.SortFunc(ids, func(a, b uint32) int { return strings.Compare(string(known[a].Min), string(known[b].Min)) })
	var b strings.Builder
	fmt.Fprintf(&b, "%s; reopened on what survived:\n", note)
	next := epk.Min
	for _, id := range ids {
		p, err := partition.Open(env.config(id, known[id]))
		if err != nil {
			t.Fatal(err)
		}
		env.parts = append(env.parts, p)
		env.abortInFlight(t, &b, p)
		if p.Range().Min != next {
			fmt.Fprintf(&b, "RANGES DO NOT TILE: %v follows %s\n", p.Range(), next.Hex())
		}
		next = p.Range().Max
		b.WriteString(describe(p) + "\n")
	}
	if next != epk.Max {
		fmt.Fprintf(&b, "RANGES DO NOT TILE: the last ends at %s\n", next.Hex())
	}
	return b.String()
}

// handleRestart closes the open partitions and the store, cleanly, and opens them again (with
// a new cap on logical partitions).
//
//	restart [max-logical-bytes=N]
func (env *Env) handleRestart(t *testing.T, d *datadriven.TestData) string {
	env.mustNotBeHeld(t)
	d.MaybeScanArgs(t, "max-logical-bytes", &env.maxLogical)
	var cfgs []partition.Config
	for _, p := range env.parts {
		cfgs = append(cfgs, env.config(p.ID(), p.Range()))
		p.Close()
	}
	if err := env.db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(env.dir, storage.Options{FS: env.mem})
	if err != nil {
		t.Fatal(err)
	}
	env.db, env.parts, env.parents = db, nil, nil
	var b strings.Builder
	for _, cfg := range cfgs {
		cfg.DB = db
		p, err := partition.Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		env.parts = append(env.parts, p)
		env.abortInFlight(t, &b, p)
		b.WriteString(describe(p) + "\n")
	}
	return b.String()
}

// abortInFlight aborts the split a reopened partition had in flight, as the engine does when
// it opens a container, and says so.
func (env *Env) abortInFlight(t testing.TB, b *strings.Builder, p *partition.Partition) {
	if at, _, _, ok := p.SplitInFlight(); ok {
		if err := p.AbortSplit(); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(b, "p%d: the split at %s in flight was aborted\n", p.ID(), at.Hex())
	}
}
