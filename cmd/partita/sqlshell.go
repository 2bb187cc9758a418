package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/chzyer/readline"
)

// historyFile is where the shell keeps its history: the user's cache directory, or none.
func historyFile() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	dir = filepath.Join(dir, "partita")
	if os.MkdirAll(dir, 0o700) != nil {
		return ""
	}
	return filepath.Join(dir, "sql_history")
}

// shell is the interactive loop: line editing and history by readline, a statement run as
// soon as it is complete, errors shown and the session kept.
func (s *sqlSession) shell(ctx context.Context) error {
	rl, err := readline.NewEx(&readline.Config{
		Prompt:                 s.prompt(false),
		HistoryFile:            historyFile(),
		DisableAutoSaveHistory: true, // a multi-line statement is saved whole, below
		InterruptPrompt:        "^C",
		EOFPrompt:              `\q`,
	})
	if err != nil {
		return err
	}
	defer rl.Close()
	fmt.Fprintf(s.errOut, "partita sql: %s / %s. End statements with ';' or a blank line; \\help for commands.\n", s.db, s.container)
	var st statements
	for {
		rl.SetPrompt(s.prompt(st.pending()))
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			st.reset() // Ctrl-C drops the statement being typed
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		for _, stmt := range st.line(line) {
			saveHistory(rl, stmt)
			if err := s.do(ctx, stmt); err == errQuit {
				return nil
			} else if err != nil {
				fmt.Fprintln(s.errOut, "error:", err)
			}
		}
	}
}

// saveHistory keeps stmt in the history as one entry that runs again when recalled: the
// history file holds one entry a line, so a statement's lines are joined (unless a -- comment
// would then swallow the rest, when each line is kept as typed) and its ';' put back.
func saveHistory(rl *readline.Instance, stmt string) {
	switch {
	case strings.HasPrefix(stmt, `\`):
		rl.SaveHistory(stmt)
	case strings.Contains(stmt, "--"):
		for _, l := range strings.Split(stmt, "\n") {
			rl.SaveHistory(l)
		}
	default:
		lines := strings.Split(stmt, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimSpace(l)
		}
		rl.SaveHistory(strings.Join(lines, " ") + ";")
	}
}

func (s *sqlSession) prompt(continued bool) string {
	if continued {
		return "   ...> "
	}
	c := s.container
	if c == "" {
		c = "?"
	}
	return s.db + "/" + c + "> "
}
