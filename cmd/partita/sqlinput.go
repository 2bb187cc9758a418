package main

import "strings"

// statements splits what is typed or piped into the SQL shell into statements and
// backslash commands. A statement ends with a ';' outside quotes (at the end of a line or
// between statements on one line) or with a blank line; a line starting with '\' when no
// statement is open is a command (\c, \format, \help, \q).
type statements struct {
	buf strings.Builder
	// quote is the quote character of a string left open at the end of the buffer, or 0.
	quote byte
}

// pending reports whether a statement has been started and not ended.
func (s *statements) pending() bool { return strings.TrimSpace(s.buf.String()) != "" }

// reset drops the statement being typed.
func (s *statements) reset() { s.buf.Reset(); s.quote = 0 }

// line takes one line of input and returns what it completes, in order.
func (s *statements) line(l string) []string {
	trimmed := strings.TrimSpace(l)
	if !s.pending() && strings.HasPrefix(trimmed, `\`) {
		return []string{trimmed}
	}
	if trimmed == "" && s.quote == 0 {
		return s.flush()
	}
	var out []string
	start := 0
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case s.quote != 0:
			if c == '\\' {
				i++ // an escaped character, the quote included
			} else if c == s.quote {
				s.quote = 0
			}
		case c == '\'' || c == '"':
			s.quote = c
		case c == '-' && i+1 < len(l) && l[i+1] == '-':
			i = len(l) // a comment runs to the end of the line
		case c == ';':
			s.buf.WriteString(l[start:i])
			out = append(out, s.flush()...)
			start = i + 1
		}
	}
	s.buf.WriteString(l[start:])
	s.buf.WriteByte('\n')
	return out
}

// flush ends the open statement, if any.
func (s *statements) flush() []string {
	st := strings.TrimSpace(s.buf.String())
	s.reset()
	if st == "" {
		return nil
	}
	return []string{st}
}
