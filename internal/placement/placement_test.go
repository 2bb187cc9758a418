package placement_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/placement"
	"github.com/partita-db/partita/internal/replication"
)

// TestPlacement runs the scenarios of testdata/: a view of the cluster and groups' statuses,
// written by hand, and what placement decides in them. The commands:
//
//	view                    the cluster, a node a line: "live n1 store=1 [draining]",
//	                        or "gone n3" (missing for longer than dead-after)
//	group NAME replica=R commit=C
//	                        a group as its leader (replica R) sees it, a member a line:
//	                        "r1 n1 s1 voter|learner|outgoing [match=M] [active]" (the leader's own
//	                        replica is active)
//	next NAME [replicas=N] [moves=N] [weight=W] [load=(n1:L, ...)]
//	                        the group's next change, and the load and moves after it
//	initial self=N [replicas=N] [load=(n1:L, ...)]
//	                        where a new container's groups start
//	leaders self=N groups=(NAME, ...) leads=(n1:L, ...)
//	                        the leaderships node N may hand away, best first
//	turn at=DURATION        the node whose turn it is to move replicas at that time
func TestPlacement(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var v placement.View
		groups := map[string]replication.Status{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "view":
				v = parseView(t, d.Input)
				return ""
			case "group":
				groups[d.CmdArgs[0].Key] = parseGroup(t, d)
				return ""
			case "next":
				st, ok := groups[d.CmdArgs[0].Key]
				if !ok {
					t.Fatalf("%s: no group %s", d.Pos, d.CmdArgs[0].Key)
				}
				pol := placement.Policy{Load: loadArg(t, d)}
				pol.Replicas = intArg(t, d, "replicas")
				pol.Moves = intArg(t, d, "moves")
				pol.Weight = 1
				if d.HasArg("weight") {
					var w string
					d.ScanArgs(t, "weight", &w)
					pol.Weight = parseFloat(t, w)
				}
				out := placement.Describe(placement.Next(st, v, &pol), st.Descriptor.Members) + "\n"
				if pol.Load != nil {
					out += "load: " + formatLoad(pol.Load) + "\n"
				}
				if d.HasArg("moves") {
					out += fmt.Sprintf("moves left: %d\n", pol.Moves)
				}
				return out
			case "initial":
				ms, err := placement.Initial(v, nodeArg(t, d, "self"), intArg(t, d, "replicas"), loadArg(t, d))
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				var out strings.Builder
				for _, m := range ms {
					fmt.Fprintf(&out, "r%d n%d s%d\n", m.Replica, m.Node, m.Store)
				}
				return out.String()
			case "leaders":
				var settled []placement.Led
				var names []string
				for _, a := range d.CmdArgs {
					if a.Key == "groups" {
						names = a.Vals
					}
				}
				byID := map[replication.GroupID]string{}
				for i, name := range names {
					st, ok := groups[name]
					if !ok {
						t.Fatalf("%s: no group %s", d.Pos, name)
					}
					id := replication.GroupID(i + 1)
					byID[id] = name
					settled = append(settled, placement.Led{Group: id, Status: st})
				}
				leads := map[replication.NodeID]int{}
				for n, l := range pairs(t, d, "leads") {
					leads[n] = int(l)
				}
				var out strings.Builder
				for _, tr := range placement.LeaderTransfers(v, nodeArg(t, d, "self"), settled, leads) {
					fmt.Fprintf(&out, "%s: hand the leadership to replica %d\n", byID[tr.Group], tr.To)
				}
				if out.Len() == 0 {
					return "none\n"
				}
				return out.String()
			case "turn":
				var at string
				d.ScanArgs(t, "at", &at)
				dur, err := time.ParseDuration(at)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range slices.Sorted(maps.Keys(v.Live)) {
					if placement.Turn(v, n, time.Unix(0, 0).Add(dur)) {
						return fmt.Sprintf("n%d\n", n)
					}
				}
				return "nobody\n"
			default:
				t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
				return ""
			}
		})
	})
}

func parseView(t *testing.T, input string) placement.View {
	v := placement.View{Live: map[replication.NodeID]placement.Node{}, Gone: map[replication.NodeID]bool{}}
	for _, line := range lines(input) {
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("view: %q", line)
		}
		id := replication.NodeID(num(t, f[1], "n"))
		switch f[0] {
		case "live":
			var n placement.Node
			for _, a := range f[2:] {
				switch {
				case a == "draining":
					n.Draining = true
				case strings.HasPrefix(a, "store="):
					n.Store = replication.StoreID(num(t, strings.TrimPrefix(a, "store="), ""))
				default:
					t.Fatalf("view: %q", line)
				}
			}
			v.Live[id] = n
		case "gone":
			v.Gone[id] = true
		default:
			t.Fatalf("view: %q", line)
		}
	}
	return v
}

func parseGroup(t *testing.T, d *datadriven.TestData) replication.Status {
	st := replication.Status{Leading: true, Match: map[replication.ReplicaID]uint64{}, Active: map[replication.ReplicaID]bool{}}
	var r, c int
	d.ScanArgs(t, "replica", &r)
	d.ScanArgs(t, "commit", &c)
	st.Replica, st.Leader, st.Commit = replication.ReplicaID(r), replication.ReplicaID(r), uint64(c)
	st.Active[st.Replica] = true
	for _, line := range lines(d.Input) {
		f := strings.Fields(line)
		if len(f) < 4 {
			t.Fatalf("group: %q", line)
		}
		m := replication.Member{Replica: replication.ReplicaID(num(t, f[0], "r")), Node: replication.NodeID(num(t, f[1], "n")),
			Store: replication.StoreID(num(t, f[2], "s"))}
		st.Descriptor.Members = append(st.Descriptor.Members, m)
		switch f[3] {
		case "voter":
			st.Descriptor.Voters = append(st.Descriptor.Voters, m.Replica)
		case "learner":
			st.Descriptor.Learners = append(st.Descriptor.Learners, m.Replica)
		case "outgoing": // a voter of the outgoing configuration only, in a joint one
			st.Descriptor.VotersOutgoing = append(st.Descriptor.VotersOutgoing, m.Replica)
		default:
			t.Fatalf("group: %q", line)
		}
		for _, a := range f[4:] {
			switch {
			case a == "active":
				st.Active[m.Replica] = true
			case strings.HasPrefix(a, "match="):
				st.Match[m.Replica] = num(t, strings.TrimPrefix(a, "match="), "")
			default:
				t.Fatalf("group: %q", line)
			}
		}
	}
	return st
}

func lines(s string) []string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// num parses a number written with a prefix (n1, r2, s3).
func num(t *testing.T, s, prefix string) uint64 {
	n, err := strconv.ParseUint(strings.TrimPrefix(s, prefix), 10, 64)
	if err != nil || !strings.HasPrefix(s, prefix) {
		t.Fatalf("%q is not a number with the prefix %q", s, prefix)
	}
	return n
}

func parseFloat(t *testing.T, s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func intArg(t *testing.T, d *datadriven.TestData, key string) int {
	var n int
	if d.HasArg(key) {
		d.ScanArgs(t, key, &n)
	}
	return n
}

func nodeArg(t *testing.T, d *datadriven.TestData, key string) replication.NodeID {
	var s string
	d.ScanArgs(t, key, &s)
	return replication.NodeID(num(t, s, "n"))
}

// pairs reads an argument key=(n1:2, n2:0.5) as a value per node.
func pairs(t *testing.T, d *datadriven.TestData, key string) map[replication.NodeID]float64 {
	for _, a := range d.CmdArgs {
		if a.Key != key {
			continue
		}
		out := map[replication.NodeID]float64{}
		for _, val := range a.Vals {
			n, l, ok := strings.Cut(val, ":")
			if !ok {
				t.Fatalf("%s: %q is not node:value", d.Pos, val)
			}
			out[replication.NodeID(num(t, n, "n"))] = parseFloat(t, l)
		}
		return out
	}
	return nil
}

func loadArg(t *testing.T, d *datadriven.TestData) map[replication.NodeID]float64 {
	return pairs(t, d, "load")
}

func formatLoad(load map[replication.NodeID]float64) string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(load)) {
		out = append(out, fmt.Sprintf("n%d:%g", n, load[n]))
	}
	return strings.Join(out, " ")
}
