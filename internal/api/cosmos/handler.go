package cosmos

import (
	"cmp"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/faultinject"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/tracing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Options configure the gateway.
type Options struct {
	Key         string // primary account key, base64
	ReadOnlyKey string // optional
	Logger      *slog.Logger
	// Now is the clock for signature dates; nil means time.Now.
	Now func() time.Time
	// Consistency is the account's default consistency level ("": Session).
	Consistency string
	// Priority is the account's default priority level, Low or High ("": High), for requests
	// that name none (the service's defaultPriorityLevel).
	Priority string
	// Faults are the fault-injection rules the management API edits and every request is
	// checked against (nil: the handler makes its own).
	Faults *faultinject.Set
}

// Handler serves the Cosmos DB REST API for one engine.
type Handler struct {
	engine *engine.Engine
	keys   keyring
	log    *slog.Logger
	now    func() time.Time
	// consistency is the account's default level, one of engine.ConsistencyLevels, and level
	// the same as a Level.
	consistency string
	level       engine.Level
	// priority is the account's default priority level (Options.Priority).
	priority ru.Priority
	faults   *faultinject.Set
}

// NewHandler makes the gateway for eng.
func NewHandler(eng *engine.Engine, o Options) (*Handler, error) {
	keys, err := newKeyring(o.Key, o.ReadOnlyKey)
	if err != nil {
		return nil, err
	}
	keys.tokens = newResourceTokens(keys.primary, eng)
	if o.Consistency == "" {
		o.Consistency = "Session"
	}
	rank := ConsistencyRank(o.Consistency)
	if rank < 0 {
		return nil, fmt.Errorf("the default consistency must be one of %s, not %q", strings.Join(engine.ConsistencyLevels, ", "), o.Consistency)
	}
	priority, ok := ru.ParsePriority(cmp.Or(o.Priority, "High"))
	if !ok {
		return nil, fmt.Errorf("the default priority level must be Low or High, not %q", o.Priority)
	}
	h := &Handler{engine: eng, keys: keys, log: o.Logger, now: o.Now, consistency: engine.ConsistencyLevels[rank],
		level: engine.LevelOf(o.Consistency), priority: priority, faults: o.Faults}
	if h.faults == nil {
		h.faults = faultinject.NewSet(nil)
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	return h, nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{h: h, w: w, r: r, start: time.Now()}
	activity := r.Header.Get("X-Ms-Activity-Id")
	if activity == "" {
		activity = newActivityID()
	}
	c.set("x-ms-activity-id", activity)
	c.actx = tracing.ActivityContext{Context: r.Context(), ID: activity}
	c.ctx = &c.actx
	if tracing.Enabled() {
		var span trace.Span
		c.ctx, span = tracing.Start(tracing.FromHeaders(c.ctx, r.Header.Get), "cosmos "+r.Method, trace.SpanKindServer,
			attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path),
			attribute.String("partita.activity_id", activity))
		defer c.endSpan(span)
	}
	c.set("x-ms-gatewayversion", "version=2.14.0")
	c.set("x-ms-serviceversion", "version=2.14.0.0")
	if strings.HasPrefix(r.URL.Path, managementPrefix) {
		c.manage()
		return
	}
	err := checkEnvelope(r)
	var res resource
	if err == nil {
		res, err = parseResource(r.URL.EscapedPath())
	}
	if err == nil {
		res = h.byRID(res)
		if tracing.Enabled() {
			trace.SpanFromContext(c.ctx).SetName("cosmos " + r.Method + " " + res.shape())
		}
		res, err = h.authenticate(r, res)
		c.res = res
	}
	if err == nil && res.byRID {
		err = c.resolveRIDs()
	}
	if err == nil {
		err = c.checkConsistency()
	}
	if err == nil {
		err = c.checkPriority()
	}
	if err == nil && h.faults.Armed() && c.inject() {
		return // answered by a fault rule
	}
	if err == nil {
		err = c.dispatch()
	}
	if err != nil {
		c.fail(err)
	}
}

// endSpan ends a request's span with what it answered.
func (c *call) endSpan(span trace.Span) {
	span.SetAttributes(attribute.Int("http.response.status_code", c.status),
		attribute.Float64("partita.request_charge", c.charge))
	if sub := c.w.Header()["x-ms-substatus"]; len(sub) > 0 {
		span.SetAttributes(attribute.String("partita.substatus", sub[0]))
	}
	if c.status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(c.status))
	}
	span.End()
}
