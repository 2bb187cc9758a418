// Package server runs a Partita node: it opens the engine on the data directory, serves each
// of its front ends on a listener of its own, and shuts down cleanly, letting in-flight
// requests finish before the storage is closed.
//
// A front end (the frontend interface in server.go) serves one protocol: cosmos.go is the
// Cosmos DB REST gateway over HTTP or HTTPS (with a self-signed certificate it creates and
// keeps in the data directory), with Prometheus's /metrics and the explorer's files (package
// web, at /_explorer/) beside it; cql.go is the Cassandra API (internal/api/cql over
// internal/cqlexec), over TLS with the same certificate when TLS is on, signed in to with
// the account name and a key. A new protocol goes in a file of its own implementing
// frontend, plus one entry in frontends (server.go), one address in Config and one flag in
// cmd/partita/serve.go.
//
// It owns configuration and process lifetime; it must never implement request handling itself.
package server
