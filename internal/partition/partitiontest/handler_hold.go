package partitiontest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/partition"
)

// hold is a control request (Partition.Control) that blocks the writer until released.
type hold struct {
	name                   string
	p                      *partition.Partition
	entered, release, done chan struct{}
	releasedOnce           sync.Once
	err                    error
}

// queued is a request in the writer's queue behind a hold: a command, or the next hold.
type queued struct {
	name    string
	hold    *hold // set for a queued hold
	ops     []*Op
	bulk    bool // many creates, printed as one line
	results []partition.Result
	err     error
	done    chan struct{}
}

// handleHold blocks the writer of the single open partition: at once when no other hold is
// pending, otherwise behind what is queued.
//
//	hold name=H
func (env *Env) handleHold(t *testing.T, d *datadriven.TestData) string {
	var name string
	d.ScanArgs(t, "name", &name)
	p := env.parts[0]
	if len(env.parts) > 1 {
		t.Fatal("hold needs a single open partition")
	}
	h := &hold{name: name, p: p, entered: make(chan struct{}), release: make(chan struct{}), done: make(chan struct{})}
	before := p.Queued()
	go func() {
		h.err = p.Control(func() {
			close(h.entered)
			<-h.release
		})
		close(h.done)
	}()
	if env.running == nil {
		// The writer is idle (nothing is queued while it is not held): it runs the hold.
		waitFor(t, "the hold to run", func() bool {
			select {
			case <-h.entered:
				return true
			default:
				return false
			}
		})
		env.running = h
		return "the writer is held"
	}
	waitFor(t, "the hold to be queued", func() bool { return p.Queued() == before+1 })
	env.pending = append(env.pending, &queued{name: name, hold: h, done: h.done})
	return fmt.Sprintf("queued behind %d", before)
}

// handleQueue Executes in the background while the writer is held, and returns once the
// request is in the writer's queue.
//
//	queue name=Q <operation>
//	queue name=Q batch (operations in the input)
//	queue name=Q bulk=N [requests=K] pk=P prefix=X
func (env *Env) handleQueue(t *testing.T, d *datadriven.TestData) string {
	if env.running == nil {
		t.Fatal("queue needs a held writer (hold first)")
	}
	var name string
	d.ScanArgs(t, "name", &name)
	bulk, requests := 0, 1
	d.MaybeScanArgs(t, "bulk", &bulk)
	d.MaybeScanArgs(t, "requests", &requests)
	var out []string
	for r := range requests {
		var ops []*Op
		if bulk > 0 {
			var pk, prefix string
			d.ScanArgs(t, "pk", &pk)
			d.ScanArgs(t, "prefix", &prefix)
			for i := range bulk {
				ops = append(ops, env.items.ParseOp(t, "create", []datadriven.CmdArg{
					{Key: "pk", Vals: []string{pk}}, {Key: "id", Vals: []string{fmt.Sprintf("%s%d-%d", prefix, r, i)}},
					{Key: "n", Vals: []string{strconv.Itoa(i)}}}))
			}
		} else if kind, args := OpArgs(t, d.CmdArgs); kind == "batch" {
			ops = env.items.ParseBatch(t, d.Input)
		} else {
			ops = []*Op{env.items.ParseOp(t, kind, args)}
		}
		p := env.targets(t, ops)
		if p != env.running.p {
			t.Fatal("queued to a partition whose writer is not held")
		}
		q := &queued{name: name, ops: ops, bulk: bulk > 0, done: make(chan struct{})}
		before := p.Queued()
		go func() {
			q.results, q.err = p.Execute(Operations(ops)...)
			close(q.done)
		}()
		waitFor(t, "the request to be queued", func() bool { return p.Queued() == before+1 })
		env.pending = append(env.pending, q)
		for _, e := range env.pending {
			select {
			case <-e.done:
				t.Fatalf("%s was answered while the writer is held", e.name)
			default:
			}
		}
		if r == 0 || r == requests-1 {
			out = append(out, fmt.Sprintf("queued behind %d", before))
		}
	}
	return strings.Join(out, " ... ")
}

// handleRelease lets the running hold return, waits for the queued requests up to the next
// hold (or all of them) and prints their outcomes in queue order.
//
//	release name=H
func (env *Env) handleRelease(t *testing.T, d *datadriven.TestData) string {
	var name string
	d.ScanArgs(t, "name", &name)
	h := env.running
	if h == nil || h.name != name {
		t.Fatalf("%s is not the running hold", name)
	}
	h.releasedOnce.Do(func() { close(h.release) })
	<-h.done
	if h.err != nil {
		t.Fatal(h.err)
	}
	env.running = nil
	var b strings.Builder
	for len(env.pending) > 0 {
		q := env.pending[0]
		if q.hold != nil {
			<-q.hold.entered // the writer reached the next hold
			env.running, env.pending = q.hold, env.pending[1:]
			fmt.Fprintf(&b, "the writer is held by %s\n", q.name)
			break
		}
		<-q.done
		env.pending = env.pending[1:]
		if q.bulk {
			// Consecutive bulk requests of one name print as one line.
			n, created, first, last := 0, 0, uint64(math.MaxUint64), uint64(0)
			for {
				n++
				if q.err == nil {
					for _, r := range q.results {
						if r.Created {
							created++
						}
						first, last = min(first, r.Doc.LSN), max(last, r.Doc.LSN)
					}
				}
				if len(env.pending) == 0 || !env.pending[0].bulk || env.pending[0].name != q.name {
					break
				}
				q = env.pending[0]
				<-q.done
				env.pending = env.pending[1:]
			}
			fmt.Fprintf(&b, "%s: %d commands, %d items created at lsn=%d..%d\n", q.name, n, created, first, last)
			continue
		}
		if len(q.ops) > 1 {
			out := strings.TrimSuffix(env.items.BatchOutcome(q.ops, q.results, q.err), "\n")
			fmt.Fprintf(&b, "%s:\n  %s\n", q.name, strings.ReplaceAll(out, "\n", "\n  "))
			continue
		}
		if q.err != nil {
			fmt.Fprintf(&b, "%s: %s\n", q.name, KindOf(q.err))
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", q.name, env.items.Outcome(q.ops[0], q.results[0]))
	}
	return b.String()
}
