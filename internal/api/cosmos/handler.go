package cosmos

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
)

// Options configure the gateway.
type Options struct {
	Key         string // primary account key, base64
	ReadOnlyKey string // optional
	Logger      *slog.Logger
	// Now is the clock for signature dates; nil means time.Now.
	Now func() time.Time
}

// Handler serves the Cosmos DB REST API for one engine.
type Handler struct {
	engine *engine.Engine
	keys   keyring
	log    *slog.Logger
	now    func() time.Time
}

// NewHandler makes the gateway for eng.
func NewHandler(eng *engine.Engine, o Options) (*Handler, error) {
	keys, err := newKeyring(o.Key, o.ReadOnlyKey)
	if err != nil {
		return nil, err
	}
	h := &Handler{engine: eng, keys: keys, log: o.Logger, now: o.Now}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	return h, nil
}

// maxBodyBytes bounds what is read of a request body: an item may be 2 MB, and a batch of
// 2 MB of operations carries some framing on top.
const maxBodyBytes = 4 << 20

// call is one request being served.
type call struct {
	h      *Handler
	w      http.ResponseWriter
	r      *http.Request
	res    resource
	start  time.Time
	charge float64
	// vals backs the response's header values: one allocation instead of one per header.
	vals  [16]string
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

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{h: h, w: w, r: r, start: time.Now()}
	activity := r.Header.Get("X-Ms-Activity-Id")
	if activity == "" {
		activity = newActivityID()
	}
	c.set("X-Ms-Activity-Id", activity)
	c.set("X-Ms-Gatewayversion", "version=2.14.0")
	c.set("X-Ms-Serviceversion", "version=2.14.0.0")
	res, err := parseResource(r.URL.EscapedPath())
	if err == nil {
		c.res = res
		err = h.keys.authenticate(r, res, h.now())
	}
	if err == nil {
		err = c.dispatch()
	}
	if err != nil {
		c.fail(err)
	}
}

// dispatch routes by URL shape and method.
func (c *call) dispatch() error {
	m := c.r.Method
	var shape [64]byte
	switch string(c.res.appendShape(shape[:0])) {
	case "":
		if m == http.MethodGet {
			return c.account()
		}
	case "dbs":
		switch {
		case m == http.MethodGet:
			return c.listDatabases()
		case m == http.MethodPost && isQuery(c.r):
			return c.queryCatalog()
		case m == http.MethodPost:
			return c.createDatabase()
		}
	case "dbs/*":
		switch m {
		case http.MethodGet:
			return c.readDatabase()
		case http.MethodDelete:
			return c.deleteDatabase()
		}
	case "dbs/*/colls":
		switch {
		case m == http.MethodGet:
			return c.listContainers()
		case m == http.MethodPost && isQuery(c.r):
			return c.queryCatalog()
		case m == http.MethodPost:
			return c.createContainer()
		}
	case "dbs/*/colls/*":
		switch m {
		case http.MethodGet:
			return c.readContainer()
		case http.MethodPut:
			return c.replaceContainer()
		case http.MethodDelete:
			return c.deleteContainer()
		}
	case "dbs/*/colls/*/docs":
		switch {
		case m == http.MethodGet:
			return c.readFeed()
		case m == http.MethodPost && isQuery(c.r):
			return c.queryItems()
		case m == http.MethodPost && c.r.Header.Get("X-Ms-Cosmos-Is-Batch-Request") != "":
			return c.batch()
		case m == http.MethodPost:
			return c.createItem()
		}
	case "dbs/*/colls/*/docs/*":
		switch m {
		case http.MethodGet:
			return c.readItem()
		case http.MethodPut:
			return c.replaceItem()
		case http.MethodDelete:
			return c.deleteItem()
		case http.MethodPatch:
			return c.patchItem()
		}
	case "dbs/*/colls/*/pkranges":
		if m == http.MethodGet {
			return c.partitionKeyRanges()
		}
	case "dbs/*/colls/*/partitions":
		if m == http.MethodGet {
			return c.partitions()
		}
	case "offers":
		switch {
		case m == http.MethodGet:
			return c.listOffers()
		case m == http.MethodPost && isQuery(c.r):
			return c.queryOffers()
		}
	case "offers/*":
		switch m {
		case http.MethodGet:
			return c.readOffer()
		case http.MethodPut:
			return c.replaceOffer()
		}
	default:
		return fault.New(fault.NotFound, "The resource path /%s is not known to Partita", c.res.link)
	}
	return &methodNotAllowed{method: m, shape: c.res.shape()}
}

func isQuery(r *http.Request) bool {
	return isTrue(r.Header.Get("X-Ms-Documentdb-Isquery")) || isTrue(r.Header.Get("X-Ms-Documentdb-Query")) ||
		r.Header.Get("Content-Type") == "application/query+json"
}

func isTrue(v string) bool { b, _ := strconv.ParseBool(v); return b }

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
// Response headers throughout the gateway are stored under their canonical keys directly
// (c.set, or hdr["X-Ms-Substatus"] = ...): Header().Set canonicalizes every key it is given,
// which showed in profiles of point reads.
func (c *call) reply(code int, body []byte) {
	c.set("X-Ms-Request-Charge", strconv.FormatFloat(c.charge, 'f', 2, 64))
	c.set("X-Ms-Request-Duration-Ms", strconv.FormatFloat(float64(time.Since(c.start).Microseconds())/1000, 'f', 3, 64))
	if body != nil {
		c.set("Content-Type", "application/json")
		c.set("Content-Length", strconv.Itoa(len(body)))
	}
	c.w.WriteHeader(code)
	if body != nil && c.r.Method != http.MethodHead {
		c.w.Write(body)
	}
}

// replyJSON marshals v as the response body.
func (c *call) replyJSON(code int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fault.New(fault.Internal, "encoding the response: %v", err)
	}
	c.reply(code, b)
	return nil
}

// fail writes err as a Cosmos error response.
func (c *call) fail(err error) {
	w, e := toWire(err)
	if w.status >= 500 {
		c.h.log.Error("request failed", "method", c.r.Method, "path", c.r.URL.Path, "err", e.Message)
	} else {
		c.h.log.Debug("request refused", "method", c.r.Method, "path", c.r.URL.Path, "status", w.status, "err", e.Message)
	}
	if w.substatus != 0 {
		c.w.Header()["X-Ms-Substatus"] = []string{strconv.Itoa(w.substatus)}
	}
	if e.RetryAfter > 0 {
		c.w.Header()["X-Ms-Retry-After-Ms"] = []string{strconv.FormatInt(max(1, e.RetryAfter.Milliseconds()), 10)}
	}
	body, _ := json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{w.code, e.Message})
	c.reply(w.status, body)
}

func newActivityID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// quoted and unquoted convert between engine etags and HTTP etag headers.
func quoted(etag string) string { return `"` + etag + `"` }

func unquoted(h string) string {
	if len(h) >= 2 && h[0] == '"' && h[len(h)-1] == '"' {
		return h[1 : len(h)-1]
	}
	return h
}

func asMaxBytes(err error, target **http.MaxBytesError) bool { return errors.As(err, target) }
