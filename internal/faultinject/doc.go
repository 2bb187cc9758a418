// Package faultinject holds the fault-injection rules of a running server: what a test asks
// the server to do to some of its requests (answer 429, 410 with a substatus, 449, 503 or 408,
// or add latency), which requests (a container, operations, a partition key range or an EPK
// range), how often (a rate, or the next N matching requests) and for how long (a TTL).
//
// The gateway asks a Set about every request, in its one request pipeline, before the request
// is applied: an injected answer leaves data unchanged. With no rule the question is one
// atomic load (Set.Armed), so a server nobody injects into pays nothing measurable.
//
// This package decides; it never writes responses, logs, or touches data. Its errors are the
// kinds of internal/fault (the error vocabulary), which is a different thing: fault says what
// went wrong, faultinject makes things go wrong on purpose.
package faultinject
