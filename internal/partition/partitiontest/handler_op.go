package partitiontest

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/partition"
)

// handleOp Executes one operation on the partition that owns its key (or the one on=N names)
// and prints its outcome.
//
//	create|replace|upsert|delete|read|mutate pk=P id=I [option...] [name=value...]
func (env *Env) handleOp(t *testing.T, d *datadriven.TestData) string {
	env.mustNotBeHeld(t)
	op := env.items.ParseOp(t, d.Cmd, d.CmdArgs)
	res, err := env.target(t, op).Execute(op.Op)
	if err != nil {
		var be *partition.BatchError
		if errors.As(err, &be) {
			return "unexpected BatchError from a single operation: " + err.Error()
		}
		return KindOf(err)
	}
	return env.items.Outcome(op, res[0])
}

// handleBatch Executes the operations of the input, one a line, as one command, on the
// partition of the first.
//
//	batch
//	<operation>
//	...
func (env *Env) handleBatch(t *testing.T, d *datadriven.TestData) string {
	env.mustNotBeHeld(t)
	ops := env.items.ParseBatch(t, d.Input)
	res, err := env.targets(t, ops).Execute(Operations(ops)...)
	return env.items.BatchOutcome(ops, res, err)
}

// handleGet reads an item with Partition.Read, outside the writer.
//
//	get pk=P id=I
func (env *Env) handleGet(t *testing.T, d *datadriven.TestData) string {
	var pk, id string
	d.ScanArgs(t, "pk", &pk)
	d.ScanArgs(t, "id", &id)
	e := env.items.EPK(pk)
	doc, err := env.route(t, e).Read(e, id, nil)
	if err != nil {
		return KindOf(err)
	}
	return env.items.Doc(doc)
}

// handleRace Executes one operation from n goroutines at once, and prints how many ended each
// way.
//
//	race n=N <operation>
func (env *Env) handleRace(t *testing.T, d *datadriven.TestData) string {
	env.mustNotBeHeld(t)
	var n int
	d.ScanArgs(t, "n", &n)
	kind, args := OpArgs(t, d.CmdArgs)
	op := env.items.ParseOp(t, kind, args)
	p := env.target(t, op)
	start := make(chan struct{})
	var mu sync.Mutex
	tally := map[string]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res, err := p.Execute(op.Op)
			out := "ok"
			switch {
			case err != nil:
				out = KindOf(err)
			case res[0].Created:
				out = "created"
			}
			mu.Lock()
			tally[out]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	var keys []string
	for k := range tally {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, tally[k]))
	}
	return strings.Join(parts, ", ")
}
