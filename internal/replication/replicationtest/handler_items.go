package replicationtest

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/partition/partitiontest"
	"github.com/partita-db/partita/internal/replication"
)

// itemCmd handles the item operations, batch, get and items, on a group's leaseholder.
func (in *Interaction) itemCmd(d *datadriven.TestData) string {
	t := in.t
	args := d.CmdArgs
	var g replication.GroupID
	if d.HasArg("group") {
		g = in.group(d)
		var rest []datadriven.CmdArg
		for _, a := range args {
			if a.Key != "group" {
				rest = append(rest, a)
			}
		}
		args = rest
	}
	switch d.Cmd {
	case "items":
		return in.listItems(g)
	case "get":
		var pk, id string
		d.ScanArgs(t, "pk", &pk)
		d.ScanArgs(t, "id", &id)
		e := in.items.EPK(pk)
		if g == 0 {
			g = in.owner(e)
		}
		doc, err := in.h.Read(g, opTimeout, e, id)
		if err != nil {
			return partitiontest.KindOf(err)
		}
		return in.items.Doc(doc)
	case "batch":
		ops := in.items.ParseBatch(t, d.Input)
		if g == 0 {
			g = in.owner(ops[0].Op.EPK)
		}
		res, err := in.h.Execute(g, opTimeout, partitiontest.Operations(ops)...)
		return in.items.BatchOutcome(ops, res, err)
	}
	op := in.items.ParseOp(t, d.Cmd, args)
	if g == 0 {
		g = in.owner(op.Op.EPK)
	}
	res, err := in.h.Execute(g, opTimeout, op.Op)
	if err != nil {
		return partitiontest.KindOf(err)
	}
	return in.items.Outcome(op, res[0])
}

// listItems prints the items of g's leaseholder, in its creation order.
func (in *Interaction) listItems(g replication.GroupID) string {
	n := in.leaderOf(g)
	var out []string
	err := n.call(g, func(p *partition.Partition) error {
		return p.Scan([]epk.Range{epk.All}, 0, func(d partition.Doc) bool {
			out = append(out, fmt.Sprintf("%s %s", in.items.ItemName(d.EPK(), d.ID()), in.items.Body(d.JSON)))
			return true
		})
	})
	if err != nil {
		return partitiontest.KindOf(err)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "\n")
}
