package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/partita-db/partita/internal/api/cosmos"
	"github.com/partita-db/partita/internal/client"
	"github.com/spf13/cobra"
)

// partita partitions throughput and partita partitions redistribute: each physical partition's
// RU/s, and a redistribution of the container's throughput among them (the service's
// retrieve-partition-throughput and redistribute-partition-throughput).

func throughputCommand() *cobra.Command {
	var conn connFlags
	var db, container string
	cmd := &cobra.Command{
		Use:   "throughput",
		Short: "Show the RU/s of each of a container's physical partitions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := partitionThroughput(&conn, db, container, http.MethodGet, nil)
			if err != nil {
				return err
			}
			printThroughput(cmd.OutOrStdout(), resp)
			return nil
		},
	}
	containerFlags(cmd, &conn, &db, &container)
	return cmd
}

func redistributeCommand() *cobra.Command {
	var conn connFlags
	var db, container, targets, sources string
	var even bool
	cmd := &cobra.Command{
		Use:   "redistribute",
		Short: "Redistribute a container's throughput among its physical partitions",
		Long: `Give some physical partitions more (or less) of the container's RU/s than an even share,
taking the difference evenly from the source partitions (every other one when none is named),
or divide the RU/s evenly again. The container's throughput does not change.

  partita partitions redistribute --db d --container c --target-partition-info "0=2000 1=4000"
  partita partitions redistribute --db d --container c --target-partition-info "0=2000" --source-partition-info "2 3"
  partita partitions redistribute --db d --container c --evenly-distribute`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The server checks the combination, as it checks any client's.
			req := cosmos.RedistributeRequest{Policy: "custom"}
			if even {
				req.Policy = "equal"
			}
			for _, t := range strings.Fields(targets) {
				id, ru, ok := strings.Cut(t, "=")
				n, err := strconv.ParseFloat(ru, 64)
				if !ok || err != nil {
					return fmt.Errorf("--target-partition-info: %q is not ID=RU/S", t)
				}
				req.Targets = append(req.Targets, cosmos.PartitionThroughputJSON{ID: id, Throughput: n})
			}
			for _, s := range strings.Fields(sources) {
				req.Sources = append(req.Sources, cosmos.PartitionThroughputJSON{ID: s})
			}
			body, err := json.Marshal(req)
			if err != nil {
				return err
			}
			resp, err := partitionThroughput(&conn, db, container, http.MethodPost, body)
			if err != nil {
				return err
			}
			printThroughput(cmd.OutOrStdout(), resp)
			return nil
		},
	}
	containerFlags(cmd, &conn, &db, &container)
	f := cmd.Flags()
	f.StringVar(&targets, "target-partition-info", "", `the target partitions and their RU/s, as "ID=RU/S ID=RU/S"`)
	f.StringVar(&sources, "source-partition-info", "", `the partitions to take the difference from, as "ID ID" (default: every partition not a target)`)
	f.BoolVar(&even, "evenly-distribute", false, "divide the container's RU/s evenly among its partitions again")
	return cmd
}

// containerFlags adds the connection flags and --db and --container, both required.
func containerFlags(cmd *cobra.Command, conn *connFlags, db, container *string) {
	f := cmd.Flags()
	conn.add(f)
	f.StringVar(db, "db", "", "database id")
	f.StringVar(container, "container", "", "container id")
	cmd.MarkFlagRequired("db")
	cmd.MarkFlagRequired("container")
}

// partitionThroughput reads (GET) or redistributes (POST, with body) a container's partitions'
// throughput.
func partitionThroughput(conn *connFlags, db, container, method string, body []byte) (*cosmos.PartitionThroughputResponse, error) {
	link := "dbs/" + db + "/colls/" + container + "/partitions/throughput"
	var out cosmos.PartitionThroughputResponse
	err := callJSON(conn, client.Request{Method: method, Type: "partitions", Link: link, Path: client.Path(link), Body: body}, &out)
	return &out, err
}

func printThroughput(w io.Writer, r *cosmos.PartitionThroughputResponse) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ID\tRU/S\t")
	total := 0.0
	for _, p := range r.Partitions {
		fmt.Fprintf(tw, "%s\t%.0f\t\n", p.ID, p.Throughput)
		total += p.Throughput
	}
	fmt.Fprintf(tw, "all\t%.0f\t\n", total)
	tw.Flush()
}
