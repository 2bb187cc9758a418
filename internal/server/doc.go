// Package server runs a Partita node: it opens the engine on the data directory, serves the
// Cosmos DB REST gateway over HTTP or HTTPS (with a self-signed certificate it creates and keeps
// in the data directory), and shuts down cleanly, letting in-flight requests finish before the
// storage is closed.
//
// It owns configuration and process lifetime; it must never implement request handling itself.
package server
