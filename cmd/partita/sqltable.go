package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/partita-db/partita/internal/value"
)

// valueColumn heads the column of results that are not objects (SELECT VALUE c.n).
const valueColumn = "(value)"

// writeTable writes query results as an aligned table: one column per top-level property,
// in the order the properties first appear across the results; nested values as compact
// JSON; cells cut to width characters (0: uncut).
func writeTable(w io.Writer, items []json.RawMessage, width int) error {
	rows := make([]value.Value, len(items))
	var cols []string
	seen := map[string]bool{}
	addCol := func(c string) {
		if !seen[c] {
			seen[c] = true
			cols = append(cols, c)
		}
	}
	for i, raw := range items {
		v, err := value.Parse(raw)
		if err != nil {
			return fmt.Errorf("result %d is not JSON: %w", i, err)
		}
		rows[i] = v
		if v.Kind() != value.Object {
			addCol(valueColumn)
			continue
		}
		for _, m := range v.Members() {
			addCol(m.Key)
		}
	}
	if len(cols) == 0 { // no results, or only empty objects
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := make([]string, len(cols))
	for i, c := range cols {
		line[i] = cell(c, width)
	}
	fmt.Fprintln(tw, strings.Join(line, "\t"))
	for i, c := range line {
		line[i] = strings.Repeat("-", max(utf8.RuneCountInString(c), 1))
	}
	fmt.Fprintln(tw, strings.Join(line, "\t"))
	for _, v := range rows {
		for i, c := range cols {
			var x value.Value
			switch {
			case v.Kind() != value.Object && c == valueColumn:
				x = v
			case v.Kind() == value.Object:
				x = v.Get(c)
			}
			line[i] = cellOf(x, width)
		}
		fmt.Fprintln(tw, strings.Join(line, "\t"))
	}
	return tw.Flush()
}

// cellOf renders one value for a table: strings as they are, everything else as compact
// JSON, an absent property as nothing.
func cellOf(v value.Value, width int) string {
	switch v.Kind() {
	case value.Undefined:
		return ""
	case value.String:
		return cell(v.Str(), width)
	}
	return cell(string(value.AppendJSON(nil, v)), width)
}

// cell makes s fit one table cell: control characters (tabs and newlines would break the
// alignment) shown escaped, and at most width characters, the cut marked with "…".
func cell(s string, width int) string {
	if strings.ContainsFunc(s, func(r rune) bool { return r < ' ' }) {
		q, _ := json.Marshal(s)
		s = string(q[1 : len(q)-1])
	}
	if width > 0 && utf8.RuneCountInString(s) > width {
		r := []rune(s)
		s = string(r[:max(width-1, 1)]) + "…"
	}
	return s
}
