package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/partita-db/partita/internal/client"
	"github.com/partita-db/partita/internal/value"
)

// exportQuery reads every item in a stable order: by id, and (below) items that share an id
// by their partition key's EPK, which depends only on the data. Unordered results would
// follow the physical partitions and creation order, which an import does not reproduce.
const exportQuery = "SELECT * FROM c ORDER BY c.id"

type exportOptions struct {
	db, container string
	query         string
	output        string // a file, or "-" for stdout
	format        string // formatLines or formatArray
	system        bool   // keep the system properties
	pageSize      int
	progressEvery time.Duration
}

func exportCommand() *cobra.Command {
	var conn connFlags
	o := exportOptions{}
	cmd := &cobra.Command{
		Use:   "export --db DB --container C [--query Q] [-o FILE|-] [--format jsonl|json]",
		Short: "Write a container's items (or a query's results) as JSON lines or a JSON array",
		Long: `Write every item of a container, or the results of --query, to a file or stdout, as JSON
lines (the default) or one JSON array.

Items come in a stable order (by id, then by partition key), so exporting the same data twice
gives the same bytes. The properties the server writes (_rid, _self, _etag, _attachments,
_ts) are left out unless --system-properties is given, so that an export imports cleanly
into another container: export, import into a new container and export again gives a
byte-equal file. With --query the order is the query's (add an ORDER BY for a stable one).`,
		Example: `  partita export --db shop --container orders -o orders.jsonl
  partita export --db shop --container orders --format json -o orders.json
  partita export --db shop --container orders --query 'SELECT * FROM c WHERE c.total > 100 ORDER BY c.id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := conn.client(client.Options{})
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runExport(ctx, c, o, cmd.OutOrStdout(), cmd.ErrOrStderr(), isTerminal(cmd.ErrOrStderr()))
		},
	}
	f := cmd.Flags()
	conn.add(f)
	f.StringVar(&o.db, "db", "", "database id")
	f.StringVar(&o.container, "container", "", "container id")
	f.StringVar(&o.query, "query", "", "export this query's results instead of every item")
	f.StringVarP(&o.output, "output", "o", "-", "output file, - for stdout")
	f.StringVar(&o.format, "format", formatLines, "jsonl (one item per line) or json (an array)")
	f.BoolVar(&o.system, "system-properties", false, "keep _rid, _self, _etag, _attachments and _ts")
	f.IntVar(&o.pageSize, "page-size", 1000, "items per query page")
	f.DurationVar(&o.progressEvery, "progress-interval", 5*time.Second, "how often to print a progress line when stderr is not a terminal")
	return cmd
}

func runExport(ctx context.Context, c *client.Client, o exportOptions, stdout, errOut io.Writer, tty bool) (err error) {
	if o.db == "" || o.container == "" {
		return fmt.Errorf("--db and --container are required")
	}
	if o.format != formatLines && o.format != formatArray {
		return fmt.Errorf("--format: want jsonl or json, not %q", o.format)
	}
	ct, err := c.ReadContainer(ctx, o.db, o.container)
	if err != nil {
		return fmt.Errorf("reading the container: %w", err)
	}
	q, total := o.query, int64(-1)
	if q == "" {
		q = exportQuery
		// The count makes the progress bar's ETA; it is worth its charge on a terminal only.
		if tty {
			c.Query(ctx, ct.Link, client.Query{SQL: "SELECT VALUE COUNT(1) FROM c"}, client.QueryOptions{}, func(p client.Page) error {
				if len(p.Items) == 1 {
					json.Unmarshal(p.Items[0], &total)
				}
				return nil
			})
		}
	}
	// The output: stdout, or a file written beside its final name and renamed once complete,
	// so that a failed export leaves no partial file that looks whole.
	var w *bufio.Writer
	if o.output == "-" {
		w = bufio.NewWriterSize(stdout, 1<<20)
	} else {
		f, err := os.CreateTemp(filepath.Dir(o.output), filepath.Base(o.output)+".partial*")
		if err != nil {
			return err
		}
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = os.Rename(f.Name(), o.output)
			}
			if err != nil {
				os.Remove(f.Name())
			}
		}()
		w = bufio.NewWriterSize(f, 1<<20)
	}

	began := time.Now()
	prog := newProgress(errOut, tty, "exporting", total, false, o.progressEvery)
	var n int64
	var charge float64
	throttled := 0
	write := func(item []byte) error {
		sep := "\n"
		if o.format == formatArray {
			sep = ",\n"
			if n == 0 {
				sep = "[\n"
			}
		}
		if n > 0 || o.format == formatArray {
			w.WriteString(sep)
		}
		_, err := w.Write(item)
		n++
		return err
	}
	// Items sharing an id are held back and ordered by partition key (see exportQuery).
	var ties [][]byte
	var tieID string
	flushTies := func() error {
		sort.SliceStable(ties, func(i, j int) bool { return tieKey(ct, ties[i]) < tieKey(ct, ties[j]) })
		for _, t := range ties {
			if err := write(t); err != nil {
				return err
			}
		}
		ties = ties[:0]
		return nil
	}
	err = c.Query(ctx, ct.Link, client.Query{SQL: q}, client.QueryOptions{PageSize: o.pageSize}, func(p client.Page) error {
		charge += p.Charge
		throttled += p.Throttled
		for _, raw := range p.Items {
			item, id, err := exportItem(raw, o.system)
			if err != nil {
				return err
			}
			if o.query != "" {
				if err := write(item); err != nil {
					return err
				}
				continue
			}
			if len(ties) > 0 && id != tieID {
				if err := flushTies(); err != nil {
					return err
				}
			}
			tieID = id
			ties = append(ties, item)
		}
		prog.update(n, n, fmt.Sprintf(", %.0f RU", charge))
		return nil
	})
	if err == nil {
		err = flushTies()
	}
	if err == nil {
		switch {
		case o.format == formatArray && n == 0:
			w.WriteString("[]\n")
		case o.format == formatArray:
			w.WriteString("\n]\n")
		case n > 0:
			w.WriteString("\n")
		}
		err = w.Flush()
	}
	prog.update(n, n, fmt.Sprintf(", %.0f RU", charge))
	prog.done()
	if err != nil {
		return err
	}
	extra := ""
	if throttled > 0 {
		extra = fmt.Sprintf(", %d throttled retries", throttled)
	}
	fmt.Fprintf(errOut, "exported %s items, %.2f RU, %s%s\n", humanCount(n), charge, elapsed(time.Since(began)), extra)
	return nil
}

// exportItem is one result as it is written: compact JSON, without the system properties
// unless they are kept; and its id.
func exportItem(raw []byte, system bool) ([]byte, string, error) {
	v, err := value.Parse(raw)
	if err != nil {
		return nil, "", fmt.Errorf("the server sent a result that is not JSON: %w", err)
	}
	id := v.Get("id").Str()
	if !system {
		v = withoutSystem(v)
	}
	// value's JSON is the server's own encoding, so what is stored and exported again writes
	// the same bytes.
	return value.AppendJSON(nil, v), id, nil
}

// tieKey orders items that share an id: by their partition key's EPK, then by their bytes.
func tieKey(ct *client.Container, item []byte) string {
	_, _, e, err := ct.ItemKey(item)
	if err != nil {
		return "\xff" + string(item)
	}
	return string(e) + "\x00" + string(bytes.TrimSpace(item))
}
