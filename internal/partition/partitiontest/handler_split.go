package partitiontest

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
)

// handleSplit drives a Split of the partition that owns the split point.
//
//	split-start (at=HEX | at-pk=P) left=L right=R
//	split-backfill
//	split-commit
//	split-abort
func (env *Env) handleSplit(t *testing.T, d *datadriven.TestData) string {
	env.mustNotBeHeld(t)
	switch d.Cmd {
	case "split-start":
		return env.splitStart(t, d)
	case "split-backfill":
		return env.splitBackfill(t)
	case "split-abort":
		return env.splitAbort()
	case "split-commit":
		return env.splitCommit(t)
	}
	return ""
}

// splitStart starts the split and prints the logical partitions that hold items, by the side
// they go to.
func (env *Env) splitStart(t *testing.T, d *datadriven.TestData) string {
	var hex, pk string
	var left, right uint32
	d.MaybeScanArgs(t, "at", &hex)
	d.MaybeScanArgs(t, "at-pk", &pk)
	d.ScanArgs(t, "left", &left)
	d.ScanArgs(t, "right", &right)
	at := epk.EPK("")
	if pk != "" {
		at = env.items.EPK(pk)
	} else {
		var err error
		if at, err = epk.ParseHex(hex); err != nil {
			t.Fatal(err)
		}
	}
	p := env.parts[0]
	for _, q := range env.parts {
		if q.Range().Contains(at) {
			p = q
		}
	}
	sp, err := p.StartSplit(at, left, right)
	if err != nil {
		return KindOf(err)
	}
	env.split = sp
	records, err := partition.LogicalRecords(env.db, container, p.Range())
	if err != nil {
		t.Fatal(err)
	}
	var l, r []string
	for _, rec := range records {
		if rec.EPK < at {
			l = append(l, env.items.PKName(rec.EPK))
		} else {
			r = append(r, env.items.PKName(rec.EPK))
		}
	}
	sort.Strings(l)
	sort.Strings(r)
	return fmt.Sprintf("p%d splits at %s: p%d gets %s; p%d gets %s",
		p.ID(), at.Hex(), left, strings.Join(l, " "), right, strings.Join(r, " "))
}

// splitBackfill waits for the children's build and prints how many index entries each has.
func (env *Env) splitBackfill(t *testing.T) string {
	if err := env.split.Backfill(); err != nil {
		return "error: " + err.Error()
	}
	ch := env.split.Children()
	return fmt.Sprintf("p%d: %s; p%d: %s", ch[0].ID, env.indexEntries(t, ch[0].ID, ""),
		ch[1].ID, env.indexEntries(t, ch[1].ID, ""))
}

// splitAbort aborts the split, and says whether the partition still captures for it.
func (env *Env) splitAbort() string {
	sp := env.split
	if err := sp.Abort(); err != nil {
		return "error: " + err.Error()
	}
	env.split = nil
	p := sp.Partition()
	return fmt.Sprintf("aborted; p%d still captures: %v", p.ID(), p.Capturing())
}

// splitCommit commits the split, opens the children as the engine opens a range, and checks
// that their items and bytes sum to the parent's.
func (env *Env) splitCommit(t *testing.T) string {
	sp := env.split
	if err := sp.Commit(nil); err != nil {
		return "error: " + err.Error()
	}
	env.split = nil
	parent := sp.Partition()
	var b strings.Builder
	fmt.Fprintf(&b, "%s (closed)\n", describe(parent))
	var sum tally
	var children []*partition.Partition
	for _, c := range sp.Children() {
		child, err := partition.Open(env.config(c.ID, c.Range)) // as the engine opens a range
		if err != nil {
			t.Fatal(err)
		}
		children = append(children, child)
		st := child.Stats()
		sum = sum.add(st.Items, st.Bytes)
		fmt.Fprintf(&b, "%s\n", describe(child))
	}
	pst := parent.Stats()
	fmt.Fprintf(&b, "the children's items and bytes sum to the parent's: %v", sum == tally{Items: pst.Items, Bytes: pst.Bytes})
	var parts []*partition.Partition
	for _, q := range env.parts {
		if q == parent {
			parts = append(parts, children...)
		} else {
			parts = append(parts, q)
		}
	}
	env.parts, env.parents = parts, append(env.parents, parent)
	return b.String()
}
