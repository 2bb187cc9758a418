package fault

import (
	"errors"
	"fmt"
	"time"
)

// Kind is what went wrong, as every front end must be able to tell it apart. A Kind is also an
// error, so that errors.Is(err, fault.NotFound) tests an error's kind.
type Kind uint8

// The kinds. Each says what a client can do about it.
const (
	// Internal is Partita's own fault; retrying may or may not help.
	Internal Kind = iota
	// BadRequest: the request is wrong and retrying it unchanged cannot help. Errors about
	// query text say where (Error.Pos).
	BadRequest
	// Unauthorized: the request's credentials are missing or do not match.
	Unauthorized
	// Forbidden: the credentials are valid but may not do this (a read-only key writing, a
	// clock too far off).
	Forbidden
	// NotFound: the resource does not exist.
	NotFound
	// Conflict: a resource with that id already exists.
	Conflict
	// PreconditionFailed: the condition the request set (an etag, a patch filter) does not hold.
	PreconditionFailed
	// TooLarge: the request or the resource it would make is over a size limit.
	TooLarge
	// PartitionFull: the write would grow its logical partition past the cap.
	PartitionFull
	// Throttled: the partition's request units for this second are spent; Error.RetryAfter
	// says when to retry.
	Throttled
	// Gone: what the request addressed no longer exists in that form; Error.Reason says why.
	Gone
	// Aborted: the operation was valid but not applied, because another operation of its
	// transaction failed.
	Aborted
	// Unavailable: the server cannot serve the request now (shutting down, storage failed).
	Unavailable
	// Timeout: the request ran past its time limit and was stopped, leaving nothing changed
	// (a script that ran too long).
	Timeout
)

var kindNames = [...]string{
	Internal: "internal error", BadRequest: "bad request", Unauthorized: "unauthorized",
	Forbidden: "forbidden", NotFound: "not found", Conflict: "conflict",
	PreconditionFailed: "precondition failed", TooLarge: "too large", PartitionFull: "partition full",
	Throttled: "throttled", Gone: "gone", Aborted: "aborted", Unavailable: "unavailable",
	Timeout: "timeout",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind %d", k)
}

// Error makes a Kind usable as a sentinel error.
func (k Kind) Error() string { return k.String() }

// Reason says why something is Gone, or Unavailable.
type Reason uint8

const (
	// NoReason is the zero Reason.
	NoReason Reason = iota
	// RangeSplit: the partition key range was split; re-read the ranges and retry on a child.
	RangeSplit
	// SessionNotAvailable, for Unavailable: the replica has not caught up with the request's
	// session token; another replica, or the same one a moment later, may serve it. (The
	// Cosmos DB API answers it as the service does, 404 with its substatus; it is not a
	// NotFound here, which code that reads takes for a missing item.)
	SessionNotAvailable
)

// Pos is a place in a request's text (a query), counted from 1; zero when unknown.
type Pos struct {
	Line, Column int
}

// PosAt is the position of byte offset off in src: 1-based, with columns counted in characters.
func PosAt(src string, off int) Pos {
	p := Pos{Line: 1, Column: 1}
	for _, r := range src[:off] {
		if r == '\n' {
			p.Line, p.Column = p.Line+1, 1
		} else {
			p.Column++
		}
	}
	return p
}

// Error is a failure of one Kind with a message meant for the client.
type Error struct {
	Kind    Kind
	Message string
	// RetryAfter, for Throttled, is how long until the request may succeed.
	RetryAfter time.Duration
	// Reason, for Gone and some Unavailable errors, says why.
	Reason Reason
	// Pos, for BadRequest about query text, is where the text is wrong.
	Pos Pos
	// cause is what New's %w wrapped (a storage or runtime error): errors.Is and errors.As
	// see through the Error to it. It stays on this node: a forwarded answer carries the
	// message only.
	cause error
}

func (e *Error) Error() string { return e.Kind.String() + ": " + e.Message }

// Unwrap is the error the message wrapped with %w; nil when none.
func (e *Error) Unwrap() error { return e.cause }

// Is makes errors.Is(err, kind) hold for an error of that kind.
func (e *Error) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == e.Kind
}

// New returns an error of kind k with a formatted message. As with fmt.Errorf, a %w verb
// wraps its error, which the Error then unwraps to.
func New(k Kind, format string, args ...any) *Error {
	if len(args) == 0 {
		return &Error{Kind: k, Message: format}
	}
	err := fmt.Errorf(format, args...)
	e := &Error{Kind: k, Message: err.Error()}
	if _, wraps := err.(interface{ Unwrap() error }); wraps {
		e.cause = err
	} else if _, wraps := err.(interface{ Unwrap() []error }); wraps {
		e.cause = err
	}
	return e
}

// Throttle is a Throttled error: the partition's request units for this second are spent.
func Throttle(retryAfter time.Duration) *Error {
	return &Error{Kind: Throttled, RetryAfter: retryAfter,
		Message: "Request rate is large: the partition's share of the provisioned throughput is spent for this second. Retry after the given time, or raise the throughput."}
}

// RangeGone is a Gone error for a partition key range that was split.
func RangeGone() *Error {
	return &Error{Kind: Gone, Reason: RangeSplit,
		Message: "The partition key range is gone (it was split); re-read the partition key ranges"}
}

// SessionUnavailable is an Unavailable error for a read whose session token the replica has
// not caught up with.
func SessionUnavailable() *Error {
	return &Error{Kind: Unavailable, Reason: SessionNotAvailable,
		Message: "The read session is not available for the input session token: the replica has not caught up with it yet; retry the request"}
}

// From returns err as an *Error, wrapping anything else as Internal so that no failure reaches
// a client without a kind.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if k, ok := err.(Kind); ok {
		return &Error{Kind: k, Message: k.String()}
	}
	return &Error{Kind: Internal, Message: err.Error()}
}

// KindOf is the kind of err; Internal for errors that are not *Error.
func KindOf(err error) Kind { return From(err).Kind }
