package cql

import (
	"errors"
	"fmt"

	"github.com/partita-db/partita/internal/fault"
)

// Errors of this package come in two sorts, which CQL reports with different codes:
//
//   - a syntax error (CQL's 0x2000) is a bare *fault.Error of kind BadRequest whose Pos says
//     where the text is wrong and whose message starts "Syntax error at line L, column C: ";
//   - an invalid statement (CQL's 0x2200) is an *InvalidError around such a *fault.Error, the
//     message starting "Invalid statement at line L, column C: ". The parser reports these for
//     the few rules Cassandra calls invalid rather than syntax that it must check to build a
//     sound tree (one PRIMARY KEY declaration, as many values as columns, an option given once).
//
// Both satisfy errors.Is(err, fault.BadRequest) and errors.As(err, &*fault.Error), so that a
// caller that does not care about the difference sees one bad request.

// InvalidError marks a bad request as an invalid statement rather than a syntax error.
type InvalidError struct{ Fault *fault.Error }

func (e *InvalidError) Error() string { return e.Fault.Error() }

// Unwrap exposes the *fault.Error, for errors.Is and errors.As.
func (e *InvalidError) Unwrap() error { return e.Fault }

// IsSyntax reports whether err is a syntax error rather than an invalid statement (or anything
// else).
func IsSyntax(err error) bool {
	var inv *InvalidError
	if errors.As(err, &inv) {
		return false
	}
	var fe *fault.Error
	return errors.As(err, &fe) && fe.Kind == fault.BadRequest && fe.Pos.Line > 0
}

// IsInvalid reports whether err is an invalid statement.
func IsInvalid(err error) bool {
	var inv *InvalidError
	return errors.As(err, &inv)
}

// Invalid builds an invalid-statement error for checks made after parsing (against a schema, by
// the front end). A zero pos (most tree nodes carry none) leaves the position out of the message.
func Invalid(pos fault.Pos, format string, args ...any) *InvalidError {
	msg := fmt.Sprintf(format, args...)
	if pos.Line == 0 {
		return &InvalidError{Fault: fault.New(fault.BadRequest, "%s", msg)}
	}
	e := fault.New(fault.BadRequest, "Invalid statement at line %d, column %d: %s", pos.Line, pos.Column, msg)
	e.Pos = pos
	return &InvalidError{Fault: e}
}

// syntaxError builds the syntax error for byte offset off of src.
func syntaxError(src string, off int, msg string) *fault.Error {
	pos := fault.PosAt(src, off)
	e := fault.New(fault.BadRequest, "Syntax error at line %d, column %d: %s", pos.Line, pos.Column, msg)
	e.Pos = pos
	return e
}

// invalidError builds the invalid-statement error for byte offset off of src.
func invalidError(src string, off int, msg string) *InvalidError {
	return Invalid(fault.PosAt(src, off), "%s", msg)
}
