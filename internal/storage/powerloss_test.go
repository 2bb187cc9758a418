package storage

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Power loss, simulated on a MemFS: a DB commits batches, some synced and some not, with
// flushes and compactions now and then, and the power goes at a point the seed chooses:
// between two batches, or inside a sync (of the write-ahead log, a table or the manifest),
// which is then lost. The DB reopened on what survived must hold exactly the writes of a
// prefix of the batches: every batch up to the last synced Commit that returned (an unsynced
// batch before it is durable too, as a split's backfill relies on), none of a batch not yet
// committed, and no batch in part. Each run crashes several times in a row, each reopened
// DB carrying on from what the last one recovered.
//
// The seed fixes the batches, the crash points and the draws that decide which unsynced
// blocks survive; but Pebble's own goroutines may sync at slightly different moments, and
// the crash walks the file system's directories in map order, so a failure names its seed,
// round and crash point rather than promising the same bytes on the next run.
func TestPowerLossKeepsAPrefixOfBatches(t *testing.T) {
	for _, keep := range []int{0, 50} {
		for seed := uint64(1); seed <= 6; seed++ {
			t.Run(fmt.Sprintf("keep-unsynced=%d%%/seed=%d", keep, seed), func(t *testing.T) {
				runBatchPowerLoss(t, seed, keep)
			})
		}
	}
}

const (
	plRounds      = 4
	plBatches     = 40   // per round
	plKeys        = 48   // the key space batches write to
	plMaxValue    = 6000 // bytes; most batches span several 4 KB blocks of the log
	plMaxPerBatch = 6
)

// plState is the DB's content as the model expects it: key -> value.
type plState map[string]string

func runBatchPowerLoss(t *testing.T, seed uint64, keep int) {
	rng := rand.New(rand.NewPCG(seed, uint64(keep)))
	fs := NewMemFS()
	state := plState{}
	for round := range plRounds {
		db, err := Open("/db", Options{FS: fs, CacheSize: 8 << 20})
		if err != nil {
			t.Fatalf("seed %d round %d: reopening after the crash: %v", seed, round, err)
		}
		where := fmt.Sprintf("seed %d keep %d%% round %d", seed, keep, round)
		checkState(t, where+": after reopening", db, []plState{state})

		// states[i] is the content after the first i batches of the round.
		states := []plState{state}
		// acked counts the batches known durable: up to the last synced Commit that returned.
		// started counts the batches whose Commit was called.
		var acked, started atomic.Int64
		crashAt := rng.IntN(plBatches) // the batch before which the power goes...
		inSync := rng.IntN(3) > 0      // ...or, usually, at a sync counted from there
		syncNo := 1 + rng.IntN(4)      // which one
		crashRNG := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
		var (
			mu        sync.Mutex
			crashed   *MemFS
			lo, hi    int64 // the prefixes the crash may keep
			crashNote string
		)
		crash := func(note string) {
			mu.Lock()
			defer mu.Unlock()
			if crashed != nil {
				return
			}
			lo = acked.Load()
			crashed = fs.Crash(keep, crashRNG)
			hi = started.Load()
			crashNote = note
		}
		var syncs atomic.Int64
		for i := range plBatches {
			if i == crashAt {
				if !inSync {
					crash(fmt.Sprintf("before batch %d", i))
				} else {
					fs.BeforeSync(func() {
						if syncs.Add(1) == int64(syncNo) {
							crash(fmt.Sprintf("at the %d. sync from batch %d on", syncNo, i))
						}
					})
				}
			}
			next := maps.Clone(states[len(states)-1])
			b := db.NewBatch()
			n := 1 + rng.IntN(plMaxPerBatch)
			for j := range n {
				k := fmt.Sprintf("k%02d", rng.IntN(plKeys))
				switch r := rng.IntN(10); {
				case r < 7:
					v := plValue(rng, round, i, j)
					if err := b.Set([]byte(k), []byte(v)); err != nil {
						t.Fatal(err)
					}
					next[k] = v
				case r < 9:
					if err := b.Delete([]byte(k)); err != nil {
						t.Fatal(err)
					}
					delete(next, k)
				default:
					end := fmt.Sprintf("k%02d", rng.IntN(plKeys))
					if end < k {
						k, end = end, k
					}
					if err := b.DeleteRange([]byte(k), []byte(end)); err != nil {
						t.Fatal(err)
					}
					for key := range next {
						if key >= k && key < end {
							delete(next, key)
						}
					}
				}
			}
			states = append(states, next)
			synced := rng.IntN(10) < 6
			started.Store(int64(i + 1))
			if synced {
				err = b.Commit()
			} else {
				err = b.CommitUnsynced()
			}
			b.Close()
			if err != nil {
				t.Fatalf("%s: batch %d: %v", where, i, err)
			}
			if synced {
				acked.Store(int64(i + 1))
			}
			// Now and then the memtable becomes a table, and tables compact, so that the power
			// also goes during those (their syncs are counted like the log's).
			switch rng.IntN(12) {
			case 0:
				if err := db.db.Flush(); err != nil {
					t.Fatal(err)
				}
			case 1:
				if err := db.db.Compact(t.Context(), []byte("k"), []byte("l"), false); err != nil {
					t.Fatal(err)
				}
			}
		}
		fs.BeforeSync(nil)
		crash("after the round's last batch") // when the chosen sync never came
		if err := db.Close(); err != nil {
			t.Fatalf("%s: closing the DB that lost power: %v", where, err)
		}

		fs = crashed
		db, err = Open("/db", Options{FS: fs, CacheSize: 8 << 20})
		if err != nil {
			t.Fatalf("%s: reopening after a crash %s: %v", where, crashNote, err)
		}
		where = fmt.Sprintf("%s, crash %s (batches %d to %d may survive)", where, crashNote, lo, hi)
		state = checkState(t, where, db, states[lo:hi+1])
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// plValue is a value that names where it was written, of a length from 1 byte to plMaxValue.
func plValue(rng *rand.Rand, round, batch, op int) string {
	head := fmt.Sprintf("r%d-b%d-o%d:", round, batch, op)
	n := rng.IntN(plMaxValue)
	return head + strings.Repeat(string(rune('a'+batch%26)), n)
}

// checkState fails unless the DB holds exactly one of candidates (the states after the
// prefixes a crash may keep), and returns it.
func checkState(t *testing.T, where string, db *DB, candidates []plState) plState {
	t.Helper()
	got := plState{}
	it, err := db.NewIter([]byte("k"), []byte("l"))
	if err != nil {
		t.Fatal(err)
	}
	for it.First(); it.Valid(); it.Next() {
		got[string(it.Key())] = string(it.Value())
	}
	if err := it.Close(); err != nil {
		t.Fatalf("%s: reading the DB: %v", where, err)
	}
	for _, c := range candidates {
		if maps.Equal(got, c) {
			return c
		}
	}
	t.Fatalf("%s: the DB holds no prefix of the committed batches:\n%s", where, diffStates(got, candidates[0]))
	return nil
}

// diffStates describes how got differs from want, in a few lines.
func diffStates(got, want plState) string {
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	short := func(v string, ok bool) string {
		if !ok {
			return "absent"
		}
		if i := strings.IndexByte(v, ':'); i >= 0 {
			return fmt.Sprintf("%s(%d bytes)", v[:i], len(v))
		}
		return fmt.Sprintf("%q", v)
	}
	var b bytes.Buffer
	for _, k := range keys {
		g, gok := got[k]
		w, wok := want[k]
		if gok != wok || g != w {
			fmt.Fprintf(&b, "  %s: got %s, the first possible prefix has %s\n", k, short(g, gok), short(w, wok))
		}
	}
	return b.String()
}
