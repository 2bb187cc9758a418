package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
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
	"github.com/gocql/gocql"
)

// A history of one key's writes and reads.
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
		hist = newRegisterHistory()
		next atomic.Int64 // the values written, unique
		down [4]atomic.Bool
		stop atomic.Bool
	)
	record, start := hist.record, hist.start
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
	killLeadersThenPause(t, nodes, &down[1]) // the container was created through node 2
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
	hist.check(t)
}

// killLeadersThenPause is the linearizability tests' faults, about 8 s of them: node 2, through
// which the data was created (so it campaigned first in every group and leads them), is killed
// once its clients stopped (down2: their writes would all be of unknown outcome); then node 3
// is paused for longer than an election takes, and resumed.
func killLeadersThenPause(t *testing.T, nodes []*clusterNode, down2 *atomic.Bool) {
	down2.Store(true)
	time.Sleep(100 * time.Millisecond)
	nodes[1].kill()
	t.Log("node 2 killed")
	time.Sleep(3 * time.Second)
	nodes[2].cmd.Process.Signal(syscall.SIGSTOP)
	t.Log("node 3 paused")
	time.Sleep(3 * time.Second)
	nodes[2].cmd.Process.Signal(syscall.SIGCONT)
	t.Log("node 3 resumed")
	time.Sleep(2 * time.Second)
}

// registerHistory is a history of operations on registers (regModel), as clients record them.
type registerHistory struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
}

func newRegisterHistory() *registerHistory { return &registerHistory{start: time.Now()} }

// record adds an operation; a zero returned is a write whose outcome the client did not learn.
func (h *registerHistory) record(client int, in regIn, out regOut, called, returned time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ret := returned.Sub(h.start).Nanoseconds()
	if returned.IsZero() {
		ret = math.MaxInt64
	}
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Output: out, Call: called.Sub(h.start).Nanoseconds(), Return: ret})
}

// check fails t unless enough happened and porcupine finds every key's history linearizable;
// it prints the failing keys' histories in full.
func (h *registerHistory) check(t *testing.T) {
	t.Helper()
	writes, reads := 0, 0
	for _, op := range h.ops {
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
	res, _ := porcupine.CheckOperationsVerbose(regModel.ToModel(), h.ops, time.Minute)
	if res == porcupine.Ok {
		return
	}
	// Each key's history alone, the failing ones' in full: which reads saw what.
	for _, ops := range regModel.Partition(h.ops) {
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

// The same check through the Cassandra API: gocql sessions on each node of a three-process
// cluster write and read registers (rows of one table) at QUORUM, which Partita serves as
// Strong, while the node that leads their partitions is killed and another is paused for
// longer than an election takes. A write that failed may have been applied (a write timeout)
// and is recorded as of unknown outcome; porcupine checks every key's history.
func TestClusterCQLLinearizable(t *testing.T) {
	nodes, sessions, cqlAddrs := startCQLCluster(t)
	mustExec(t, sessions[1], `CREATE KEYSPACE lin WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`)
	mustExec(t, sessions[1], `CREATE TABLE lin.reg (k text PRIMARY KEY, v int) WITH cosmosdb_provisioned_throughput = 12000`)
	keys := []string{"a", "b", "c", "d"}
	var (
		hist = newRegisterHistory()
		next atomic.Int64
		down [3]atomic.Bool
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	for client := range 6 {
		n := client % 3
		s := sessions[n]
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(client), 11))
			for !stop.Load() && !down[n].Load() {
				key := keys[r.IntN(len(keys))]
				opCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				called := time.Now()
				if r.IntN(2) == 0 {
					v := int(next.Add(1))
					out, returned := regOut{}, time.Time{}
					err := s.Query(`INSERT INTO lin.reg (k, v) VALUES (?, ?)`, key, v).WithContext(opCtx).Exec()
					switch {
					case err == nil:
						returned = time.Now()
					case errors.Is(err, gocql.ErrNoConnections):
						// Never sent: the driver has no connection to its node (it may give up
						// on it while the cluster has no quorum); it reconnects by itself.
						cancel()
						time.Sleep(100 * time.Millisecond)
						continue
					default:
						out.V = -1 // perhaps applied
					}
					hist.record(client, regIn{Key: key, Write: true, V: v}, out, called, returned)
				} else {
					var v int
					err := s.Query(`SELECT v FROM lin.reg WHERE k = ?`, key).WithContext(opCtx).Scan(&v)
					switch {
					case err == nil:
						hist.record(client, regIn{Key: key}, regOut{V: v, Found: true}, called, time.Now())
					case errors.Is(err, gocql.ErrNotFound):
						hist.record(client, regIn{Key: key}, regOut{}, called, time.Now())
					default:
						time.Sleep(20 * time.Millisecond) // a read that failed observed nothing
					}
				}
				cancel()
			}
		})
	}
	time.Sleep(2 * time.Second)
	killLeadersThenPause(t, nodes, &down[1]) // the table was created through node 2
	stop.Store(true)
	wg.Wait()
	// Every key read back through a node that stayed up, in a new session (the drivers'
	// pools may have given up on their hosts while the cluster had no quorum), ends the history.
	final := nodeSession(t, cqlAddrs[0])
	for _, key := range keys {
		retrying(t, "the final read of "+key, func() error {
			called := time.Now()
			var v int
			out := regOut{}
			err := final.Query(`SELECT v FROM lin.reg WHERE k = ?`, key).Scan(&v)
			switch {
			case err == nil:
				out = regOut{V: v, Found: true}
			case !errors.Is(err, gocql.ErrNotFound):
				return err
			}
			hist.record(99, regIn{Key: key}, out, called, time.Now())
			return nil
		})
	}
	hist.check(t)
}
