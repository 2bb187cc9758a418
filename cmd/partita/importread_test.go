package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func readAll(t *testing.T, ir *itemReader) []record {
	t.Helper()
	var out []record
	for {
		r, err := ir.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
}

// A reader started at any record's end offset (as a resumed import starts) reads the same
// records, with the same lines and ordinals, as one that read the whole input.
func TestItemReaderResumes(t *testing.T) {
	inputs := map[string]string{
		formatArray: "\xef\xbb\xbf [ {\"a\": \"]\\\"\"},\n  {\"b\": [1,\n 2]} ,\"s\",\n 12, null,{}\n]\n",
		formatLines: "{\"a\":1}\n\n  {\"b\":2}  \r\n{\"c\":\n3\n",
	}
	for format, in := range inputs {
		ir, err := newItemReader(strings.NewReader(in), "", 0, 1, 0)
		if err != nil || ir.format != format {
			t.Fatalf("%s: detected %q, %v", format, ir.format, err)
		}
		all := readAll(t, ir)
		if len(all) < 4 {
			t.Fatalf("%s: %d records", format, len(all))
		}
		for i, r := range all {
			sub, err := newItemReader(strings.NewReader(in[r.end:]), format, r.end, r.endLine, r.seq+1)
			if err != nil {
				t.Fatal(err)
			}
			rest := readAll(t, sub)
			if len(rest) != len(all)-i-1 {
				t.Fatalf("%s from record %d: %d records, want %d", format, i, len(rest), len(all)-i-1)
			}
			for j, r := range rest {
				w := all[i+1+j]
				if !bytes.Equal(r.body, w.body) || r.line != w.line || r.seq != w.seq || r.end != w.end {
					t.Fatalf("%s from record %d: got %+v, want %+v", format, i, r, w)
				}
			}
		}
	}
}
