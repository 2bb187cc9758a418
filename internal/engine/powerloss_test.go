package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/storage"
)

// Power loss under concurrent writers, on a storage.MemFS: the engine runs creates,
// replaces, upserts, deletes and two-item transactional batches from several writers at once
// (so commands share group commits), and the power goes at a point the seed chooses. The
// engine reopened on what survived must hold, for each writer, exactly the effect of a prefix
// of its operations that includes every one it was told succeeded; and the change feed, all
// versions and latest version, must list exactly those operations' changes, each once and in
// LSN order. Each run crashes several times in a row, each reopened engine carrying on.
//
// The seed fixes each writer's operations, the crash rule and the draws that decide which
// unsynced blocks survive; goroutine timing still varies, so a failure names its seed, round
// and crash point. Sizes are kept small for the race detector: about 2 s of CPU per test.
func TestPowerLossKeepsAcknowledgedWrites(t *testing.T) {
	for _, keep := range []int{0, 50} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("keep-unsynced=%d%%/seed=%d", keep, seed), func(t *testing.T) {
				runPowerLoss(t, seed, keep, false)
			})
		}
	}
}

// The same with partitions small enough to split all along: the power goes while splits run
// (a sync during one, often its backfill's or its own) or as one switches to its children
// (a sync while the container's requests are held for the switch, which includes the switch's
// own batch). The container's ranges must still tile the EPK space, every item be found once,
// in the partition that owns it, and counts by partition agree with the index.
func TestPowerLossDuringSplits(t *testing.T) {
	for _, keep := range []int{0, 50} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("keep-unsynced=%d%%/seed=%d", keep, seed), func(t *testing.T) {
				runPowerLoss(t, seed, keep, true)
			})
		}
	}
}

const (
	plWriters     = 6
	plOpsPerRound = 40 // per writer
	plRounds      = 3
	plKeys        = 40 // partition key values
	plSplitBytes  = 32 << 10
)

type plKind uint8

const (
	plCreate plKind = iota
	plReplace
	plUpsert // of an item that may or may not exist
	plDelete
	plBatch // creates id and replaces other, in one transactional batch of their partition key
)

// plOp is one operation a writer issued. The version it writes is v, its index among its
// writer's operations, so every stored version names the operation that wrote it.
type plOp struct {
	kind   plKind
	id, pk string
	other  string // plBatch: the existing item replaced beside the create
	pad    int
}

// plVersion is an item as a writer's operations leave it.
type plVersion struct {
	pk     string
	v, pad int
}

// plChange is a change as the model expects the all-versions feed to list it: the op and the
// version written (-1 for a delete).
type plChange struct {
	op ChangeOp
	v  int
}

// plWriter is one writer: the items it writes (named w<n>-<i>) are its own, so its
// operations' order is the order they apply in.
type plWriter struct {
	n   int
	rng *rand.Rand
	ops []plOp
	// live is the state after every op issued (as if all succeed); next numbers new items.
	live map[string]plVersion
	next int
	// started and done count the operations issued and acknowledged, over all rounds.
	started, done atomic.Int64
	// lo and hi bound the prefix of ops the last crash may have kept (see plCrash).
	lo, hi int
}

// replay returns the items after the first k operations and the changes each got.
func (w *plWriter) replay(k int) (map[string]plVersion, map[string][]plChange) {
	items, hist := map[string]plVersion{}, map[string][]plChange{}
	write := func(id, pk string, v, pad int) {
		op := ChangeReplace
		if _, ok := items[id]; !ok {
			op = ChangeCreate
		}
		items[id] = plVersion{pk: pk, v: v, pad: pad}
		hist[id] = append(hist[id], plChange{op, v})
	}
	for v, op := range w.ops[:k] {
		switch op.kind {
		case plCreate, plReplace, plUpsert:
			write(op.id, op.pk, v, op.pad)
		case plDelete:
			delete(items, op.id)
			hist[op.id] = append(hist[op.id], plChange{ChangeDelete, -1})
		case plBatch:
			write(op.id, op.pk, v, op.pad)
			write(op.other, op.pk, v, op.pad)
		}
	}
	return items, hist
}

// pick returns one of the writer's live items, if it has any; in pk when pk is not "".
func (w *plWriter) pick(pk string) (string, bool) {
	var ids []string
	for id, it := range w.live {
		if pk == "" || it.pk == pk {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return "", false
	}
	slices.Sort(ids) // map order is random; the seed must decide
	return ids[w.rng.IntN(len(ids))], true
}

// nextOp decides the writer's next operation from the items it has.
func (w *plWriter) nextOp() plOp {
	v := len(w.ops)
	op := plOp{pk: fmt.Sprintf("p%02d", w.rng.IntN(plKeys)), pad: 200 + w.rng.IntN(600)}
	fresh := func() string { w.next++; return fmt.Sprintf("w%d-%d", w.n, w.next) }
	switch r := w.rng.IntN(20); {
	case r < 8:
		op.kind, op.id = plCreate, fresh()
	case r < 12:
		if id, ok := w.pick(""); ok {
			op.kind, op.id, op.pk = plReplace, id, w.live[id].pk
		} else {
			op.kind, op.id = plCreate, fresh()
		}
	case r < 15:
		op.kind = plUpsert
		if id, ok := w.pick(""); ok && w.rng.IntN(2) == 0 {
			op.id, op.pk = id, w.live[id].pk
		} else {
			op.id = fresh()
		}
	case r < 18:
		if id, ok := w.pick(""); ok {
			op.kind, op.id, op.pk = plDelete, id, w.live[id].pk
		} else {
			op.kind, op.id = plCreate, fresh()
		}
	default:
		if other, ok := w.pick(""); ok {
			op.kind, op.id, op.other, op.pk = plBatch, fresh(), other, w.live[other].pk
		} else {
			op.kind, op.id = plCreate, fresh()
		}
	}
	switch op.kind {
	case plDelete:
		delete(w.live, op.id)
	case plBatch:
		w.live[op.id] = plVersion{pk: op.pk, v: v}
		w.live[op.other] = plVersion{pk: op.pk, v: v}
	default:
		w.live[op.id] = plVersion{pk: op.pk, v: v}
	}
	return op
}

func plBody(w, v int, id, pk string, pad int) []byte {
	return fmt.Appendf(nil, `{"id":%q,"pk":%q,"w":%d,"v":%d,"pad":%q}`, id, pk, w, v, strings.Repeat("x", pad))
}

// apply runs op (the writer's operation v) against c.
func (w *plWriter) apply(c *Container, v int, op plOp) error {
	body := plBody(w.n, v, op.id, op.pk, op.pad)
	var err error
	switch op.kind {
	case plCreate:
		_, err = c.CreateItem(body, ItemOptions{})
	case plReplace:
		_, err = c.ReplaceItem(op.id, body, ItemOptions{})
	case plUpsert:
		_, err = c.UpsertItem(body, ItemOptions{})
	case plDelete:
		_, err = c.DeleteItem(key(op.pk), op.id, ItemOptions{})
	case plBatch:
		var failed int
		_, failed, err = c.ExecuteBatch(context.Background(), key(op.pk), []BatchOp{
			{Kind: OpCreate, Item: document.FromJSON(body)},
			{Kind: OpReplace, ID: op.other, Item: document.FromJSON(plBody(w.n, v, op.other, op.pk, op.pad))},
		})
		if err == nil && failed >= 0 {
			err = fmt.Errorf("operation %d of the batch failed", failed)
		}
	}
	return err
}

// plCrash is where the power went in one round: the surviving file system and, per writer,
// the operations that must survive (lo: acknowledged before the crash) and may (hi: issued
// before it ended).
type plCrash struct {
	mu     sync.Mutex
	fs     *storage.MemFS
	lo, hi []int
	note   string
}

type plRun struct {
	t          *testing.T
	seed       uint64
	keep       int
	splits     bool
	rng        *rand.Rand
	writers    []*plWriter
	opts       Options
	partitions int // at the last check
	notes      []string
}

func runPowerLoss(t *testing.T, seed uint64, keep int, splits bool) {
	r := &plRun{t: t, seed: seed, keep: keep, splits: splits, rng: rand.New(rand.NewPCG(seed, uint64(keep)))}
	r.opts = Options{Dir: "/data", FS: storage.NewMemFS(), CacheSize: 8 << 20, ChangeFeedRetention: time.Hour}
	if splits {
		r.opts.MaxPartitionBytes = plSplitBytes
	}
	for n := range plWriters {
		r.writers = append(r.writers, &plWriter{n: n, rng: rand.New(rand.NewPCG(seed, uint64(n+1))), live: map[string]plVersion{}})
	}
	for round := 0; ; round++ {
		e, err := Open(r.opts)
		if err != nil {
			t.Fatalf("seed %d: reopening after crash %d (%s): %v", seed, round, strings.Join(r.notes, "; "), err)
		}
		if round == 0 {
			if _, err := e.CreateDatabase("db", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}}); err != nil {
				t.Fatal(err)
			}
		}
		c, err := e.Container("db", "c")
		if err != nil {
			t.Fatalf("seed %d: after crash %d the container is gone: %v", seed, round, err)
		}
		if round > 0 {
			r.verify(e, c, round)
		}
		if round == plRounds {
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			break
		}
		cr := r.load(c, round)
		if err := e.Close(); err != nil {
			t.Fatalf("seed %d round %d: closing the engine that lost power: %v", seed, round, err)
		}
		r.opts.FS = cr.fs
		r.notes = append(r.notes, cr.note)
		for i, w := range r.writers {
			w.lo, w.hi = cr.lo[i], cr.hi[i]
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("seed %d keep %d%%: %d partitions at the end; crashes: %s", seed, keep, r.partitions, strings.Join(r.notes, "; "))
}

// load runs the writers for a round and cuts the power at the point the round's rule picks.
func (r *plRun) load(c *Container, round int) *plCrash {
	t := r.t
	cr := &plCrash{lo: make([]int, plWriters), hi: make([]int, plWriters)}
	stop := make(chan struct{})
	crashRNG := rand.New(rand.NewPCG(r.rng.Uint64(), r.rng.Uint64()))
	crash := func(note string) {
		cr.mu.Lock()
		defer cr.mu.Unlock()
		if cr.fs != nil {
			return
		}
		for i, w := range r.writers {
			cr.lo[i] = int(w.done.Load())
		}
		cr.fs = r.opts.FS.Crash(r.keep, crashRNG)
		for i, w := range r.writers {
			cr.hi[i] = int(w.started.Load())
		}
		cr.note = fmt.Sprintf("round %d: %s", round, note)
		close(stop)
	}

	// The rule: after n acknowledged operations, cut at once or at the next sync; or, with
	// splits, at the k-th sync while the container splits, or while a split switches over.
	rules := []string{"now", "sync"}
	if r.splits {
		rules = append(rules, "splitting", "splitting", "switch", "switch")
	}
	rule := rules[r.rng.IntN(len(rules))]
	after := int64(plWriters * plOpsPerRound / 4 * (1 + r.rng.IntN(3)))
	k := int64(1 + r.rng.IntN(4))
	var acked, syncs atomic.Int64
	arm := func() {
		switch rule {
		case "now":
			crash(fmt.Sprintf("after %d acknowledged operations", after))
		case "sync":
			r.opts.FS.BeforeSync(func() { crash(fmt.Sprintf("at the first sync after %d acknowledged operations", after)) })
		}
	}
	switch rule {
	case "splitting":
		r.opts.FS.BeforeSync(func() {
			if c.splitting.Load() && syncs.Add(1) == k {
				crash(fmt.Sprintf("at sync %d while splitting", k))
			}
		})
	case "switch":
		k = 1 + k%2
		r.opts.FS.BeforeSync(func() {
			if c.splitMu.TryRLock() {
				c.splitMu.RUnlock()
				return
			}
			if syncs.Add(1) == k {
				crash(fmt.Sprintf("at sync %d while a split switches", k))
			}
		})
	}

	var wg sync.WaitGroup
	for _, w := range r.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range plOpsPerRound {
				select {
				case <-stop:
					return
				default:
				}
				op := w.nextOp()
				w.ops = append(w.ops, op)
				v := len(w.ops) - 1
				w.started.Store(int64(v + 1))
				if err := w.apply(c, v, op); err != nil {
					t.Errorf("seed %d round %d: writer %d operation %d (%v): %v", r.seed, round, w.n, v, op, err)
					return
				}
				w.done.Store(int64(v + 1))
				if acked.Add(1) == after {
					arm()
				}
			}
		}()
	}
	wg.Wait()
	r.opts.FS.BeforeSync(nil)
	crash(fmt.Sprintf("after the round's writes (rule %q never fired)", rule))
	return cr
}

// plDoc is a stored item as the checks read it.
type plDoc struct {
	ID  string `json:"id"`
	PK  string `json:"pk"`
	W   int    `json:"w"`
	V   int    `json:"v"`
	Pad string `json:"pad"`
}

// verify checks the reopened engine against the writers' histories, and settles each
// writer's history on the prefix that survived.
func (r *plRun) verify(e *Engine, c *Container, round int) {
	t := r.t
	where := fmt.Sprintf("seed %d keep %d%% after crash %d (%s)", r.seed, r.keep, round, r.notes[len(r.notes)-1])
	info := checkTiling(t, e, c)
	r.partitions = len(info.Partitions)

	// Every item once, in the partition that owns its EPK, intact.
	got := make([]map[string]plVersion, plWriters)
	for i := range got {
		got[i] = map[string]plVersion{}
	}
	seen := map[string]bool{}
	perPartition := map[uint32]int64{}
	for _, p := range c.partitions() {
		err := p.Scan([]epk.Range{epk.All}, 0, func(d partition.Doc) bool {
			var doc plDoc
			if err := json.Unmarshal(d.JSON, &doc); err != nil || doc.W < 0 || doc.W >= plWriters {
				t.Fatalf("%s: a stored item is not one written: %v: %.200s", where, err, d.JSON)
			}
			if seen[doc.ID] {
				t.Fatalf("%s: item %s is stored twice", where, doc.ID)
			}
			seen[doc.ID] = true
			if want, _ := c.EPK(key(doc.PK)); !p.Range().Contains(want) || d.EPK() != want {
				t.Fatalf("%s: item %s (EPK %s) found in partition %d %v", where, doc.ID, want.Hex(), p.ID(), p.Range())
			}
			if len(doc.Pad) < 200 || strings.Trim(doc.Pad, "x") != "" {
				t.Fatalf("%s: item %s has a damaged body: %.200s", where, doc.ID, d.JSON)
			}
			got[doc.W][doc.ID] = plVersion{pk: doc.PK, v: doc.V, pad: len(doc.Pad)}
			perPartition[p.ID()]++
			return true
		})
		if err != nil {
			t.Fatalf("%s: scanning partition %d: %v", where, p.ID(), err)
		}
	}

	// Each writer's items are those after a prefix of its operations that holds every one
	// acknowledged before the crash.
	var want []map[string]plVersion
	hist := map[string][]plChange{}
	for i, w := range r.writers {
		k := -1
		var items map[string]plVersion
		var h map[string][]plChange
		for j := w.lo; j <= w.hi && k < 0; j++ {
			items, h = w.replay(j)
			if sameItems(items, got[i]) {
				k = j
			}
		}
		if k < 0 {
			items, _ = w.replay(w.lo)
			t.Fatalf("%s: writer %d's items are not those after %d to %d of its operations (%d acknowledged):\n%s",
				where, i, w.lo, w.hi, w.lo, diffItems(got[i], items))
		}
		w.ops = w.ops[:k] // what did not survive never happened
		w.live = items
		w.started.Store(int64(k))
		w.done.Store(int64(k))
		want = append(want, items)
		for id, chs := range h {
			hist[id] = chs
		}
	}

	// Point reads find each item, with its version.
	for _, items := range want {
		for id, it := range items {
			res, err := c.ReadItem(key(it.pk), id)
			if err != nil {
				t.Fatalf("%s: reading %s: %v", where, id, err)
			}
			if v := field(t, res.Doc, "v"); v != float64(it.v) {
				t.Fatalf("%s: %s reads as version %v, want %d", where, id, v, it.v)
			}
		}
	}

	// Queries count exactly, partition by partition, scanning and through the index.
	var err error
	queries := map[string]*query.Prepared{}
	for _, text := range []string{"SELECT VALUE COUNT(1) FROM c", "SELECT VALUE COUNT(1) FROM c WHERE c.v >= 0"} {
		if queries[text], err = query.Prepare(text); err != nil {
			t.Fatal(err)
		}
	}
	count := queries["SELECT VALUE COUNT(1) FROM c"]
	var total int64
	for _, p := range c.partitions() {
		for text, q := range queries {
			res, err := c.Query(q, p.Range(), query.Options{})
			if err != nil || len(res.Results) != 1 || res.Results[0].Num() != float64(perPartition[p.ID()]) {
				t.Fatalf("%s: %s over partition %d: %v %v, want %d", where, text, p.ID(), res.Results, err, perPartition[p.ID()])
			}
		}
		if s := p.Stats(); s.Items != perPartition[p.ID()] {
			t.Fatalf("%s: partition %d counts %d items and holds %d", where, p.ID(), s.Items, perPartition[p.ID()])
		}
		total += perPartition[p.ID()]
	}
	if res, err := c.Query(count, epk.All, query.Options{}); err != nil || res.Results[0].Num() != float64(total) {
		t.Fatalf("%s: counting across partitions: %v %v, want %d", where, res.Results, err, total)
	}

	// The change feed, read partition by partition from the start: every change of the
	// surviving operations once, in LSN order, and no other.
	feed := map[string][]plChange{}
	latest := map[string]int{}
	for _, p := range c.partitions() {
		for _, all := range []bool{true, false} {
			q := FeedQuery{Range: p.Range(), AllVersions: all, Max: 50}
			last := uint64(0)
			for {
				page, err := c.ChangeFeed(q)
				if err != nil {
					t.Fatalf("%s: change feed of partition %d: %v", where, p.ID(), err)
				}
				if len(page.Changes) == 0 {
					break
				}
				for _, ch := range page.Changes {
					if ch.LSN < last {
						t.Fatalf("%s: partition %d's feed goes from LSN %d back to %d", where, p.ID(), last, ch.LSN)
					}
					last = ch.LSN
					v := -1
					if ch.JSON != nil {
						v = int(field(t, ch.JSON, "v").(float64))
					}
					if all {
						feed[ch.ID] = append(feed[ch.ID], plChange{ch.Op, v})
					} else {
						if _, dup := latest[ch.ID]; dup {
							t.Fatalf("%s: the latest-version feed lists %s twice", where, ch.ID)
						}
						latest[ch.ID] = v
					}
				}
				q.Start = FeedStart{After: page.Through, HasAfter: true}
			}
		}
	}
	for id, chs := range hist {
		if !slices.Equal(feed[id], chs) {
			t.Fatalf("%s: the all-versions feed lists %s as %v, want %v", where, id, feed[id], chs)
		}
		delete(feed, id)
	}
	if len(feed) > 0 {
		t.Fatalf("%s: the all-versions feed lists changes no surviving operation made: %v", where, feed)
	}
	for _, items := range want {
		for id, it := range items {
			if v, ok := latest[id]; !ok || v != it.v {
				t.Fatalf("%s: the latest-version feed has %s at version %v (listed: %v), want %d", where, id, v, ok, it.v)
			}
			delete(latest, id)
		}
	}
	if len(latest) > 0 {
		t.Fatalf("%s: the latest-version feed lists items that do not exist: %v", where, latest)
	}
}

func sameItems(a, b map[string]plVersion) bool {
	if len(a) != len(b) {
		return false
	}
	for id, x := range a {
		y, ok := b[id]
		if !ok || x.pk != y.pk || x.v != y.v || x.pad != y.pad {
			return false
		}
	}
	return true
}

func diffItems(got, want map[string]plVersion) string {
	var b strings.Builder
	n := 0
	for id, w := range want {
		if g, ok := got[id]; !ok || g.v != w.v || g.pad != w.pad {
			fmt.Fprintf(&b, "  %s: got %+v (present %v), want %+v\n", id, g, ok, w)
			n++
		}
	}
	for id, g := range got {
		if _, ok := want[id]; !ok {
			fmt.Fprintf(&b, "  %s: got %+v, which should not exist\n", id, g)
			n++
		}
	}
	if n == 0 {
		return "  (none differ)"
	}
	return b.String()
}
