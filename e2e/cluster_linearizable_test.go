package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/anishathalye/porcupine"
)

// A history of one key's writes and reads through the Go SDK.
type regIn struct {
	Key   string
	Write bool
	V     int // the value written
}

type regOut struct {
	V     int
	Found bool
}

// regModel is a register per key: a read returns the last value written before it, or nothing
// before the first write. A write whose outcome the client did not learn returns at the end of
// time: it may have taken effect at any instant after its call, or never.
var regModel = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(regIn).Key
			if by[k] == nil {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		var out [][]porcupine.Operation
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() []any { return []any{regOut{}} },
	Step: func(s, in, out any) []any {
		st, i := s.(regOut), in.(regIn)
		if i.Write {
			if out.(regOut).V < 0 { // unknown outcome: applied or not
				return []any{regOut{V: i.V, Found: true}, st}
			}
			return []any{regOut{V: i.V, Found: true}}
		}
		if out.(regOut) == st {
			return []any{st}
		}
		return nil
	},
	Equal: func(a, b any) bool { return a.(regOut) == b.(regOut) },
}

// Clients on every node of a four-process cluster (three replicas of each partition) upsert
// and read a few items while the replicas and leaderships on the fourth node are moved to the
// others (`partita node drain`), then the node that leads their partitions is killed with
// SIGKILL and another is paused with SIGSTOP for longer than an election takes, then resumed;
// porcupine checks that every key's history is linearizable, and every value acknowledged
// last is read back at the end. The account's level is Strong: at Session a client's reads
// need only follow its own session.
func TestClusterLinearizable(t *testing.T) {
	nodes := startClusterOf(t, 4, func(int) []string { return []string{"--consistency", "Strong"} })
	cx := ctx(t)
	createDBAndContainer(t, nodes[0].sdk(t), nodes[1].sdk(t), 12000)
	keys := []string{"a", "b", "c", "d"}
	var (
		mu      sync.Mutex
		history []porcupine.Operation
		next    atomic.Int64 // the values written, unique
		down    [4]atomic.Bool
		stop    atomic.Bool
		start   = time.Now()
	)
	record := func(client int, in regIn, out regOut, called, returned time.Time) {
		mu.Lock()
		defer mu.Unlock()
		ret := returned.Sub(start).Nanoseconds()
		if returned.IsZero() {
			ret = math.MaxInt64
		}
		history = append(history, porcupine.Operation{ClientId: client, Input: in, Output: out, Call: called.Sub(start).Nanoseconds(), Return: ret})
	}
	var wg sync.WaitGroup
	for client := range 8 {
		n := client % 4
		c, err := nodes[n].sdk(t).NewContainer("db", "c")
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(client), 7))
			for !stop.Load() && !down[n].Load() {
				key := keys[r.IntN(len(keys))]
				pk := azcosmos.NewPartitionKeyString(key)
				opCtx, cancel := context.WithTimeout(cx, 20*time.Second)
				if r.IntN(2) == 0 {
					v := int(next.Add(1))
					body, _ := json.Marshal(map[string]any{"id": key, "pk": key, "v": v})
					called := time.Now()
					_, err := c.UpsertItem(opCtx, pk, body, nil)
					if err != nil {
						record(client, regIn{Key: key, Write: true, V: v}, regOut{V: -1}, called, time.Time{})
					} else {
						record(client, regIn{Key: key, Write: true, V: v}, regOut{}, called, time.Now())
					}
				} else {
					called := time.Now()
					resp, err := c.ReadItem(opCtx, pk, key, nil)
					switch {
					case err == nil:
						var doc struct{ V int }
						json.Unmarshal(resp.Value, &doc)
						record(client, regIn{Key: key}, regOut{V: doc.V, Found: true}, called, time.Now())
					case statusOf(err) == 404:
						if time.Since(start) > time.Second { // every key was written by then
							t.Logf("client %d read %s: %v", client, key, err)
						}
						record(client, regIn{Key: key}, regOut{}, called, time.Now())
					}
					// A read that failed observed nothing.
				}
				cancel()
			}
		}()
	}
	time.Sleep(2 * time.Second)
	began := time.Now()
	out, err := exec.Command(partitaBin, "node", "drain", nodes[3].args[1], "--endpoint", nodes[0].Endpoint, "--timeout", "60s").CombinedOutput()
	if err != nil {
		t.Fatalf("node drain: %v\n%s", err, out)
	}
	t.Logf("node 4 drained in %v while the clients ran", time.Since(began).Round(time.Millisecond))
	down[1].Store(true) // its clients stop before it goes: their writes would all be of unknown outcome
	time.Sleep(100 * time.Millisecond)
	nodes[1].kill() // the container was created through it: it campaigned first in every group
	t.Log("node 2 killed")
	time.Sleep(3 * time.Second)
	nodes[2].cmd.Process.Signal(syscall.SIGSTOP)
	t.Log("node 3 paused")
	time.Sleep(3 * time.Second)
	nodes[2].cmd.Process.Signal(syscall.SIGCONT)
	t.Log("node 3 resumed")
	time.Sleep(2 * time.Second)
	stop.Store(true)
	wg.Wait()

	// Every key read back through a node that stayed up ends the history.
	c0, _ := nodes[0].sdk(t).NewContainer("db", "c")
	for _, key := range keys {
		called := time.Now()
		resp, err := c0.ReadItem(cx, azcosmos.NewPartitionKeyString(key), key, nil)
		out := regOut{}
		if err == nil {
			var doc struct{ V int }
			json.Unmarshal(resp.Value, &doc)
			out = regOut{V: doc.V, Found: true}
		} else if statusOf(err) != 404 {
			t.Fatalf("the final read of %s: %v", key, err)
		}
		record(99, regIn{Key: key}, out, called, time.Now())
	}
	writes, reads := 0, 0
	for _, op := range history {
		if op.Input.(regIn).Write {
			writes++
		} else {
			reads++
		}
	}
	t.Logf("%d writes and %d reads", writes, reads)
	if writes < 50 || reads < 50 {
		t.Fatalf("too little happened: %d writes, %d reads", writes, reads)
	}
	res, _ := porcupine.CheckOperationsVerbose(regModel.ToModel(), history, time.Minute)
	if res != porcupine.Ok {
		// Each key's history alone, the failing ones' in full: which reads saw what.
		for _, ops := range regModel.Partition(history) {
			if r, _ := porcupine.CheckOperationsVerbose(regModel.ToModel(), ops, time.Minute); r == porcupine.Ok {
				continue
			}
			slices.SortFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
			for _, op := range ops {
				in, out := op.Input.(regIn), op.Output.(regOut)
				ret := "∞"
				if op.Return != math.MaxInt64 {
					ret = time.Duration(op.Return).String()
				}
				t.Logf("%s client %d write=%v in=%d out=%+v [%v, %s]", in.Key, op.ClientId, in.Write, in.V, out, time.Duration(op.Call), ret)
			}
		}
		t.Fatalf("the history is not linearizable (%v)", res)
	}

}
