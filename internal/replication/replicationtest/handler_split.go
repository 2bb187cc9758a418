package replicationtest

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/partition/partitiontest"
	"github.com/partita-db/partita/internal/replication"
)

// split handles split: the three entries of a split on the group's leaseholder.
func (in *Interaction) split(d *datadriven.TestData) string {
	t := in.t
	g := in.group(d)
	var pk string
	var left, right uint32
	d.ScanArgs(t, "at-pk", &pk)
	d.ScanArgs(t, "left", &left)
	d.ScanArgs(t, "right", &right)
	at := in.items.EPK(pk)
	n := in.leaderOf(g)
	var children [2]partition.Child
	err := n.call(g, func(p *partition.Partition) error {
		s, err := p.StartSplit(at, left, right)
		if err != nil {
			return err
		}
		defer s.Abort()
		children = s.Children()
		if err := s.Backfill(); err != nil {
			return err
		}
		return s.Commit(nil)
	})
	if err != nil {
		return partitiontest.KindOf(err) + ": " + err.Error()
	}
	for _, c := range children {
		in.groups[Group(c.ID)] = c.Range
	}
	delete(in.groups, g)
	in.h.Stabilize()
	// A child's leader proposes its lease from a goroutine of its own, which a busy machine
	// may run after the cluster looked quiet: the status waits for it.
	for _, c := range children {
		in.awaitLease(Group(c.ID))
	}
	in.h.Stabilize()
	var b strings.Builder
	fmt.Fprintf(&b, "group %d split at %s into %d and %d\n", PartitionOf(g), at.Hex(), left, right)
	for _, c := range children {
		b.WriteString(in.status(Group(c.ID)) + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// check handles check: every replica of a group holds the same bytes at the same index.
func (in *Interaction) check(d *datadriven.TestData) string {
	gs := in.sortedGroups()
	if d.HasArg("group") {
		gs = []replication.GroupID{in.group(d)}
	}
	noIndex := d.HasArg("noindex")
	in.h.Tick(3)
	in.h.Stabilize()
	var out []string
	for _, g := range gs {
		type seen struct {
			hash, applied uint64
			nodes         []string
		}
		var all []seen
		for _, n := range in.h.Nodes() {
			hash, applied, ok, err := n.StateHash(g)
			if err != nil {
				in.t.Fatal(err)
			}
			if !ok {
				continue
			}
			found := false
			for i := range all {
				if all[i].hash == hash && all[i].applied == applied {
					all[i].nodes = append(all[i].nodes, fmt.Sprintf("n%d", n.ID))
					found = true
				}
			}
			if !found {
				all = append(all, seen{hash, applied, []string{fmt.Sprintf("n%d", n.ID)}})
			}
		}
		switch len(all) {
		case 0:
			out = append(out, fmt.Sprintf("group %d: no replica", PartitionOf(g)))
		case 1:
			at := fmt.Sprintf(" at applied=%d", all[0].applied)
			if noIndex {
				at = ""
			}
			out = append(out, fmt.Sprintf("group %d: %d replicas agree%s (%s)", PartitionOf(g),
				len(all[0].nodes), at, strings.Join(all[0].nodes, ",")))
		default:
			var parts []string
			for _, s := range all {
				parts = append(parts, fmt.Sprintf("%s at applied=%d", strings.Join(s.nodes, ","), s.applied))
			}
			out = append(out, fmt.Sprintf("group %d: REPLICAS DIFFER: %s", PartitionOf(g), strings.Join(parts, "; ")))
		}
	}
	return strings.Join(out, "\n")
}
