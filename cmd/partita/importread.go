package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Input formats of partita import.
const (
	formatLines = "jsonl" // one JSON item per line
	formatArray = "json"  // one JSON array of items
)

// record is one item of the input as read, not yet understood.
type record struct {
	seq  int64 // its ordinal in the input, from 0
	line int   // the line it starts on, from 1
	end  int64 // the input offset just past it: where a resumed import goes on
	// endLine is the line of the input at end.
	endLine int
	body    []byte // its bytes (an item, if it is one)
}

// itemReader reads the items of an import's input one at a time, without holding the input
// in memory: JSON lines, or the elements of one JSON array, whose bounds it finds by
// scanning brackets and strings (so an invalid element is still one element, reported and
// skipped, and a resumed import can start in the middle of the array).
type itemReader struct {
	r      *bufio.Reader
	format string
	off    int64 // bytes consumed
	line   int   // the current line, from 1
	seq    int64
	// For arrays: an element was read and a ',' or ']' comes next; the array was closed.
	afterElem, closed bool
}

// newItemReader reads r, which begins at offset off on line line of the input, the seq-th
// item coming next. format is formatLines, formatArray, or "" to detect it from the first
// character (a '[' opens an array), which only a reader at the input's start can do.
func newItemReader(r io.Reader, format string, off int64, line int, seq int64) (*itemReader, error) {
	ir := &itemReader{r: bufio.NewReaderSize(r, 1<<20), format: format, off: off, line: line, seq: seq}
	if format == "" {
		ir.skipBOM()
		c, err := ir.peekNonSpace()
		if err != nil && err != io.EOF {
			return nil, err
		}
		ir.format = formatLines
		if c == '[' {
			ir.format = formatArray
		}
	}
	if ir.format == formatArray && off == 0 {
		if c, err := ir.peekNonSpace(); err == nil && c == '[' {
			ir.next()
		} else {
			return nil, fmt.Errorf("line %d: the input does not start with '['", ir.line)
		}
	}
	if ir.format == formatArray && off > 0 {
		ir.afterElem = true
	}
	return ir, nil
}

// errSyntax is a fault in the array's structure, past which nothing can be read.
type errSyntax struct {
	line int
	msg  string
}

func (e *errSyntax) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// Next returns the next record, or io.EOF at the end of the input.
func (ir *itemReader) Next() (record, error) {
	if ir.format == formatLines {
		return ir.nextLine()
	}
	return ir.nextElement()
}

func (ir *itemReader) nextLine() (record, error) {
	for {
		b, err := ir.r.ReadBytes('\n')
		if len(b) == 0 && err != nil {
			return record{}, err
		}
		ir.off += int64(len(b))
		line := ir.line
		ir.line++
		b = bytes.TrimSpace(b)
		if line == 1 && ir.seq == 0 {
			b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
		}
		if len(b) == 0 {
			continue
		}
		r := record{seq: ir.seq, line: line, end: ir.off, endLine: ir.line, body: b}
		ir.seq++
		return r, nil
	}
}

func (ir *itemReader) nextElement() (record, error) {
	for {
		if ir.closed {
			if c, err := ir.peekNonSpace(); err == nil {
				return record{}, &errSyntax{ir.line, fmt.Sprintf("unexpected %q after the array's closing ']'", c)}
			}
			return record{}, io.EOF
		}
		c, err := ir.peekNonSpace()
		if err == io.EOF {
			return record{}, &errSyntax{ir.line, "the array is not closed: the input ends inside it"}
		}
		if err != nil {
			return record{}, err
		}
		switch {
		case c == ']':
			ir.next()
			ir.closed = true
			continue
		case ir.afterElem && c == ',':
			ir.next()
			ir.afterElem = false
			continue
		case ir.afterElem:
			return record{}, &errSyntax{ir.line, fmt.Sprintf("expected ',' or ']' between items, found %q", c)}
		case c == ',':
			return record{}, &errSyntax{ir.line, "an item is missing before ','"}
		}
		line := ir.line
		body, err := ir.element()
		if err != nil {
			return record{}, err
		}
		ir.afterElem = true
		r := record{seq: ir.seq, line: line, end: ir.off, endLine: ir.line, body: body}
		ir.seq++
		return r, nil
	}
}

// element reads one array element: an object or array up to its matching bracket, a string,
// or a bare word up to the next ',', ']' or space. Whether it is valid JSON is for the caller.
func (ir *itemReader) element() ([]byte, error) {
	var buf []byte
	depth := 0
	inString, escaped := false, false
	startLine := ir.line
	for {
		c, err := ir.r.ReadByte()
		if err == io.EOF {
			return nil, &errSyntax{startLine, "the input ends inside an item"}
		}
		if err != nil {
			return nil, err
		}
		if !inString && depth == 0 && len(buf) > 0 && buf[0] != '"' && (c == ',' || c == ']' || isJSONSpace(c)) {
			ir.r.UnreadByte()
			return buf, nil
		}
		ir.off++
		if c == '\n' {
			ir.line++
		}
		buf = append(buf, c)
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
			if depth == 0 {
				return buf, nil
			}
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth <= 0 {
				return buf, nil
			}
		}
	}
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// peekNonSpace skips white space and returns the next byte without consuming it.
func (ir *itemReader) peekNonSpace() (byte, error) {
	for {
		b, err := ir.r.Peek(1)
		if err != nil {
			return 0, err
		}
		if !isJSONSpace(b[0]) {
			return b[0], nil
		}
		ir.next()
	}
}

// next consumes one byte, counting lines.
func (ir *itemReader) next() {
	c, err := ir.r.ReadByte()
	if err != nil {
		return
	}
	ir.off++
	if c == '\n' {
		ir.line++
	}
}

func (ir *itemReader) skipBOM() {
	if b, err := ir.r.Peek(3); err == nil && bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		ir.r.Discard(3)
		ir.off += 3
	}
}

// isSyntax reports whether err is a fault in the input's structure.
func isSyntax(err error) bool {
	var e *errSyntax
	return errors.As(err, &e)
}
