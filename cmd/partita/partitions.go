package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"text/tabwriter"
	"time"

	"github.com/partita-db/partita/internal/api/cosmos"
	"github.com/partita-db/partita/internal/client"
	"github.com/partita-db/partita/internal/engine"
	"github.com/spf13/cobra"
)

func partitionsCommand() *cobra.Command {
	var conn connFlags
	var db, container string
	cmd := &cobra.Command{
		Use:   "partitions",
		Short: "Show a container's physical partitions: ranges, size, request units, throttling, hot and large logical partitions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := fetchPartitions(&conn, db, container)
			if err != nil {
				return err
			}
			printPartitions(cmd.OutOrStdout(), resp)
			return nil
		},
	}
	containerFlags(cmd, &conn, &db, &container)
	cmd.AddCommand(throughputCommand(), redistributeCommand()) // redistribute.go
	return cmd
}

// fetchPartitions asks the server for a container's partitions, signing the request with the
// account key as any Cosmos client would.
func fetchPartitions(conn *connFlags, db, container string) (*cosmos.PartitionsResponse, error) {
	link := "dbs/" + db + "/colls/" + container
	var out cosmos.PartitionsResponse
	err := callJSON(conn, client.Request{Method: http.MethodGet, Type: "partitions", Link: link, Path: client.Path(link) + "/partitions"}, &out)
	return &out, err
}

// callJSON sends req, signed with the account key, and reads the server's JSON answer into out.
func callJSON(conn *connFlags, req client.Request, out any) error {
	c, err := conn.client(client.Options{Timeout: 30 * time.Second})
	if err != nil {
		return err
	}
	resp, err := c.Do(context.Background(), req)
	if err != nil {
		return fmt.Errorf("server answered %w", err)
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return fmt.Errorf("unexpected answer: %w", err)
	}
	return nil
}

func printPartitions(w io.Writer, r *cosmos.PartitionsResponse) {
	fmt.Fprintf(w, "%s / %s: %d physical partitions\n", r.Database, r.Container, len(r.Partitions))
	if r.NonPartitioned {
		fmt.Fprintf(w, "created without a partition key: the system key %s, items without it in one logical partition\n", engine.SystemKeyPath)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ID\tRANGE\tITEMS\tBYTES\tRU/S BUDGET\tRU LAST SEC\tNORMALIZED\t429s\tLARGEST LOGICAL\tHOTTEST LOGICAL\t")
	for _, p := range r.Partitions {
		fmt.Fprintf(tw, "%d\t[%s,%s)\t%d\t%d\t%.0f\t%.1f\t%.0f%%\t%d\t%s\t%s\t\n", p.ID, short(p.MinInclusive), short(p.MaxExclusive),
			p.Items, p.Bytes, p.RUPerSecond, p.RULastSecond, 100*p.NormalizedRU, p.Throttled, firstLogical(p.LargestLogical, false), firstLogical(p.HottestLogical, true))
	}
	tw.Flush()
	for _, k := range r.KeyDeletes {
		fmt.Fprintf(w, "deleting the items of partition key %s (partition %d) since %s\n", k.PartitionKey, k.Partition,
			time.Unix(k.Since, 0).UTC().Format(time.RFC3339))
	}
}

func short(hex string) string {
	if hex == "" {
		return `""`
	}
	if len(hex) > 8 {
		return hex[:8] + "…"
	}
	return hex
}

func firstLogical(ls []cosmos.LogicalJSON, byRU bool) string {
	if len(ls) == 0 {
		return "-"
	}
	name := logicalName(ls[0])
	if byRU {
		return fmt.Sprintf("%s (%.0f RU)", name, ls[0].RU)
	}
	return fmt.Sprintf("%s (%d B)", name, ls[0].Bytes)
}

// logicalName names a logical partition by its key value, as JSON (cut to 24 characters),
// with its EPK's first digits beside it; by the EPK alone when the value is not known.
func logicalName(l cosmos.LogicalJSON) string {
	if len(l.Key) == 0 {
		return short(l.EPK)
	}
	key := string(l.Key)
	if r := []rune(key); len(r) > 24 {
		key = string(r[:23]) + "…"
	}
	return key + " " + short(l.EPK)
}
