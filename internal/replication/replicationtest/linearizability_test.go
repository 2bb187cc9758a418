package replicationtest

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replication"
)

// The linearizability of a replicated partition. Clients create, replace (with and without
// If-Match), delete and read items, alone and in transactional batches, on whichever replica
// holds the lease, while a nemesis cuts nodes off, kills them, cuts their power, restarts them
// and moves the leadership, over a network that drops, delays, duplicates and reorders. Every
// operation is recorded with when it was called and when it returned, and porcupine checks that
// the history of each logical partition could have happened one operation at a time, each at an
// instant between its call and its return. A write whose outcome the client could not learn
// (ErrAmbiguous) may have happened or not, any time after its call. At the end the cluster is
// healed, every item is read back (so a write acknowledged and then lost fails the check), and
// every replica must hold the same bytes.
//
// The seed chooses the clients' operations and the nemesis's faults; the goroutines' timing is
// not in its hands, so a failing seed reproduces the same workload and faults, not always the
// same interleaving. Run more and longer runs with
//
//	go test ./internal/replication/replicationtest -run Linearizable -lz.runs 50 -lz.time 10s

var (
	lzRuns = flag.Int("lz.runs", 3, "linearizability runs, with seeds 1..n")
	lzTime = flag.Duration("lz.time", 2*time.Second, "how long each linearizability run's clients work")
	lzSeed = flag.Uint64("lz.seed", 0, "run this seed only")
)

func TestLinearizable(t *testing.T) {
	seeds := []uint64{*lzSeed}
	if *lzSeed == 0 {
		seeds = nil
		for s := 1; s <= *lzRuns; s++ {
			seeds = append(seeds, uint64(s))
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runLinearizable(t, seed, *lzTime) })
	}
}

// lzOp is one operation of a request, as the model sees it.
type lzOp struct {
	Kind    partition.OpKind
	ID      string
	V       int    // the value a write writes: unique over the run
	IfMatch string // a replace's precondition; "" for none
}

// lzIn is a request: one operation, or a transactional batch, on one logical partition.
type lzIn struct {
	PK  string
	Ops []lzOp
	// Point is set for a lone read served by Partition.Read (a ReadIndex read), not by the writer.
	Point bool
}

// lzOut is what the request returned.
type lzOut struct {
	Unknown bool   // the outcome is not known (ErrAmbiguous)
	Fail    string // the fault kind that refused the request; "" when it succeeded
	Index   int    // which operation of a batch failed
	Results []lzRes
}

type lzRes struct {
	ETag  string // the version written or read
	V     int    // the value read
	Found bool
}

// lzState is a logical partition's items: id -> version.
type lzState map[string]lzVer

type lzVer struct {
	V    int
	ETag string // "" for a version a write of unknown outcome made, until a read sees it
}

var lzModel = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		for _, op := range history {
			pk := op.Input.(lzIn).PK
			by[pk] = append(by[pk], op)
		}
		var out [][]porcupine.Operation
		for _, pk := range slicesSorted(maps.Keys(by)) {
			out = append(out, by[pk])
		}
		return out
	},
	Init: func() []any { return []any{lzState{}} },
	Step: func(s0, in0, out0 any) []any {
		s, in, out := s0.(lzState), in0.(lzIn), out0.(lzOut)
		next, failAt, failKind := simulate(s, in, out)
		switch {
		case out.Unknown:
			if failAt >= 0 {
				return []any{s} // it could not have applied: only not applied
			}
			return []any{s, next}
		case out.Fail != "":
			if failAt == out.Index && failKind == out.Fail {
				return []any{s}
			}
			return nil
		case failAt >= 0 || next == nil:
			return nil
		}
		return []any{next}
	},
	Equal: func(a, b any) bool { return maps.Equal(a.(lzState), b.(lzState)) },
	DescribeOperation: func(in0, out0 any) string {
		in, out := in0.(lzIn), out0.(lzOut)
		var ops []string
		for _, op := range in.Ops {
			ops = append(ops, fmt.Sprintf("%d %s v%d if=%.8s", op.Kind, op.ID, op.V, op.IfMatch))
		}
		return fmt.Sprintf("%s [%s] -> %+v", in.PK, strings.Join(ops, "; "), out)
	},
	DescribeState: func(s any) string { return fmt.Sprint(s) },
}

func slicesSorted(seq func(func(string) bool)) []string {
	var out []string
	seq(func(k string) bool { out = append(out, k); return true })
	sort.Strings(out)
	return out
}

// simulate applies in to s as a command would: operations in order, each seeing the ones
// before it, and checks what out says they returned (when it says). It returns the state after
// (nil when out contradicts it), or the first operation that fails and why.
func simulate(s lzState, in lzIn, out lzOut) (next lzState, failAt int, failKind string) {
	next = maps.Clone(s)
	known := !out.Unknown && out.Fail == ""
	for i, op := range in.Ops {
		cur, exists := next[op.ID]
		fail := ""
		switch op.Kind {
		case partition.Create:
			if exists {
				fail = fault.Conflict.String()
			}
		case partition.Replace:
			switch {
			case !exists:
				fail = fault.NotFound.String()
			case op.IfMatch != "" && cur.ETag != op.IfMatch:
				// A version of unknown etag was never seen, so no client can name it.
				fail = fault.PreconditionFailed.String()
			}
		case partition.Delete, partition.Read:
			if !exists {
				fail = fault.NotFound.String()
			}
		}
		if fail != "" {
			return nil, i, fail
		}
		var r lzRes
		if known {
			if i >= len(out.Results) {
				return nil, -1, ""
			}
			r = out.Results[i]
		}
		switch op.Kind {
		case partition.Create, partition.Replace, partition.Upsert:
			next[op.ID] = lzVer{V: op.V, ETag: r.ETag}
		case partition.Delete:
			delete(next, op.ID)
		case partition.Read:
			if known {
				if !r.Found || r.V != cur.V || cur.ETag != "" && cur.ETag != r.ETag {
					return nil, -1, ""
				}
				next[op.ID] = lzVer{V: cur.V, ETag: r.ETag} // a version of unknown etag is seen now
			}
		}
	}
	return next, -1, ""
}

func runLinearizable(t *testing.T, seed uint64, d time.Duration) {
	h := startCluster(t, 3, seed)
	h.Net.SetFaults(0.02, 0.02, 0.05, 3, true)

	var (
		mu      sync.Mutex
		history []porcupine.Operation
		start   = time.Now()
		values  int
		stop    = make(chan struct{}) // the ticker's
		wg      sync.WaitGroup
		// The clients'.
		stopClients = make(chan struct{})
		clientsDone sync.WaitGroup
	)
	now := func() int64 { return int64(time.Since(start)) }
	record := func(client int, in lzIn, call int64, out lzOut, ret int64) {
		mu.Lock()
		history = append(history, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
		mu.Unlock()
	}
	nextV := func() int {
		mu.Lock()
		defer mu.Unlock()
		values++
		return values
	}
	pks := []string{"a", "b", "c"}
	ids := []string{"x0", "x1", "x2", "x3"}

	// The ticker: Raft's clock runs fast, so that elections and heartbeats happen many times a run.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
				h.TickAsync()
			}
		}
	}()

	const clients = 6
	for c := range clients {
		clientsDone.Add(1)
		go func() {
			defer clientsDone.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(c)+100))
			etags := map[string]string{} // the last etag this client saw of each item
			for {
				select {
				case <-stopClients:
					return
				default:
				}
				in := lzIn{PK: pks[rng.IntN(len(pks))]}
				n := 1
				if rng.IntN(4) == 0 {
					n = 2 + rng.IntN(2)
				}
				for range n {
					op := lzOp{ID: ids[rng.IntN(len(ids))]}
					switch rng.IntN(6) {
					case 0, 1:
						op.Kind, op.V = partition.Create, nextV()
					case 2:
						op.Kind, op.V = partition.Replace, nextV()
						if e, ok := etags[in.PK+"/"+op.ID]; ok && rng.IntN(2) == 0 {
							op.IfMatch = e
						}
					case 3:
						op.Kind = partition.Delete
					default:
						op.Kind = partition.Read
					}
					in.Ops = append(in.Ops, op)
				}
				in.Point = n == 1 && in.Ops[0].Kind == partition.Read && rng.IntN(2) == 0
				call := now()
				out, applied := runOp(t, h, in)
				ret := now()
				if !applied {
					continue // refused everywhere: nothing happened
				}
				if out.Unknown {
					ret = 1 << 62 // it may take effect at any time from its call on
				}
				for i, r := range out.Results {
					if r.ETag != "" {
						etags[in.PK+"/"+in.Ops[i].ID] = r.ETag
					}
				}
				record(c, in, call, out, ret)
			}
		}()
	}

	// The nemesis.
	rng := rand.New(rand.NewPCG(seed, 7))
	var down *Node
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		time.Sleep(time.Duration(10+rng.IntN(40)) * time.Millisecond)
		nodes := h.Nodes()
		switch rng.IntN(6) {
		case 0: // cut a node off, for a while
			if down == nil {
				n := nodes[rng.IntN(len(nodes))]
				var others []replication.NodeID
				for _, o := range nodes {
					if o != n {
						others = append(others, o.ID)
					}
				}
				h.Net.Cut([]replication.NodeID{n.ID}, others)
				time.Sleep(time.Duration(20+rng.IntN(60)) * time.Millisecond)
				h.Net.Heal()
			}
		case 1: // kill a node, or cut its power
			if down == nil {
				down = nodes[rng.IntN(len(nodes))]
				down.Crash([]int{0, 50, 100}[rng.IntN(3)], rng.Uint64())
			}
		case 2: // restart it
			if down != nil {
				if err := down.Restart(); err != nil {
					t.Fatal(err)
				}
				down = nil
			}
		case 3: // move the leadership
			if l := h.Leader(Group(1)); l != nil {
				st, ok := l.Host.Status(Group(1))
				if ok {
					to := st.Descriptor.Voters[rng.IntN(len(st.Descriptor.Voters))]
					l.Host.TransferLeader(Group(1), to)
				}
			}
		}
	}
	// Heal everything, let the clients finish (the clock runs on meanwhile), and read every
	// item back.
	h.Net.Heal()
	h.Net.SetFaults(0, 0, 0, 0, false)
	if down != nil {
		if err := down.Restart(); err != nil {
			t.Fatal(err)
		}
	}
	close(stopClients)
	clientsDone.Wait()
	close(stop)
	wg.Wait()
	if h.WaitLeader(Group(1), 500) == nil {
		t.Fatal("no leader after healing")
	}
	for _, pk := range pks {
		for _, id := range ids {
			in := lzIn{PK: pk, Ops: []lzOp{{Kind: partition.Read, ID: id}}, Point: true}
			call := now()
			out, applied := runOp(t, h, in)
			if !applied || out.Unknown {
				t.Fatalf("the final read of %s/%s failed: %+v", pk, id, out)
			}
			record(clients, in, call, out, now())
		}
	}
	checkAgreement(t, h, 1)

	res, info := porcupine.CheckOperationsVerbose(lzModel.ToModel(), history, time.Minute)
	var unknown int
	for _, op := range history {
		if op.Output.(lzOut).Unknown {
			unknown++
		}
	}
	t.Logf("seed %d: %d operations (%d of unknown outcome), %v", seed, len(history), unknown, res)
	if res != porcupine.Ok {
		path := filepath.Join(os.TempDir(), fmt.Sprintf("partita-linearizability-%d.html", seed))
		if err := porcupine.VisualizePath(lzModel.ToModel(), info, path); err == nil {
			t.Logf("the history is drawn in %s", path)
		}
		t.Logf("the logical partitions that fail, as text: %s", writeFailing(t, seed, history))
		t.Fatalf("seed %d: the history is not linearizable (%v)", seed, res)
	}
}

// runOp runs a request on the cluster and says what it returned; applied is false when every
// replica refused it without applying it (no leaseholder in time), which the history leaves out.
func runOp(t *testing.T, h *Harness, in lzIn) (out lzOut, applied bool) {
	e := epk.SchemeV2.Hash(epk.Key{epk.String(in.PK)})
	if in.Point {
		d, err := h.Read(Group(1), 2*time.Second, e, in.Ops[0].ID)
		switch {
		case err == nil:
			return lzOut{Results: []lzRes{resultOf(t, d)}}, true
		case fault.KindOf(err) == fault.NotFound:
			return lzOut{Fail: fault.NotFound.String()}, true
		case errors.Is(err, errNoLeader) || partition.Ambiguous(err) || fault.KindOf(err) == fault.Unavailable:
			// A read that did not return did nothing: no leaseholder answered in time (on a
			// loaded machine the last replica asked may still say it holds no lease).
			return lzOut{}, false
		}
		t.Errorf("read %s/%s: %v", in.PK, in.Ops[0].ID, err)
		return lzOut{}, false
	}
	ops := make([]partition.Operation, len(in.Ops))
	for i, op := range in.Ops {
		ops[i] = partition.Operation{Kind: op.Kind, EPK: e, ID: op.ID, IfMatch: op.IfMatch}
		if op.Kind == partition.Create || op.Kind == partition.Replace {
			item, _, err := document.Parse(fmt.Appendf(nil, `{"id":%q,"pk":%q,"v":%d}`, op.ID, in.PK, op.V), [][]string{{"pk"}})
			if err != nil {
				t.Fatal(err)
			}
			ops[i].Item = item
		}
	}
	res, err := h.Execute(Group(1), 2*time.Second, ops...)
	switch {
	case err == nil:
		for i, r := range res {
			lr := lzRes{ETag: r.Doc.ETag(), Found: true}
			if in.Ops[i].Kind == partition.Read {
				lr = resultOf(t, r.Doc)
			}
			if in.Ops[i].Kind == partition.Delete {
				lr = lzRes{}
			}
			out.Results = append(out.Results, lr)
		}
		return out, true
	case partition.Ambiguous(err):
		return lzOut{Unknown: true}, true
	case errors.Is(err, errNoLeader) || errors.Is(err, partition.ErrNotLeaseholder):
		return lzOut{}, false
	}
	var be *partition.BatchError
	index, cause := 0, err
	if errors.As(err, &be) {
		index, cause = be.Index, be.Err
	}
	switch k := fault.KindOf(cause); k {
	case fault.Conflict, fault.NotFound, fault.PreconditionFailed:
		return lzOut{Fail: k.String(), Index: index}, true
	}
	t.Errorf("%s %+v: %v", in.PK, in.Ops, err)
	return lzOut{}, false
}

func resultOf(t *testing.T, d partition.Doc) lzRes {
	var v struct {
		V int `json:"v"`
	}
	if err := json.Unmarshal(d.JSON, &v); err != nil {
		t.Fatal(err)
	}
	return lzRes{ETag: d.ETag(), V: v.V, Found: true}
}

var idleGroups = flag.Int("idle.groups", 0, "groups for TestIdleGroupsCostLittle")

// writeFailing writes, for each logical partition whose history alone is not linearizable, its
// operations in the order they were called, to a text file, and returns the file's path.
func writeFailing(t *testing.T, seed uint64, history []porcupine.Operation) string {
	model := lzModel.ToModel()
	var b strings.Builder
	for _, part := range model.Partition(history) {
		if porcupine.CheckOperations(model, part) {
			continue
		}
		ops := slices.Clone(part)
		slices.SortFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
		// The shortest prefix, by call, that is not linearizable ends with the operation that
		// cannot fit: print from there back.
		lo, hi := 1, len(ops)
		for lo < hi {
			mid := (lo + hi) / 2
			if porcupine.CheckOperations(model, ops[:mid]) {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		fmt.Fprintf(&b, "the first %d operations by call are not linearizable; the last:\n", lo)
		ops = ops[max(0, lo-60):lo]
		for _, op := range ops {
			ret := fmt.Sprint(op.Return)
			if op.Return == 1<<62 {
				ret = "?"
			}
			fmt.Fprintf(&b, "c%d [%d, %s] %s\n", op.ClientId, op.Call, ret, model.DescribeOperation(op.Input, op.Output))
		}
		b.WriteString("\n")
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("partita-linearizability-%d.txt", seed))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Log(err)
	}
	return path
}
