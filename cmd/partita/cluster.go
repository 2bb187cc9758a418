package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/partita-db/partita/internal/client"
	"github.com/partita-db/partita/internal/engine"
)

func clusterCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "cluster", Short: "Look at a cluster of Partita nodes (docs/cluster.md)"}
	var conn connFlags
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the cluster's nodes and every partition's leader, replicas, their lag and quorum",
		Long: `Ask the node at --endpoint for the cluster's nodes (live, or down: registered once and
not live now), then every live node for its replicas, and show, per physical partition, the
node that leads it, each replica's LSN (a replica on a node that is down or did not answer is
marked so, with how many entries it lacks as its leader knows), the lag of the replica
furthest behind, and whether the partition has a leader and is one failure from losing its
quorum. A node that does not answer is shown as such.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			first, err := fetchStatus(&conn, conn.endpoint)
			if err != nil {
				return err
			}
			statuses := map[uint64]*engine.NodeStatus{first.Node: first}
			failed := map[uint64]error{}
			u, _ := url.Parse(conn.endpoint)
			for _, n := range first.Nodes {
				if _, ok := statuses[n.ID]; ok || n.API == "" || n.Down {
					continue
				}
				st, err := fetchStatus(&conn, u.Scheme+"://"+n.API+"/")
				if err != nil {
					failed[n.ID] = err
					continue
				}
				statuses[n.ID] = st
			}
			printClusterStatus(cmd.OutOrStdout(), first, statuses, failed)
			return nil
		},
	}
	conn.add(status.Flags())
	cmd.AddCommand(status)
	return cmd
}

func fetchStatus(conn *connFlags, endpoint string) (*engine.NodeStatus, error) {
	c := *conn
	c.endpoint = endpoint
	cl, err := c.client(client.Options{Timeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	resp, err := cl.Do(context.Background(), client.Request{Method: http.MethodGet, Type: "cluster", Path: "/_partita/cluster"})
	if err != nil {
		return nil, fmt.Errorf("%s answered %w", endpoint, err)
	}
	var st engine.NodeStatus
	if err := json.Unmarshal(resp.Body, &st); err != nil {
		return nil, fmt.Errorf("%s: unexpected answer: %w", endpoint, err)
	}
	return &st, nil
}

func printClusterStatus(w io.Writer, first *engine.NodeStatus, statuses map[uint64]*engine.NodeStatus, failed map[uint64]error) {
	if first.Node == 0 {
		fmt.Fprintln(w, "A node alone (not a member of a cluster).")
	}
	for _, st := range statuses {
		if st.ControlPlane != "" {
			fmt.Fprintf(w, "Node %x: %s\n", st.Node, st.ControlPlane)
		}
		if st.Node != 0 && !st.Registered {
			fmt.Fprintf(w, "Node %x is alive but not registered in the control plane: it cannot reach a majority of the founding nodes, and registers again by itself.\n", st.Node)
		}
		if st.Node != 0 && !st.Ready && st.NotReady != "" {
			fmt.Fprintf(w, "Node %x is not ready: %s\n", st.Node, st.NotReady)
		}
	}
	if first.Node != 0 {
		// A node of a release before versions states none: it runs at Base, v1.
		fmt.Fprintf(w, "Cluster version v%d (node %x's release knows up to v%d).\n", max(first.ClusterVersion, 1), first.Node, max(first.KnownVersion, 1))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	name := map[uint64]string{}
	if len(first.Nodes) > 0 {
		fmt.Fprintln(tw, "NODE\tCLUSTER ADDRESS\tAPI\tCQL\tRELEASE\tSTATUS")
		for _, n := range first.Nodes {
			name[n.ID] = n.Addr
			state := "live"
			switch {
			case n.Down:
				state = "down (not live in the control plane)"
			case n.Draining:
				state = "live, draining"
			}
			if err := failed[n.ID]; err != nil {
				state = "live, but its API did not answer: " + err.Error()
			}
			fmt.Fprintf(tw, "%x\t%s\t%s\t%s\tknows v%d\t%s\n", n.ID, n.Addr, n.API, n.CQL, max(n.Version, 1), state)
		}
		fmt.Fprintln(tw)
	}
	type key struct {
		db, container string
		partition     uint32
	}
	type row struct {
		leader  uint64
		lsns    map[uint64]uint64
		members []engine.GroupMember // as the leader knows them
		quorum  string
		items   int64
		bytes   int64
	}
	rows := map[key]*row{}
	var keys []key
	for node, st := range statuses {
		for _, r := range st.Replicas {
			k := key{r.Database, r.Container, r.Partition}
			rw := rows[k]
			if rw == nil {
				rw = &row{lsns: map[uint64]uint64{}}
				rows[k] = rw
				keys = append(keys, k)
			}
			if r.Leading || rw.leader == 0 {
				rw.leader = r.Leader
				if r.Leading {
					rw.leader, rw.items, rw.bytes = node, r.Items, r.Bytes
					rw.members, rw.quorum = r.Members, r.Quorum
				}
			}
			rw.lsns[node] = r.LSN
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.db != b.db {
			return a.db < b.db
		}
		if a.container != b.container {
			return a.container < b.container
		}
		return a.partition < b.partition
	})
	fmt.Fprintln(tw, "DATABASE\tCONTAINER\tPARTITION\tLEADER\tREPLICAS (NODE:LSN)\tLAG\tQUORUM\tITEMS\tBYTES")
	for _, k := range keys {
		rw := rows[k]
		var reps []string
		var hi, lo uint64
		nodes := make([]uint64, 0, len(rw.lsns))
		for n := range rw.lsns {
			nodes = append(nodes, n)
		}
		sort.Slice(nodes, func(i, j int) bool { return nodes[i] < nodes[j] })
		for i, n := range nodes {
			l := rw.lsns[n]
			reps = append(reps, fmt.Sprintf("%s:%d", nodeName(name, n), l))
			if i == 0 || l > hi {
				hi = l
			}
			if i == 0 || l < lo {
				lo = l
			}
		}
		// Replicas on nodes that did not answer, as the leader knows them.
		for _, m := range rw.members {
			if _, ok := rw.lsns[m.Node]; ok {
				continue
			}
			state := "no answer"
			if m.Down {
				state = "down"
			}
			reps = append(reps, fmt.Sprintf("%s:(%s, %d entries behind)", nodeName(name, m.Node), state, m.Lag))
		}
		leader := "none known"
		if rw.leader != 0 || first.Node == 0 {
			leader = nodeName(name, rw.leader)
		}
		quorum := rw.quorum
		switch {
		case first.Node == 0:
			quorum = "-"
		case rw.leader == 0:
			quorum = "no leader"
		case quorum == "":
			quorum = "unknown (its leader did not answer)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d\t%s\t%d\t%d\n", k.db, k.container, k.partition, leader, strings.Join(reps, " "), hi-lo, quorum, rw.items, rw.bytes)
	}
	tw.Flush()
}

func nodeName(names map[uint64]string, id uint64) string {
	if n, ok := names[id]; ok {
		return n
	}
	if id == 0 {
		return "this node"
	}
	return fmt.Sprintf("%x", id)
}
