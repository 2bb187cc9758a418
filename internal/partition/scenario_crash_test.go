package partition

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/storage"
)

// Power loss in scenarios. A store opened with fs=memory lives in a storage.MemFS, which
// knows what was synced; the power can be cut there at once or at a chosen sync:
//
//	cut-power sync=K [keep=P seed=S]
//	    the power goes just before the K-th sync from now (of the write-ahead log, or any
//	    file), which is lost with everything not synced before it; the commands that follow
//	    still run, on a store that no longer matters, until crash
//	crash [keep=P seed=S]
//	    the power goes now (or went at the armed cut): everything is closed, no split is
//	    aborted, and the store is reopened on what survived. Its partitions are those whose
//	    state record survived, among those the scenario knew (a split's commit writes its
//	    children's and removes its parent's in one batch), or partition 1 over the whole
//	    space when none did; printed as the restart command prints them, and checked to tile
//	    the EPK space
//
// Of the data written but not synced, each 4 KB block and directory entry survives with a
// probability of P percent (0 by default: exactly what was synced), drawn from seed S.

// powerCut is a cut armed by cut-power; fs is set, on the goroutine that syncs, when it fires.
type powerCut struct {
	mu   sync.Mutex
	fs   *storage.MemFS
	note string
}

func (s *scenario) survivorRNG(td *datadriven.TestData) (int, *rand.Rand) {
	keep, seed := 0, uint64(1)
	td.MaybeScanArgs(s.t, "keep", &keep)
	td.MaybeScanArgs(s.t, "seed", &seed)
	return keep, rand.New(rand.NewPCG(seed, 0))
}

func (s *scenario) cutPower(td *datadriven.TestData) string {
	if s.mem == nil {
		s.t.Fatal("cut-power needs a store opened with fs=memory")
	}
	var k int
	td.ScanArgs(s.t, "sync", &k)
	keep, rng := s.survivorRNG(td)
	cut := &powerCut{}
	s.cut = cut
	mem, n := s.mem, 0
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

func (s *scenario) crash(td *datadriven.TestData) string {
	t := s.t
	if s.mem == nil {
		t.Fatal("crash needs a store opened with fs=memory")
	}
	var survived *storage.MemFS
	note := "the power went now"
	if s.cut != nil {
		s.cut.mu.Lock()
		survived, note = s.cut.fs, s.cut.note
		s.cut.mu.Unlock()
		if survived == nil {
			t.Fatal("crash: the sync cut-power waits for never came")
		}
	} else {
		keep, rng := s.survivorRNG(td)
		survived = s.mem.Crash(keep, rng)
	}
	s.mem.BeforeSync(nil)
	s.cut = nil

	// The store that lost power goes on as a process would until it dies: whatever it does
	// from here reaches nothing that survived. Its resources are released so the test leaks
	// none, the split's included (its Abort writes there, not to what survived).
	if s.split != nil {
		if err := s.split.Abort(); err != nil {
			t.Fatal(err)
		}
		s.split = nil
	}
	known := map[uint32]epk.Range{}
	for _, p := range s.parents {
		known[p.id] = p.rng
	}
	for _, p := range s.parts {
		known[p.id] = p.rng
		p.Close()
	}
	if err := s.db.Close(); err != nil {
		t.Fatal(err)
	}

	s.mem = survived
	db, err := storage.Open(s.dir, storage.Options{FS: s.mem})
	if err != nil {
		t.Fatalf("reopening after the power cut: %v", err)
	}
	s.db, s.parts, s.parents = db, nil, nil
	var ids []uint32
	for id := range known {
		switch _, err := db.GetCopy(nil, storage.PartitionKey(scenarioContainer, id)); {
		case err == nil:
			ids = append(ids, id)
		case !storage.IsNotFound(err):
			t.Fatal(err)
		}
	}
	if len(ids) == 0 {
		ids, known[scenarioParent] = []uint32{scenarioParent}, epk.All
	}
	slices.SortFunc(ids, func(a, b uint32) int { return strings.Compare(string(known[a].Min), string(known[b].Min)) })
	var b strings.Builder
	fmt.Fprintf(&b, "%s; reopened on what survived:\n", note)
	next := epk.Min
	for _, id := range ids {
		p, err := Open(s.config(id, known[id]))
		if err != nil {
			t.Fatal(err)
		}
		s.parts = append(s.parts, p)
		s.abortInFlight(&b, p)
		if p.rng.Min != next {
			fmt.Fprintf(&b, "RANGES DO NOT TILE: %v follows %s\n", p.rng, next.Hex())
		}
		next = p.rng.Max
		b.WriteString(s.describe(p) + "\n")
	}
	if next != epk.Max {
		fmt.Fprintf(&b, "RANGES DO NOT TILE: the last ends at %s\n", next.Hex())
	}
	return b.String()
}

// log prints every open partition's change log, all versions, in the order ReadLog passes it.
func (s *scenario) log() string {
	var b strings.Builder
	for _, p := range s.parts {
		fmt.Fprintf(&b, "p%d:", p.id)
		through, err := p.ReadLog(LogRead{Range: epk.All, AllVersions: true}, func(c *LogChange) bool {
			fmt.Fprintf(&b, " %d:%s:%s/%s", c.LSN, c.Op, s.pkName(epk.EPK(c.EPK)), c.ID)
			return true
		})
		if err != nil {
			s.t.Fatal(err)
		}
		fmt.Fprintf(&b, " (through %d)\n", through)
	}
	return b.String()
}
