package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/partita-db/partita/internal/client"
	"github.com/partita-db/partita/internal/engine"
)

func nodeCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "node", Short: "Manage one node of a cluster (docs/cluster.md)"}
	var conn connFlags
	var cancel, wait bool
	var timeout time.Duration
	drain := &cobra.Command{
		Use:   "drain NODE",
		Short: "Move every replica and leadership off a node, so that it can be stopped with nothing lost",
		Long: `Mark NODE (its cluster address, or its id in hex as 'partita cluster status' shows it)
as being drained, through the node at --endpoint. For each partition with a replica on it,
the partition's leader adds a replica on another node (the least loaded one that holds none),
hands its leadership away if NODE holds it, and removes NODE's replica; no new container
places a replica on it. NODE still serves requests meanwhile, through the nodes that hold the
partitions. With --wait (the default), wait until no partition has a replica on it.

A drain must leave at least as many live nodes holding replicas as each partition has
replicas (the cluster's --replicas, 3 by default), and never fewer than three; otherwise it
is refused (400) and nothing changes. So with the default of three replicas, no node of a
three-node cluster can be drained (there is no fourth node for its replicas): start a fourth
node first, and the drained node's replicas move onto it. With --replicas 0 (a replica on
every node) the other nodes hold every partition already, and the drain only removes NODE's.

The drain outlives the node: a drained node that starts again holds nothing until the drain
is cancelled (--cancel). Then replicas move back onto it as onto a new node (with
--replicas 0, it receives a replica of every partition).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := conn.client(client.Options{Timeout: 10 * time.Second})
			if err != nil {
				return err
			}
			body, _ := json.Marshal(map[string]any{"node": args[0], "cancel": cancel})
			resp, err := cl.Do(context.Background(), client.Request{Method: http.MethodPost, Type: "cluster", Link: "cluster/drain", Path: "/_partita/cluster/drain", Body: body})
			if err != nil {
				return err
			}
			var n engine.ClusterNode
			if err := json.Unmarshal(resp.Body, &n); err != nil {
				return fmt.Errorf("unexpected answer: %w", err)
			}
			out := cmd.OutOrStdout()
			if cancel {
				fmt.Fprintf(out, "Node %s (%x) is no longer drained: it receives a replica of every partition again.\n", n.Addr, n.ID)
				return nil
			}
			fmt.Fprintf(out, "Node %s (%x) is being drained.\n", n.Addr, n.ID)
			if !wait {
				return nil
			}
			deadline := time.Now().Add(timeout)
			for {
				held, err := replicasOn(&conn, n.ID)
				if err == nil && held == 0 {
					fmt.Fprintf(out, "Node %s holds no replica any more: it can be stopped.\n", n.Addr)
					return nil
				}
				if time.Now().After(deadline) {
					if err != nil {
						return fmt.Errorf("the drain did not finish in %s: %w", timeout, err)
					}
					return fmt.Errorf("the drain did not finish in %s: %d partition(s) still have a replica on the node", timeout, held)
				}
				time.Sleep(500 * time.Millisecond)
			}
		},
	}
	conn.add(drain.Flags())
	drain.Flags().BoolVar(&cancel, "cancel", false, "cancel the node's drain")
	drain.Flags().BoolVar(&wait, "wait", true, "wait until the node holds no replica")
	drain.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long --wait waits")
	cmd.AddCommand(drain)
	return cmd
}

// replicasOn counts the partitions whose groups, as the node at the endpoint knows them,
// have a replica on node id. The drained node itself may answer: it holds a replica until
// it applies the replica's removal.
func replicasOn(conn *connFlags, id uint64) (int, error) {
	st, err := fetchStatus(conn, conn.endpoint)
	if err != nil {
		return 0, err
	}
	held := 0
	for _, r := range st.Replicas {
		if slices.Contains(r.Voters, id) || slices.Contains(r.Learners, id) {
			held++
		}
	}
	return held, nil
}
