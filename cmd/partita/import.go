package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/partita-db/partita/internal/client"
)

// importOptions is everything `partita import` is told.
type importOptions struct {
	db, container string
	source        string // a file, or "-" for stdin
	mode          string // "upsert" or "create"
	workers       int
	checkpoint    string
	saveEvery     time.Duration // how often the checkpoint is written while it moves
	restart       bool
	giveUpAfter   time.Duration
	progressEvery time.Duration
	// createContainer: create the container (and database) with this partition key first.
	createContainer bool
	partitionKey    []string
	throughput      int
	// afterBatch, for tests, is called after every bulk request is answered.
	afterBatch func()
}

func importCommand() *cobra.Command {
	var conn connFlags
	o := importOptions{}
	cmd := &cobra.Command{
		Use:   "import --db DB --container C [FILE|-]",
		Short: "Load items from JSON lines or a JSON array into a container, in bulk, resumably",
		Long: `Load items into a container from a file (or stdin, with - or no FILE): one JSON item per
line, or a JSON array of items (detected from the first character). The input is streamed.

Items are grouped by the partition key range they hash to and sent as bulk requests, several
at once (--workers). Throttled operations (429) are retried after the wait the server asks
for, for as long as the import makes progress; a partition that split (410) has its ranges
read again. Items that fail (not JSON, no id, too large, refused by the server) are reported
with their line numbers, and the rest go on.

The import is resumable: a checkpoint file (FILE.partita-import unless --checkpoint says
otherwise) records the input offset up to which every item is done. Run the same command
again after an interruption and it continues from there; the checkpoint is removed when the
input has been read to its end. In the default upsert mode re-sending an item is harmless;
in --mode create an item found already there (409) counts as done when its stored body
equals the input's, and as a conflict otherwise.`,
		Example: `  partita import --db shop --container orders orders.jsonl
  partita import --db shop --container orders --create-container --partition-key /customerId --throughput 4000 orders.json
  zcat orders.jsonl.gz | partita import --db shop --container orders --checkpoint orders.ckpt -`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.source = "-"
			if len(args) == 1 {
				o.source = args[0]
			}
			c, err := conn.client(client.Options{})
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			var in io.Reader = cmd.InOrStdin()
			return runImport(ctx, c, o, in, cmd.ErrOrStderr(), isTerminal(cmd.ErrOrStderr()))
		},
	}
	f := cmd.Flags()
	conn.add(f)
	f.StringVar(&o.db, "db", "", "database id")
	f.StringVar(&o.container, "container", "", "container id")
	f.StringVar(&o.mode, "mode", "upsert", "upsert (replace items with the same id and key) or create (refuse them)")
	f.IntVar(&o.workers, "workers", 4, "bulk requests in flight at once")
	f.StringVar(&o.checkpoint, "checkpoint", "", "checkpoint file (default FILE.partita-import; none for stdin unless given)")
	f.DurationVar(&o.saveEvery, "checkpoint-interval", time.Second, "how often the checkpoint is written while the import runs")
	f.BoolVar(&o.restart, "restart", false, "ignore an existing checkpoint and start from the beginning")
	f.DurationVar(&o.giveUpAfter, "give-up-after", 2*time.Minute, "fail throttled items when no item has been written for this long")
	f.DurationVar(&o.progressEvery, "progress-interval", 5*time.Second, "how often to print a progress line when stderr is not a terminal")
	f.BoolVar(&o.createContainer, "create-container", false, "create the database and container first if missing (needs --partition-key)")
	f.StringSliceVar(&o.partitionKey, "partition-key", nil, "partition key path(s) for --create-container, e.g. /customerId (several for a hierarchical key)")
	f.IntVar(&o.throughput, "throughput", 0, "manual RU/s for --create-container (0: the server's default)")
	return cmd
}

// runImport imports o.source (stdin is in when it is "-"), reporting on errOut.
func runImport(ctx context.Context, c *client.Client, o importOptions, in io.Reader, errOut io.Writer, tty bool) error {
	if o.db == "" || o.container == "" {
		return fmt.Errorf("--db and --container are required")
	}
	if o.mode != "upsert" && o.mode != "create" {
		return fmt.Errorf("--mode: want upsert or create, not %q", o.mode)
	}
	if o.workers < 1 {
		return fmt.Errorf("--workers must be at least 1")
	}
	if o.createContainer {
		if len(o.partitionKey) == 0 {
			return fmt.Errorf("--create-container needs --partition-key, e.g. /id")
		}
		if err := c.CreateContainer(ctx, o.db, o.container, o.partitionKey, o.throughput); err != nil {
			return fmt.Errorf("creating the container: %w", err)
		}
	}
	ct, err := c.ReadContainer(ctx, o.db, o.container)
	if err != nil {
		return fmt.Errorf("reading the container: %w", err)
	}
	if o.checkpoint == "" && o.source != "-" {
		o.checkpoint = o.source + ".partita-import"
	}
	start := checkpoint{Version: 1, Source: o.source, Mode: o.mode, Database: o.db, Coll: o.container, Line: 1}
	if o.checkpoint != "" && !o.restart {
		cp, err := readCheckpoint(o.checkpoint)
		if err != nil {
			return err
		}
		if cp != nil {
			if cp.Database != o.db || cp.Coll != o.container || cp.Mode != o.mode {
				return fmt.Errorf("checkpoint %s is of an import into %s/%s in %s mode; remove it or pass --restart", o.checkpoint, cp.Database, cp.Coll, cp.Mode)
			}
			start = *cp
			fmt.Fprintf(errOut, "resuming from %s: %s items done, going on at line %d\n", o.checkpoint, humanCount(cp.Items), cp.Line)
		}
	}
	// The input, positioned where the checkpoint says.
	total := int64(-1)
	if o.source != "-" {
		f, err := os.Open(o.source)
		if err != nil {
			return err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			total = st.Size()
			if start.Offset > total {
				return fmt.Errorf("checkpoint %s is at offset %d, past the end of %s (%d bytes): the input changed; pass --restart", o.checkpoint, start.Offset, o.source, total)
			}
		}
		if _, err := f.Seek(start.Offset, io.SeekStart); err != nil {
			return err
		}
		in = f
	} else if start.Offset > 0 {
		if _, err := io.CopyN(io.Discard, in, start.Offset); err != nil {
			return fmt.Errorf("skipping the %d bytes the checkpoint says are done: %w", start.Offset, err)
		}
	}
	rd, err := newItemReader(in, start.Format, start.Offset, start.Line, start.Items)
	if err != nil {
		return err
	}
	start.Format = rd.format

	began := time.Now()
	imp := newImporter(c, ct, o, newTracker(start))
	prog := newProgress(errOut, tty, "importing", total, true, o.progressEvery)
	stopSaving := imp.saveCheckpoints(o.checkpoint, max(o.saveEvery, 10*time.Millisecond))
	// Progress is the input's prefix whose items are all done, not what was read ahead.
	readErr := imp.run(ctx, rd, func() {
		t := imp.track.totals()
		prog.update(imp.track.done(), start.Items+t.Imported+t.Present+t.failed(), fmt.Sprintf(", %d failed, %d throttled", t.failed(), t.Throttled))
	})
	stopSaving()
	prog.done()

	cp, _ := imp.track.snapshot()
	this := imp.track.totals()
	interrupted := ctx.Err() != nil
	if o.checkpoint != "" {
		if interrupted || readErr != nil && !isSyntax(readErr) {
			if err := cp.write(o.checkpoint); err != nil {
				fmt.Fprintf(errOut, "writing the checkpoint: %v\n", err)
			}
		} else {
			os.Remove(o.checkpoint)
		}
	}
	fmt.Fprint(errOut, summary(cp, this, time.Since(began), o.mode))
	switch {
	case interrupted && o.checkpoint == "":
		return fmt.Errorf("interrupted after %s items; there is no checkpoint to resume from (give --checkpoint to make an import from stdin resumable)", humanCount(cp.Items))
	case interrupted:
		again := "the same command"
		if o.restart {
			again = "the command without --restart"
		}
		return fmt.Errorf("interrupted after %s items; run %s again to resume from %s", humanCount(cp.Items), again, o.checkpoint)
	case readErr != nil:
		return fmt.Errorf("reading %s: %w", o.source, readErr)
	case cp.failed() > 0:
		return fmt.Errorf("%s items failed", humanCount(cp.failed()))
	}
	return nil
}

// summary is the report at the end: the whole input's tally (earlier runs included) and
// what this run did.
func summary(cp checkpoint, this tally, took time.Duration, mode string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "imported %s items", humanCount(cp.Imported))
	if mode == "create" {
		fmt.Fprintf(&b, ", %s already there", humanCount(cp.Present))
	}
	fmt.Fprintf(&b, ", %s failed, %s throttled retries, %.2f RU", humanCount(cp.failed()), humanCount(cp.Throttled), cp.RU)
	fmt.Fprintf(&b, " (this run: %s written, %.2f RU, %s", humanCount(this.Imported+this.Present), this.RU, elapsed(took))
	if s := took.Seconds(); s > 0 {
		fmt.Fprintf(&b, ", %.0f items/s", float64(this.Imported+this.Present)/s)
	}
	b.WriteString(")\n")
	if cp.failed() > 0 {
		b.WriteString("failed:\n")
		b.WriteString(describeFailures(cp.tally))
	}
	return b.String()
}
