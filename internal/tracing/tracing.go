package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Config is what Setup needs.
type Config struct {
	// Endpoint is the URL of an OTLP/gRPC collector (http:// for plaintext, https:// for
	// TLS). Empty: the OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT
	// variable, and tracing stays off when neither is set.
	Endpoint string
	// Node names this process in its spans (service.instance.id), as the cluster names it.
	Node string
	// Version is the server's version (service.version).
	Version string
}

// enabled is set by Setup once spans are exported; Start does nothing until then.
var enabled atomic.Bool

// tracer is the provider's tracer, set by Setup before enabled.
var tracer atomic.Pointer[trace.Tracer]

// propagator reads and writes W3C trace context (traceparent, tracestate).
var propagator = propagation.TraceContext{}

// Setup starts exporting spans when an endpoint is configured, and returns what flushes and
// stops the exporter (a no-op when tracing stays off). Sampling follows the standard
// OTEL_TRACES_SAMPLER variables (every trace by default, and always a traced client's
// decision); batching, OTEL_BSP_*.
func Setup(ctx context.Context, cfg Config) (shutdown func(context.Context) error, err error) {
	none := func(context.Context) error { return nil }
	endpoint := cfg.Endpoint
	var opts []otlptracegrpc.Option
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return none, fmt.Errorf("the OTLP endpoint must be a URL such as http://127.0.0.1:4317, not %q", endpoint)
		}
		opts = append(opts, otlptracegrpc.WithEndpointURL(endpoint))
	} else if os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		return none, nil
	}
	exp, err := otlptracegrpc.New(ctx, opts...)
	if err != nil {
		return none, fmt.Errorf("the OTLP exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", "partita"),
		attribute.String("service.instance.id", cfg.Node),
		attribute.String("service.version", cfg.Version),
	))
	if err != nil {
		return none, errors.Join(err, exp.Shutdown(ctx))
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t := tp.Tracer("github.com/partita-db/partita")
	tracer.Store(&t)
	enabled.Store(true)
	return func(ctx context.Context) error {
		enabled.Store(false)
		return tp.Shutdown(ctx)
	}, nil
}

// Enabled reports whether spans are exported.
func Enabled() bool { return enabled.Load() }

// noSpan is the span of a request when tracing is off.
var noSpan = noop.Span{}

// Start starts a span named name as a child of ctx's, and returns it with the context that
// carries it. Off, it returns ctx and a span that does nothing.
func Start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !enabled.Load() {
		return ctx, noSpan
	}
	return (*tracer.Load()).Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// Carrier is a request's trace context and activity id as they travel between nodes.
type Carrier map[string]string

// activityKey is the carrier's entry for the activity id.
const activityKey = "x-ms-activity-id"

// Inject is ctx's trace context (when tracing is on) and activity id, to send along with work
// another node does for the request; nil when there is neither.
func Inject(ctx context.Context) Carrier {
	id := Activity(ctx)
	if id == "" && !enabled.Load() {
		return nil
	}
	c := Carrier{}
	if id != "" {
		c[activityKey] = id
	}
	if enabled.Load() {
		propagator.Inject(ctx, propagation.MapCarrier(c))
	}
	if len(c) == 0 {
		return nil
	}
	return c
}

// Extract is ctx with the trace context and activity id another node sent.
func Extract(ctx context.Context, c Carrier) context.Context {
	if len(c) == 0 {
		return ctx
	}
	if id := c[activityKey]; id != "" {
		ctx = WithActivity(ctx, id)
	}
	if enabled.Load() {
		ctx = propagator.Extract(ctx, propagation.MapCarrier(c))
	}
	return ctx
}

// FromHeaders is ctx with the trace context a client sent in its request's headers (W3C
// traceparent and tracestate), when tracing is on.
func FromHeaders(ctx context.Context, get func(string) string) context.Context {
	if !enabled.Load() || get("traceparent") == "" {
		return ctx
	}
	return propagator.Extract(ctx, headerCarrier(get))
}

// headerCarrier reads a request's headers for the propagator.
type headerCarrier func(string) string

func (h headerCarrier) Get(key string) string { return h(key) }
func (h headerCarrier) Set(string, string)    {}
func (h headerCarrier) Keys() []string        { return []string{"traceparent", "tracestate"} }

type activityCtx struct{}

// ActivityContext is a context carrying a request's activity id. A front end may keep one in
// the state of a request it already allocated (WithActivity allocates one).
type ActivityContext struct {
	context.Context
	ID string
}

// Value is the activity id for Activity, and the parent's values otherwise.
func (c *ActivityContext) Value(key any) any {
	if key == (activityCtx{}) {
		return c.ID
	}
	return c.Context.Value(key)
}

// WithActivity is ctx carrying a request's activity id.
func WithActivity(ctx context.Context, id string) context.Context {
	return &ActivityContext{Context: ctx, ID: id}
}

// Activity is the activity id ctx carries; empty when none.
func Activity(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	id, _ := ctx.Value(activityCtx{}).(string)
	return id
}
