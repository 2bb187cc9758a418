// Package tracing follows a request through the nodes it touches, with OpenTelemetry.
//
// Tracing is off unless Setup is given an OTLP endpoint (partita serve --otlp-endpoint, or the
// standard OTEL_EXPORTER_OTLP_ENDPOINT variables); off, Start returns the context it was
// given and a span that does nothing, without allocating, so that the request paths pay
// nothing for it.
//
// A request's trace starts where it enters a node (the Cosmos gateway, the Cassandra front
// end), continuing the client's own trace when it sent a W3C traceparent header. When a node
// sends work to another (a write forwarded to its partition's leaseholder), the context goes
// with it as a Carrier: the span that the other node starts is a child of the sending one,
// and both carry the request's activity id, which the nodes' logs name too:
//
//	ctx, span := tracing.Start(ctx, "cosmos.create", trace.SpanKindServer)
//	defer span.End()
//	carrier := tracing.Inject(ctx) // sent with the forwarded request
//	...
//	ctx = tracing.Extract(context.Background(), carrier) // on the node that serves it
//
// Activity ids travel even when tracing is off: they are what ties one request's log lines
// on several nodes together.
package tracing
