// Package cqlexec is the CQL engine: it checks statements parsed by internal/cql against the
// schema of CQL keyspaces and tables, and runs them over the engine, where a keyspace is a
// database and a table a container whose partitions own arcs of the Murmur3 token ring
// (docs/design/cql-placement.md). It also serves the system and system_schema tables drivers
// read, from the real schema.
//
// Every input may be hostile (fuzz_test.go): statement text, bound values, paging states.
// What one statement may ask for is bounded: IN restrictions pin at most maxInProduct
// partitions and clustering prefixes (where.go), a range deletion writes at most
// maxRangeDeleteBytes of tombstones (mutation.go), and a paging state resumes only inside
// the spans the query reads (read.go). A write over several partitions is checked whole
// before any part applies (dryrun.go), so a failed statement leaves the data as it was.
//
// It knows nothing of the native protocol's framing (internal/api/cql does that); values come
// and go in their protocol serialization (internal/cqlvalue).
package cqlexec
