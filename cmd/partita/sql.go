package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/partita-db/partita/internal/client"
)

func sqlCommand() *cobra.Command {
	var conn connFlags
	var execute string
	var params []string
	s := &sqlSession{}
	cmd := &cobra.Command{
		Use:   "sql",
		Short: "Run SQL queries against a server: an interactive shell, or one-shot for scripts",
		Long: `Run SQL queries against a container of a running server.

With a terminal on stdin, partita sql is an interactive shell: statements end with ';' or a
blank line and may span lines; \c CONTAINER switches container, \format table|json switches
output, \help lists the commands, \q quits. History is kept in the user's cache directory.

Otherwise it runs the statements given with -e, or those read from stdin, and exits
non-zero at the first that fails, printing the server's message.

After every statement it prints (on stderr) the items returned, the request charge summed
over all pages, and the time taken.`,
		Example: `  partita sql --db shop --container orders
  partita sql --db shop --container orders -e 'SELECT c.id, c.total FROM c WHERE c.total > 100'
  partita sql --db shop --container orders --format json --param @city='"Paris"' \
      -e 'SELECT * FROM c WHERE c.city = @city'
  echo 'SELECT VALUE COUNT(1) FROM c;' | partita sql --db shop --container orders`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if s.db == "" {
				return fmt.Errorf("--db is required")
			}
			if s.format != "table" && s.format != "json" {
				return fmt.Errorf("--format: want table or json, not %q", s.format)
			}
			var err error
			if s.pageSize == 0 && s.maxItems > 0 {
				s.pageSize = min(s.maxItems, 1000)
			}
			if s.params, err = parseParams(params); err != nil {
				return err
			}
			if s.client, err = conn.client(client.Options{}); err != nil {
				return err
			}
			s.out, s.errOut = cmd.OutOrStdout(), cmd.ErrOrStderr()
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM)
			defer stop()
			switch {
			case cmd.Flags().Changed("execute"):
				return s.script(ctx, strings.NewReader(execute+"\n"))
			case isTerminal(cmd.InOrStdin()):
				return s.shell(ctx)
			}
			return s.script(ctx, cmd.InOrStdin())
		},
	}
	f := cmd.Flags()
	conn.add(f)
	f.StringVar(&s.db, "db", "", "database id")
	f.StringVar(&s.container, "container", "", "container id (\\c switches it in the shell)")
	f.StringVarP(&execute, "execute", "e", "", "run these statements and exit")
	f.StringVar(&s.format, "format", "table", "output: table or json")
	f.IntVar(&s.maxItems, "max-items", 0, "stop each query after this many items (0: fetch every page)")
	f.IntVar(&s.pageSize, "page-size", 0, "items per page asked of the server (0: the server's default, or --max-items)")
	f.IntVar(&s.width, "max-width", 40, "cut table cells to this many characters (0: never)")
	f.StringArrayVar(&params, "param", nil, "a query parameter, @name=JSON (repeatable), e.g. --param @n=5 --param @s='\"x\"'")
	return cmd
}

// parseParams reads --param values: @name=JSON.
func parseParams(specs []string) ([]client.Param, error) {
	var out []client.Param
	for _, p := range specs {
		name, val, ok := strings.Cut(p, "=")
		if !ok || !strings.HasPrefix(name, "@") || len(name) < 2 {
			return nil, fmt.Errorf("--param %q: want @name=JSON, e.g. @city='\"Paris\"'", p)
		}
		if !json.Valid([]byte(val)) {
			return nil, fmt.Errorf("--param %q: the value is not JSON (a string needs its quotes: @s='\"text\"')", p)
		}
		out = append(out, client.Param{Name: name, Value: json.RawMessage(val)})
	}
	return out, nil
}

// sqlSession is the state of one `partita sql`: where queries go and how results are shown.
type sqlSession struct {
	client    *client.Client
	db        string
	container string
	format    string // "table" or "json"
	maxItems  int
	pageSize  int
	width     int
	params    []client.Param
	out       io.Writer // results
	errOut    io.Writer // statistics and errors
}

// errQuit is how \q ends a session.
var errQuit = errors.New("quit")

// script runs the statements and commands read from r, stopping at the first error.
func (s *sqlSession) script(ctx context.Context, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var st statements
	run := func(stmts []string) error {
		for _, stmt := range stmts {
			if err := s.do(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	}
	for sc.Scan() {
		if err := run(st.line(sc.Text())); err != nil {
			if err == errQuit {
				return nil
			}
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := run(st.flush()); err != nil && err != errQuit {
		return err
	}
	return nil
}

// do runs one statement or backslash command.
func (s *sqlSession) do(ctx context.Context, stmt string) error {
	if strings.HasPrefix(stmt, `\`) {
		return s.command(stmt)
	}
	if s.container == "" {
		return fmt.Errorf("no container chosen: give --container or type \\c CONTAINER")
	}
	started := time.Now()
	var items []json.RawMessage
	var charge float64
	pages, throttled := 0, 0
	err := s.client.Query(ctx, "dbs/"+s.db+"/colls/"+s.container, client.Query{SQL: stmt, Params: s.params}, client.QueryOptions{PageSize: s.pageSize},
		func(p client.Page) error {
			pages++
			charge += p.Charge
			throttled += p.Throttled
			items = append(items, p.Items...)
			if s.maxItems > 0 && len(items) >= s.maxItems {
				items = items[:s.maxItems]
				return client.ErrStop
			}
			return nil
		})
	took := time.Since(started)
	if err != nil {
		return fmt.Errorf("%w (%.2f RU spent)", err, charge)
	}
	if err := s.print(items); err != nil {
		return err
	}
	extra := ""
	if throttled > 0 {
		extra = fmt.Sprintf(", %d throttled retries", throttled)
	}
	fmt.Fprintf(s.errOut, "(%d items, %.2f RU, %d pages, %s%s)\n", len(items), charge, pages, elapsed(took), extra)
	return nil
}

func (s *sqlSession) print(items []json.RawMessage) error {
	if s.format == "json" {
		if len(items) == 0 {
			_, err := fmt.Fprintln(s.out, "[]")
			return err
		}
		// As the server wrote them: no HTML escaping of <, > and &.
		enc := json.NewEncoder(s.out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(items)
	}
	return writeTable(s.out, items, s.width)
}

const sqlHelp = `Statements end with ';' or a blank line and may span lines. Commands:
  \c CONTAINER      query CONTAINER from now on
  \format table     show results as a table (nested values as compact JSON)
  \format json      show results as JSON
  \help             this text
  \q                quit (Ctrl-D too)
`

func (s *sqlSession) command(line string) error {
	f := strings.Fields(line)
	switch {
	case f[0] == `\q` || f[0] == `\quit`:
		return errQuit
	case f[0] == `\help` || f[0] == `\?` || f[0] == `\h`:
		fmt.Fprint(s.errOut, sqlHelp)
	case f[0] == `\c` && len(f) == 2:
		s.container = f[1]
		fmt.Fprintf(s.errOut, "now querying %s / %s\n", s.db, s.container)
	case f[0] == `\format` && len(f) == 2 && (f[1] == "table" || f[1] == "json"):
		s.format = f[1]
	default:
		return fmt.Errorf("unknown command %q; \\help lists them", line)
	}
	return nil
}
