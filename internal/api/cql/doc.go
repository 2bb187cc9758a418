// Package cql is the Cassandra API's front end: it serves the CQL native protocol v4 over TCP
// (TLS when the server is told to), one goroutine reading frames per connection and one per
// request, so that a driver's many stream ids on one connection run concurrently; responses
// are written whole under the connection's write lock.
//
// What it owns:
//
//   - framing (frame.go): the 9-byte header read by hand so that a wrong version, a response
//     opcode, or a body over Options.MaxFrameSize (256 MB, like Cassandra) is answered with a
//     PROTOCOL_ERROR and the connection closed; the body decoded by the
//     go-cassandra-native-protocol codec, with LZ4 when STARTUP asked for it (lz4.go);
//   - version negotiation (version.go): only v4 is spoken; any other version gets Cassandra's
//     "Invalid or unsupported protocol version" error in a header carrying the client's version,
//     which every driver parses to step down;
//   - the handshake (handshake.go): OPTIONS, STARTUP, then PasswordAuthenticator over SASL
//     PLAIN, the username being the account name and the password the primary key (a read-write
//     session) or the read-only key (a read-only one), compared in constant time;
//   - requests (query.go): QUERY, PREPARE, EXECUTE and BATCH run through an Executor
//     (internal/cqlexec's, or a fake in tests), prepared statements shared by every connection
//     in a bounded LRU cache (prepared.go); results turned into RESULT messages (result.go,
//     with the encodings of package cqlvalue);
//   - errors (errors.go): fault kinds and the CQL packages' errors mapped to CQL error codes;
//   - events (events.go, topology.go): SCHEMA_CHANGE events pushed to the connections that
//     REGISTERed; in a cluster (Options.Peers), TOPOLOGY_CHANGE and STATUS_CHANGE when other
//     nodes join, go down and come back; never on one node.
//
// What it must never do: parse or check statements, or know tables and rows (cqlexec does);
// import net/http or internal/engine; panic on any input (a request's panic becomes a
// SERVER_ERROR, FuzzFrame holds the frame reader to it).
package cql
