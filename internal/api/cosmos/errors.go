package cosmos

import (
	"errors"
	"net/http"

	"github.com/partita-db/partita/internal/fault"
)

// wireError is how a failure of one kind looks on the wire: the HTTP status, Cosmos's
// substatus (0 for none) and the textual code of the error body.
type wireError struct {
	status    int
	substatus int
	code      string
}

// Substatuses Partita sends, named as Cosmos names them.
const (
	subPartitionKeyRangeGone   = 1002 // 410: the range was split; re-read /pkranges
	subReadSessionNotAvailable = 1002 // 404: the replica is behind the session token; retry
	subOwnerResourceNotFound   = 1003 // 404: the database or container of what was asked is missing
	subPartitionFull           = 1014 // 403: the logical partition reached its size cap
	subRequestRateTooLarge     = 3200 // 429: the partition's RU budget for this second is spent
)

// wireErrors is the one table from fault kinds to Cosmos's wire shape.
var wireErrors = [...]wireError{
	fault.Internal:           {http.StatusInternalServerError, 0, "InternalServerError"},
	fault.BadRequest:         {http.StatusBadRequest, 0, "BadRequest"},
	fault.Unauthorized:       {http.StatusUnauthorized, 0, "Unauthorized"},
	fault.Forbidden:          {http.StatusForbidden, 0, "Forbidden"},
	fault.NotFound:           {http.StatusNotFound, 0, "NotFound"},
	fault.Conflict:           {http.StatusConflict, 0, "Conflict"},
	fault.PreconditionFailed: {http.StatusPreconditionFailed, 0, "PreconditionFailed"},
	fault.TooLarge:           {http.StatusRequestEntityTooLarge, 0, "RequestEntityTooLarge"},
	fault.PartitionFull:      {http.StatusForbidden, subPartitionFull, "Forbidden"},
	fault.Throttled:          {http.StatusTooManyRequests, subRequestRateTooLarge, "TooManyRequests"},
	fault.Gone:               {http.StatusGone, 0, "Gone"},
	fault.Aborted:            {http.StatusFailedDependency, 0, "FailedDependency"},
	fault.Unavailable:        {http.StatusServiceUnavailable, 0, "ServiceUnavailable"},
	fault.Timeout:            {http.StatusRequestTimeout, 0, "RequestTimeout"},
}

// reasonSubstatus is the substatus of each reason for Gone.
var reasonSubstatus = map[fault.Reason]int{fault.RangeSplit: subPartitionKeyRangeGone}

// methodNotAllowed is the one failure that only HTTP has: a known resource path with a method
// it does not serve.
type methodNotAllowed struct{ method, shape string }

func (e *methodNotAllowed) Error() string {
	return "Method " + e.method + " is not allowed on /" + e.shape
}

// toWire maps any error to its wire shape and message.
func toWire(err error) (wireError, *fault.Error) {
	var mna *methodNotAllowed
	if errors.As(err, &mna) {
		return wireError{http.StatusMethodNotAllowed, 0, "MethodNotAllowed"}, &fault.Error{Kind: fault.BadRequest, Message: mna.Error()}
	}
	e := fault.From(err)
	w := wireErrors[fault.Internal]
	if int(e.Kind) < len(wireErrors) {
		w = wireErrors[e.Kind]
	}
	switch e.Reason {
	case fault.NoReason:
	case fault.SessionNotAvailable:
		w = wireError{http.StatusNotFound, subReadSessionNotAvailable, "NotFound"} // as the service answers it
	default:
		w.substatus = reasonSubstatus[e.Reason]
	}
	return w, e
}
