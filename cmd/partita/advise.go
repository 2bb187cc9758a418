package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/partita-db/partita/internal/advisor"
	"github.com/partita-db/partita/internal/client"
)

func adviseCommand() *cobra.Command {
	var conn connFlags
	var db, container, file, queries, current string
	var asJSON bool
	var sample, partitions int
	var writeRate, growth float64
	var totalItems, totalBytes int64
	cmd := &cobra.Command{
		Use:   "advise",
		Short: "Rank partition keys for a container (or a JSON lines file) and propose synthetic keys",
		Long: "advise judges candidate partition keys by cardinality, storage and request skew, query fan-out,\n" +
			"missing values and the 20 GB logical partition cap, from a sample of a container's items\n" +
			"(--db, --container: asks the server) or of a file (--file: JSON lines or a JSON array, no server).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var adv *advisor.Advice
			var err error
			switch {
			case file != "" && (db != "" || container != ""):
				return fmt.Errorf("give either --file or --db and --container, not both")
			case file != "" && sample != 0:
				return fmt.Errorf("--sample is for --db and --container; --file judges every item of the file")
			case file != "":
				adv, err = adviseFile(file, queries, current, partitions, writeRate, growth, totalItems, totalBytes)
			case db != "" && container != "":
				if queries != "" || current != "" || totalItems != 0 || totalBytes != 0 {
					return fmt.Errorf("--queries, --current, --total-items and --total-bytes are for --file; the server knows its own")
				}
				adv, err = fetchAdvice(&conn, db, container, sample, partitions, writeRate, growth)
			default:
				return fmt.Errorf("give --db and --container, or --file")
			}
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(adv)
			}
			printAdvice(cmd.OutOrStdout(), adv)
			return nil
		},
	}
	f := cmd.Flags()
	conn.add(f)
	f.StringVar(&db, "db", "", "database id")
	f.StringVar(&container, "container", "", "container id")
	f.IntVar(&sample, "sample", 0, "items the server samples (default 2000, at most 10000)")
	f.StringVar(&file, "file", "", "judge the items of this file (JSON lines or a JSON array; - for stdin) instead of a container")
	f.StringVar(&queries, "queries", "", "with --file: a file of query texts, one per line (repeat a line to weigh it)")
	f.StringVar(&current, "current", "", "with --file: the current partition key paths, comma-separated (e.g. /tenant,/user)")
	f.Int64Var(&totalItems, "total-items", 0, "with --file: the items of the whole container the file samples (default: the file is all of it)")
	f.Int64Var(&totalBytes, "total-bytes", 0, "with --file: the bytes of the whole container (default: scaled from the file)")
	f.IntVar(&partitions, "partitions", 0, "physical partitions of the predicted spreads (default: the container's, at least 4)")
	f.Float64Var(&writeRate, "write-rate", 0, "RU/s of writes to size random suffixes for (default: the container's throughput; none for --file)")
	f.Float64Var(&growth, "growth", 0, "how many times its current size the container will grow to (default 1)")
	f.BoolVar(&asJSON, "json", false, "print the advice as JSON")
	return cmd
}

// fetchAdvice asks the server's advice endpoint, signed like any Cosmos request.
func fetchAdvice(conn *connFlags, db, container string, sample, partitions int, writeRate, growth float64) (*advisor.Advice, error) {
	c, err := conn.client(client.Options{Timeout: 2 * time.Minute})
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if sample != 0 {
		q.Set("sample", strconv.Itoa(sample))
	}
	if partitions != 0 {
		q.Set("partitions", strconv.Itoa(partitions))
	}
	if writeRate != 0 {
		q.Set("writeRate", strconv.FormatFloat(writeRate, 'g', -1, 64))
	}
	if growth != 0 {
		q.Set("growth", strconv.FormatFloat(growth, 'g', -1, 64))
	}
	link := "dbs/" + db + "/colls/" + container
	path := client.Path(link) + "/advice"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	resp, err := c.Do(context.Background(), client.Request{Method: http.MethodGet, Type: "advice", Link: link, Path: path})
	if err != nil {
		return nil, fmt.Errorf("server answered %w", err)
	}
	var out advisor.Advice
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		return nil, fmt.Errorf("unexpected answer: %w", err)
	}
	return &out, nil
}

// adviseFile judges the items of a file, without a server.
func adviseFile(file, queriesFile, current string, partitions int, writeRate, growth float64, totalItems, totalBytes int64) (*advisor.Advice, error) {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, err
	}
	items, err := readItems(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	in := advisor.Input{Container: file, Items: items, SpreadPartitions: partitions, WriteRate: writeRate,
		Growth: growth, TotalItems: totalItems, TotalBytes: totalBytes, Partitions: 1}
	if current != "" {
		for _, p := range strings.Split(current, ",") {
			p = strings.TrimSpace(p)
			if len(p) < 2 || p[0] != '/' || strings.Contains(p, "//") {
				return nil, fmt.Errorf("--current: %q is not a partition key path such as /region", p)
			}
			in.Current.Paths = append(in.Current.Paths, p)
		}
		if len(in.Current.Paths) > 3 {
			return nil, fmt.Errorf("--current: a partition key has at most 3 paths")
		}
	}
	if queriesFile != "" {
		in.Queries, err = readQueryLines(queriesFile)
		if err != nil {
			return nil, err
		}
	}
	adv := advisor.Advise(in)
	return &adv, nil
}

// readItems reads a JSON array of objects, or JSON lines (blank lines skipped).
func readItems(data []byte) ([][]byte, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var arr []json.RawMessage
		if err := json.Unmarshal(trimmed, &arr); err != nil {
			return nil, fmt.Errorf("not a JSON array: %w", err)
		}
		out := make([][]byte, len(arr))
		for i, m := range arr {
			out[i] = m
		}
		return out, nil
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if !json.Valid(line) {
			return nil, fmt.Errorf("line %d is not JSON", n)
		}
		out = append(out, append([]byte(nil), line...))
	}
	return out, sc.Err()
}

// readQueryLines counts the query texts of a file, one per line.
func readQueryLines(file string) ([]advisor.QueryCount, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	var order []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if counts[line] == 0 {
			order = append(order, line)
		}
		counts[line]++
	}
	out := make([]advisor.QueryCount, len(order))
	for i, t := range order {
		out[i] = advisor.QueryCount{Text: t, Count: counts[t]}
	}
	return out, nil
}

func printAdvice(w io.Writer, a *advisor.Advice) {
	name := a.Container
	if a.Database != "" {
		name = a.Database + " / " + a.Container
	}
	fmt.Fprintf(w, "%s: %d items sampled of %d", name, a.Sampled, a.TotalItems)
	if len(a.Current) > 0 {
		fmt.Fprintf(w, "; current partition key %s", strings.Join(a.Current, ", "))
	}
	fmt.Fprintf(w, "; %d query executions judged\n", a.Queries)
	for _, n := range a.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tKEY\tSCORE\tVERDICT\tCARDINALITY\tLARGEST\tSKEW\tREQ SKEW\tFAN-OUT\tMISSING\tCAP RISK")
	for _, c := range a.Candidates {
		key := strings.Join(c.Paths, ", ")
		if c.IsCurrent {
			key += " (current)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%d\t%.1f%%\t%.1f\t%s\t%s\t%.1f%%\t%s\n", c.Rank, key, c.Score, c.Verdict, c.Cardinality,
			100*c.LargestShare, c.StorageSkew, optional(c.RequestSkew, false), optional(c.FanOutShare, true), 100*c.MissingShare, c.CapRisk)
	}
	tw.Flush()
	// Reasons for the best few and the current key: the whole list is in --json.
	for i, c := range a.Candidates {
		if i >= 5 && !c.IsCurrent {
			continue
		}
		fmt.Fprintf(w, "\n%d. %s — %s (%d)\n", c.Rank, strings.Join(c.Paths, ", "), c.Verdict, c.Score)
		for _, r := range c.Reasons {
			fmt.Fprintf(w, "   - %s\n", r)
		}
	}
	if len(a.Synthetic) == 0 {
		return
	}
	fmt.Fprintf(w, "\nNo single property is a good key. Synthetic keys (spread over %d physical partitions):\n", a.SpreadPartitions)
	for _, s := range a.Synthetic {
		fmt.Fprintf(w, "\n* %s: %s\n  e.g. %q; %d distinct values in the sample\n  spread:", s.Kind, s.Description, s.Example, s.Cardinality)
		for _, sh := range s.PredictedSpread {
			fmt.Fprintf(w, " %d:%.0f%%", sh.Partition, 100*sh.Share)
		}
		fmt.Fprintln(w)
		for _, r := range s.Reasons {
			fmt.Fprintf(w, "  - %s\n", r)
		}
	}
}

func optional(x *float64, percent bool) string {
	switch {
	case x == nil:
		return "-"
	case percent:
		return fmt.Sprintf("%.0f%%", 100**x)
	}
	return fmt.Sprintf("%.1f", *x)
}
