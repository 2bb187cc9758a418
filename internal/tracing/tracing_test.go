package tracing

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Off, a span is nothing and costs nothing, and only the activity id travels; on, the trace
// context travels too, and the receiving side continues the sender's span.
func TestCarrier(t *testing.T) {
	ctx := WithActivity(context.Background(), "act-1")
	if got, span := Start(ctx, "off", trace.SpanKindServer); got != ctx || span.IsRecording() {
		t.Fatal("Start made a span with tracing off")
	}
	if c := Inject(ctx); len(c) != 1 || c["x-ms-activity-id"] != "act-1" {
		t.Fatalf("carrier with tracing off: %v", c)
	}
	if Inject(context.Background()) != nil {
		t.Fatal("a carrier for nothing")
	}
	if Activity(Extract(context.Background(), Inject(ctx))) != "act-1" {
		t.Fatal("the activity id did not travel")
	}

	if _, err := Setup(context.Background(), Config{Endpoint: "127.0.0.1:4317"}); err == nil {
		t.Fatal("an endpoint that is not a URL was accepted")
	}
	stop, err := Setup(context.Background(), Config{Endpoint: "http://127.0.0.1:1", Node: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		stop(sctx) // nothing listens there: the flush fails, which is not this test's concern
	}()
	ctx, span := Start(ctx, "on", trace.SpanKindServer)
	defer span.End()
	c := Inject(ctx)
	if !strings.Contains(c["traceparent"], span.SpanContext().TraceID().String()) || c["x-ms-activity-id"] != "act-1" {
		t.Fatalf("carrier with tracing on: %v", c)
	}
	remote := trace.SpanContextFromContext(Extract(context.Background(), c))
	if !remote.IsRemote() || remote.TraceID() != span.SpanContext().TraceID() || remote.SpanID() != span.SpanContext().SpanID() {
		t.Fatalf("extracted %v from a span %v", remote, span.SpanContext())
	}
	hdr := map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	client := trace.SpanContextFromContext(FromHeaders(context.Background(), func(k string) string { return hdr[k] }))
	if client.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || client.SpanID().String() != "00f067aa0ba902b7" {
		t.Fatalf("a client's traceparent read as %v", client)
	}
}
