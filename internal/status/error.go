package status

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Error is a failure as a Cosmos client sees it.
type Error struct {
	Status    int // HTTP status, e.g. 404
	Substatus int // Cosmos substatus, 0 when there is none
	Message   string
	// RetryAfter, for 429, is when the request may succeed if retried.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Substatus != 0 {
		return fmt.Sprintf("%d/%d: %s", e.Status, e.Substatus, e.Message)
	}
	return fmt.Sprintf("%d: %s", e.Status, e.Message)
}

// Code is the textual code of the Cosmos error body, derived from the status.
func (e *Error) Code() string {
	switch e.Status {
	case http.StatusBadRequest:
		return "BadRequest"
	case http.StatusUnauthorized:
		return "Unauthorized"
	case http.StatusForbidden:
		return "Forbidden"
	case http.StatusNotFound:
		return "NotFound"
	case http.StatusConflict:
		return "Conflict"
	case http.StatusGone:
		return "Gone"
	case http.StatusPreconditionFailed:
		return "PreconditionFailed"
	case http.StatusRequestEntityTooLarge:
		return "RequestEntityTooLarge"
	case http.StatusFailedDependency:
		return "FailedDependency"
	case http.StatusTooManyRequests:
		return "TooManyRequests"
	case http.StatusServiceUnavailable:
		return "ServiceUnavailable"
	case http.StatusMethodNotAllowed:
		return "MethodNotAllowed"
	default:
		return "InternalServerError"
	}
}

// Substatuses used by Partita, named as Cosmos names them.
const (
	SubPartitionKeyRangeGone = 1002 // 410: the range was split; re-read /pkranges
	SubPartitionFull         = 1014 // 403: the logical partition reached its size cap
	SubRequestRateTooLarge   = 3200 // 429: the partition's RU budget for this second is spent
)

func newf(st, sub int, format string, args ...any) *Error {
	return &Error{Status: st, Substatus: sub, Message: fmt.Sprintf(format, args...)}
}

// BadRequest is a 400: the request itself is wrong and retrying it cannot help.
func BadRequest(format string, args ...any) *Error {
	return newf(http.StatusBadRequest, 0, format, args...)
}

// NotFound is a 404.
func NotFound(format string, args ...any) *Error {
	return newf(http.StatusNotFound, 0, format, args...)
}

// Conflict is a 409: a resource with that id already exists.
func Conflict(format string, args ...any) *Error {
	return newf(http.StatusConflict, 0, format, args...)
}

// PreconditionFailed is a 412: an If-Match etag no longer matches.
func PreconditionFailed(format string, args ...any) *Error {
	return newf(http.StatusPreconditionFailed, 0, format, args...)
}

// TooLarge is a 413: the request or the resource is over a size limit.
func TooLarge(format string, args ...any) *Error {
	return newf(http.StatusRequestEntityTooLarge, 0, format, args...)
}

// PartitionFull is a 403/1014: the write would grow a logical partition past its cap.
func PartitionFull(format string, args ...any) *Error {
	return newf(http.StatusForbidden, SubPartitionFull, format, args...)
}

// TooManyRequests is a 429/3200: the partition's request units for this second are spent.
func TooManyRequests(retryAfter time.Duration) *Error {
	return &Error{Status: http.StatusTooManyRequests, Substatus: SubRequestRateTooLarge, RetryAfter: retryAfter,
		Message: "Request rate is large: the partition's share of the provisioned throughput is spent for this second. Retry after the given time, or raise the throughput."}
}

// Unavailable is a 503: the server cannot serve the request now (shutting down, storage failed).
func Unavailable(format string, args ...any) *Error {
	return newf(http.StatusServiceUnavailable, 0, format, args...)
}

// Internal is a 500 for failures that are Partita's fault, not the client's.
func Internal(format string, args ...any) *Error {
	return newf(http.StatusInternalServerError, 0, format, args...)
}

// From returns err as an *Error, wrapping anything else as a 500 so that no failure reaches a
// client without a status.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Internal("%v", err)
}

// Is reports whether err carries the given HTTP status.
func Is(err error, st int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == st
}
