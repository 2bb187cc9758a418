package cosmos

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/tracing"
)

// maxBodyBytes is Cosmos's limit on a request: 2 MB, whatever the request (an item, a batch,
// a container definition, a query, a script's arguments). It is also the batch limit.
const maxBodyBytes = 2 << 20

// call is one request being served.
type call struct {
	h *Handler
	w http.ResponseWriter
	r *http.Request
	// ctx is the request's context with its activity id (actx, kept here so that a request
	// allocates no context of its own) and, when tracing is on, its span.
	ctx    context.Context
	actx   tracing.ActivityContext
	res    resource
	start  time.Time
	status int // the answer's, once written
	charge float64
	// vals backs the response's header values: one allocation instead of one per header. A
	// point read sets 17 of them.
	vals  [20]string
	nvals int
}

// set sets response header key, which must be in canonical form.
func (c *call) set(key, value string) {
	if c.nvals == len(c.vals) {
		c.w.Header()[key] = []string{value}
		return
	}
	c.vals[c.nvals] = value
	c.w.Header()[key] = c.vals[c.nvals : c.nvals+1 : c.nvals+1]
	c.nvals++
}

// body reads the request body, refusing more than maxBodyBytes.
func (c *call) body() ([]byte, error) {
	body := http.MaxBytesReader(c.w, c.r.Body, maxBodyBytes)
	var b []byte
	var err error
	if n := c.r.ContentLength; n >= 0 && n <= maxBodyBytes {
		// Sized by Content-Length (which net/http holds the body to): io.ReadAll would grow
		// its buffer from 512 bytes, copying a 1 KB item three times.
		b = make([]byte, n)
		_, err = io.ReadFull(body, b)
	} else {
		b, err = io.ReadAll(body)
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if asMaxBytes(err, &tooBig) {
			return nil, fault.New(fault.TooLarge, "Request size is too large: the body is over %d bytes", maxBodyBytes)
		}
		return nil, fault.New(fault.BadRequest, "Reading the request body failed: %v", err)
	}
	// Every body is JSON (or, for scripts, JSON carrying JavaScript), and JSON is UTF-8. Bytes
	// that are not would be replaced by U+FFFD somewhere down the line, and something other
	// than what was sent stored: refuse them here, once for every kind of request.
	if !utf8.Valid(b) {
		return nil, fault.New(fault.BadRequest, "The request body is not valid UTF-8 (at byte %d)", invalidUTF8At(b))
	}
	return b, nil
}

// decodeJSON parses a JSON request body into v with a Cosmos-shaped error.
func (c *call) decodeJSON(v any) error {
	b, err := c.body()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fault.New(fault.BadRequest, "The request body is not valid: %v", err)
	}
	return nil
}

// reply writes a successful response with a JSON body (nil writes none).
//
// Response headers throughout the gateway are stored under their keys directly (c.set, or
// hdr["x-ms-substatus"] = ...), and the service's own, x-ms-*, etag and lsn, in lower case as
// the service sends them: clients that look headers up case-sensitively (the Python SDK) see
// nothing under Go's canonical capitalisation, which Header().Set would impose (and its
// canonicalizing showed in profiles of point reads).
func (c *call) reply(code int, body []byte) {
	c.set("x-ms-request-charge", strconv.FormatFloat(c.charge, 'f', 2, 64))
	c.set("x-ms-request-duration-ms", strconv.FormatFloat(float64(time.Since(c.start).Microseconds())/1000, 'f', 3, 64))
	if body != nil {
		c.set("Content-Type", "application/json")
		c.set("Content-Length", strconv.Itoa(len(body)))
	}
	c.status = code
	c.w.WriteHeader(code)
	if body != nil && c.r.Method != http.MethodHead {
		c.w.Write(body)
	}
}

// replyJSON marshals v as the response body.
func (c *call) replyJSON(code int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fault.New(fault.Internal, "encoding the response: %w", err)
	}
	c.reply(code, b)
	return nil
}

// replyResource writes one catalog resource (a database, container, offer or script) with its
// etag, or 304 Not Modified to a read whose If-None-Match names that etag, as items answer.
func (c *call) replyResource(code int, etag string, v any) error {
	c.set("etag", quoted(etag))
	if c.r.Method == http.MethodGet {
		if inm := c.r.Header.Get("If-None-Match"); inm != "" && (inm == "*" || unquoted(inm) == etag) {
			c.reply(http.StatusNotModified, nil)
			return nil
		}
	}
	return c.replyJSON(code, v)
}

// ifMatch is the request's If-Match etag, unquoted; empty when there is none.
func (c *call) ifMatch() string { return unquoted(c.r.Header.Get("If-Match")) }

// fail writes err as a Cosmos error response.
func (c *call) fail(err error) {
	w, e := toWire(err)
	if e.Kind == fault.NotFound && w.substatus == 0 {
		w.substatus = c.notFound() // notfound.go
	}
	activity := tracing.Activity(c.ctx)
	if w.status >= 500 {
		c.h.log.Error("request failed", "method", c.r.Method, "path", c.r.URL.Path, "err", e.Message, "activity", activity)
		if e.Kind == fault.Internal {
			// The cause (a storage or runtime error's text) is the log's, under the activity
			// id the client is given, as the service answers.
			e = &fault.Error{Kind: fault.Internal, Message: "An unexpected error occurred while processing the request. ActivityId: " + activity}
		}
	} else {
		c.h.log.Debug("request refused", "method", c.r.Method, "path", c.r.URL.Path, "status", w.status, "err", e.Message, "activity", activity)
	}
	if w.substatus != 0 {
		c.w.Header()["x-ms-substatus"] = []string{strconv.Itoa(w.substatus)}
	}
	if e.Kind == fault.Throttled && c.charge == 0 {
		c.charge = ru.Throttled()
	}
	if e.RetryAfter > 0 {
		c.w.Header()["x-ms-retry-after-ms"] = []string{strconv.FormatInt(max(1, e.RetryAfter.Milliseconds()), 10)}
	}
	body, _ := json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{w.code, e.Message})
	c.reply(w.status, body)
}

// invalidUTF8At is the offset of the first byte of b that does not start a valid UTF-8
// sequence.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

func asMaxBytes(err error, target **http.MaxBytesError) bool { return errors.As(err, target) }
