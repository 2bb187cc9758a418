package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/partita-db/partita/internal/api/cosmos"
	"github.com/partita-db/partita/internal/client"
	"github.com/partita-db/partita/internal/faultinject"
)

// chaosCommand steers a running server for tests: splits on demand and fault-injection rules,
// through the management API (internal/api/cosmos/manage.go).
func chaosCommand() *cobra.Command {
	var conn connFlags
	cmd := &cobra.Command{
		Use:   "chaos",
		Short: "Split partitions on demand and inject faults (429, 410, 449, 503, 408, latency) into a running server",
		Long: `Steer a running server the way production sometimes does, so that an application's tests can
see how it and its SDK cope: split a physical partition now, or inject faults by rule into the
requests on a container. Needs the account key (the management API refuses the read-only key
for changes, and resource tokens). See docs/testing-your-app.md.`,
	}
	conn.add(cmd.PersistentFlags())
	connect := func() (*client.Client, error) {
		return conn.client(client.Options{Timeout: 2 * time.Minute, MaxThrottleRetries: -1})
	}
	cmd.AddCommand(chaosSplitCommand(connect), chaosAddCommand(connect), chaosListCommand(connect), chaosRemoveCommand(connect))
	return cmd
}

type connectFunc func() (*client.Client, error)

// faultsRequest addresses the fault rules (id "" for all of them), signed as the management
// API documents: type "faults", link "" for the feed and "faults/{id}" for one rule.
func faultsRequest(method, id string, body []byte) client.Request {
	r := client.Request{Method: method, Type: "faults", Path: "/_partita/faults", Body: body}
	if id != "" {
		r.Link, r.Path = "faults/"+id, "/_partita/faults/"+client.Path(id)[1:]
	}
	return r
}

func chaosSplitCommand(connect connectFunc) *cobra.Command {
	var db, container, at string
	var partition int64
	cmd := &cobra.Command{
		Use:   "split",
		Short: "Split a physical partition of a container now (by default the one with the most items)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if db == "" || container == "" {
				return fmt.Errorf("--db and --container are required")
			}
			c, err := connect()
			if err != nil {
				return err
			}
			ctx := context.Background()
			link := "dbs/" + db + "/colls/" + container
			if partition < 0 {
				if partition, err = fullestPartition(ctx, c, link); err != nil {
					return err
				}
			}
			var body []byte
			if at != "" {
				body, _ = json.Marshal(map[string]string{"at": at})
			}
			plink := link + "/partitions/" + strconv.FormatInt(partition, 10)
			resp, err := c.Do(ctx, client.Request{Method: http.MethodPost, Type: "split", Link: plink, Feed: true, Body: body})
			if err != nil {
				return fmt.Errorf("server answered %w", err)
			}
			var out cosmos.SplitResponse
			if err := json.Unmarshal(resp.Body, &out); err != nil {
				return fmt.Errorf("unexpected answer: %w", err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "split partition %d of %s / %s:\n", out.Parent, out.Database, out.Container)
			for _, ch := range out.Children {
				fmt.Fprintf(w, "  %d [%s,%s) parents %v\n", ch.ID, short(ch.MinInclusive), short(ch.MaxExclusive), ch.Parents)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&db, "db", "", "database id")
	f.StringVar(&container, "container", "", "container id")
	f.Int64Var(&partition, "partition", -1, "id of the partition (partition key range) to split; default the one with the most items")
	f.StringVar(&at, "at", "", "hex EPK to split at, strictly inside the partition's range; default its middle")
	return cmd
}

// fullestPartition is the id of the container's partition with the most items (the first
// of them on a tie).
func fullestPartition(ctx context.Context, c *client.Client, link string) (int64, error) {
	resp, err := c.Do(ctx, client.Request{Method: http.MethodGet, Type: "partitions", Link: link, Feed: true})
	if err != nil {
		return 0, fmt.Errorf("server answered %w", err)
	}
	var parts cosmos.PartitionsResponse
	if err := json.Unmarshal(resp.Body, &parts); err != nil || len(parts.Partitions) == 0 {
		return 0, fmt.Errorf("unexpected answer listing the partitions: %s", resp.Body)
	}
	best := parts.Partitions[0]
	for _, p := range parts.Partitions[1:] {
		if p.Items > best.Items {
			best = p
		}
	}
	return int64(best.ID), nil
}

func chaosAddCommand(connect connectFunc) *cobra.Command {
	var spec faultinject.Spec
	var ops []string
	var ttl, retryAfter, latency time.Duration
	cmd := &cobra.Command{
		Use:   "add",
		Short: "Add a fault-injection rule: answer matching requests with an error, or delay them",
		Long: `Add a fault-injection rule. A rule matches the requests on a container (--db, --container; both
empty: every container), for some operations (--op, repeatable or comma-separated; none: all),
optionally only those reaching one partition key range (--pk-range) or an EPK range (--min-epk,
--max-epk). It answers them with --status (429, 410, 449, 503 or 408; 410 takes --substatus
1002, 1007 or 1008; 429 takes --retry-after) and/or delays them by --latency (then, without a
status, serves them). It fires for the next --count matching requests, or at --rate (a
probability), or on every one, until --ttl passes or it is removed.

Operations: ` + strings.Join(opNames(), ", ") + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, op := range ops {
				for _, o := range strings.Split(op, ",") {
					if o = strings.TrimSpace(o); o != "" {
						spec.Operations = append(spec.Operations, faultinject.Op(o))
					}
				}
			}
			spec.TTLMs, spec.RetryAfterMs, spec.LatencyMs = ttl.Milliseconds(), retryAfter.Milliseconds(), latency.Milliseconds()
			for name, d := range map[string]time.Duration{"--ttl": ttl, "--retry-after": retryAfter, "--latency": latency} {
				if d > 0 && d < time.Millisecond {
					return fmt.Errorf("%s is counted in milliseconds: %v is less than one", name, d)
				}
			}
			c, err := connect()
			if err != nil {
				return err
			}
			body, _ := json.Marshal(spec)
			resp, err := c.Do(context.Background(), faultsRequest(http.MethodPost, "", body))
			if err != nil {
				return fmt.Errorf("server answered %w", err)
			}
			var r faultinject.Rule
			if err := json.Unmarshal(resp.Body, &r); err != nil {
				return fmt.Errorf("unexpected answer: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "rule %s: %s\n", r.ID, describeRule(r))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.Database, "db", "", "database id (empty: any)")
	f.StringVar(&spec.Container, "container", "", "container id (empty: any)")
	f.StringSliceVar(&ops, "op", nil, "operations to match (repeatable or comma-separated; none: all)")
	f.StringVar(&spec.PKRangeID, "pk-range", "", "only requests reaching this partition key range id")
	f.StringVar(&spec.MinEPK, "min-epk", "", "only requests reaching EPKs from this hex EPK (inclusive)")
	f.StringVar(&spec.MaxEPK, "max-epk", "", "only requests reaching EPKs below this hex EPK")
	f.IntVar(&spec.Status, "status", 0, "status to answer with: 429, 410, 449, 503 or 408 (none: latency only)")
	f.IntVar(&spec.Substatus, "substatus", 0, "a 410's substatus: 1002 (default; range gone), 1007 (splitting) or 1008 (migrating)")
	f.DurationVar(&retryAfter, "retry-after", 0, "a 429's x-ms-retry-after-ms (default 100ms)")
	f.DurationVar(&latency, "latency", 0, "delay each hit request by this much")
	f.Float64Var(&spec.Rate, "rate", 0, "probability that a matching request is hit (default: every one)")
	f.Int64Var(&spec.Count, "count", 0, "hit only the next N matching requests")
	f.DurationVar(&ttl, "ttl", 0, "remove the rule after this long (default: never)")
	return cmd
}

func opNames() []string {
	out := make([]string, len(faultinject.Ops))
	for i, op := range faultinject.Ops {
		out[i] = string(op)
	}
	return out
}

// describeRule says in a line what a rule does to which requests.
func describeRule(r faultinject.Rule) string {
	var b strings.Builder
	switch {
	case r.Status == 429:
		fmt.Fprintf(&b, "answer 429 (retry after %dms)", r.RetryAfterMs)
	case r.Status != 0:
		fmt.Fprintf(&b, "answer %s", r.Action)
	}
	if r.LatencyMs > 0 {
		if b.Len() > 0 {
			b.WriteString(" after ")
		} else {
			b.WriteString("delay by ")
		}
		fmt.Fprintf(&b, "%v", time.Duration(r.LatencyMs)*time.Millisecond)
	}
	fmt.Fprintf(&b, " to %s on %s", opsOf(r), scopeOf(r))
	switch {
	case r.Count > 0 && r.Rate > 0:
		fmt.Fprintf(&b, ", %d times at rate %g", r.Count, r.Rate)
	case r.Count > 0:
		fmt.Fprintf(&b, ", the next %d", r.Count)
	case r.Rate > 0:
		fmt.Fprintf(&b, ", at rate %g", r.Rate)
	}
	if !r.ExpiresAt.IsZero() {
		fmt.Fprintf(&b, ", until %s", r.ExpiresAt.Local().Format(time.TimeOnly))
	}
	return b.String()
}

func opsOf(r faultinject.Rule) string {
	if len(r.Operations) == 0 {
		return "every operation"
	}
	names := make([]string, len(r.Operations))
	for i, op := range r.Operations {
		names[i] = string(op)
	}
	return strings.Join(names, ",")
}

func scopeOf(r faultinject.Rule) string {
	s := "every container"
	if r.Database != "" {
		s = r.Database + "/" + r.Container
		if r.Container == "" {
			s = r.Database + "/*"
		}
	}
	if r.PKRangeID != "" {
		s += " range " + r.PKRangeID
	}
	if r.MinEPK != "" || r.MaxEPK != "" {
		s += fmt.Sprintf(" EPKs [%s,%s)", short(r.MinEPK), short(r.MaxEPK))
	}
	return s
}

func chaosListCommand(connect connectFunc) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the fault-injection rules with their remaining count and hits",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := connect()
			if err != nil {
				return err
			}
			resp, err := c.Do(context.Background(), faultsRequest(http.MethodGet, "", nil))
			if err != nil {
				return fmt.Errorf("server answered %w", err)
			}
			if asJSON {
				_, err := cmd.OutOrStdout().Write(append(resp.Body, '\n'))
				return err
			}
			var list struct {
				Rules []faultinject.Rule `json:"rules"`
			}
			if err := json.Unmarshal(resp.Body, &list); err != nil {
				return fmt.Errorf("unexpected answer: %w", err)
			}
			printRules(cmd.OutOrStdout(), list.Rules)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	return cmd
}

func printRules(w io.Writer, rules []faultinject.Rule) {
	if len(rules) == 0 {
		fmt.Fprintln(w, "no fault rules")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tACTION\tCONTAINER\tOPERATIONS\tRATE\tREMAINING\tHITS\tEXPIRES")
	for _, r := range rules {
		action := r.Action
		if r.Status != 0 && r.LatencyMs > 0 {
			action += fmt.Sprintf("+%dms", r.LatencyMs)
		} else if r.Status == 0 {
			action = fmt.Sprintf("latency %dms", r.LatencyMs)
		}
		rate, remaining, expires := "always", "-", "never"
		if r.Rate > 0 {
			rate = strconv.FormatFloat(r.Rate, 'g', -1, 64)
		}
		if r.Remaining != nil {
			remaining = strconv.FormatInt(*r.Remaining, 10)
		}
		if !r.ExpiresAt.IsZero() {
			expires = r.ExpiresAt.Local().Format(time.TimeOnly)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, action, scopeOf(r), opsOf(r), rate, remaining, r.Hits, expires)
	}
	tw.Flush()
}

func chaosRemoveCommand(connect connectFunc) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "rm ID... | --all",
		Short: "Remove fault-injection rules",
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return fmt.Errorf("name the rules to remove, or give --all")
			}
			c, err := connect()
			if err != nil {
				return err
			}
			ctx := context.Background()
			if all {
				resp, err := c.Do(ctx, faultsRequest(http.MethodDelete, "", nil))
				if err != nil {
					return fmt.Errorf("server answered %w", err)
				}
				var out struct {
					Removed int `json:"removed"`
				}
				json.Unmarshal(resp.Body, &out)
				fmt.Fprintf(cmd.OutOrStdout(), "removed %d rules\n", out.Removed)
				return nil
			}
			for _, id := range args {
				if _, err := c.Do(ctx, faultsRequest(http.MethodDelete, id, nil)); err != nil {
					return fmt.Errorf("rule %s: server answered %w", id, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "removed rule %s\n", id)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "remove every rule")
	return cmd
}
