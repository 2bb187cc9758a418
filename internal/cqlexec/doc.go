// Package cqlexec is the CQL engine: it checks statements parsed by internal/cql against the
// schema of CQL keyspaces and tables, and runs them over the engine, where a keyspace is a
// database and a table a container whose partitions own arcs of the Murmur3 token ring
// (docs/design/cql-placement.md). It also serves the system and system_schema tables drivers
// read, from the real schema.
//
// It knows nothing of the native protocol's framing (internal/api/cql does that); values come
// and go in their protocol serialization (internal/cqlvalue).
package cqlexec
