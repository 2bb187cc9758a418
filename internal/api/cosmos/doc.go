// Package cosmos is the Cosmos DB REST gateway: it authenticates requests (master-key HMAC, or
// a resource token it issued for a permission, resourcetoken.go), maps URLs to resources, parses Cosmos headers and bodies, calls the engine, and writes
// responses, headers and errors in the shapes the official SDKs expect.
//
// Besides the Cosmos resources it answers two Partita admin views of a container, signed like
// any request: /partitions (partitions.go, its physical partitions' metrics) and /advice
// (advice.go, internal/advisor's partition key advice from a sample, the hottest logical
// partitions and the query texts the engine logged).
//
// Beside the Cosmos API it serves Partita's management API (manage.go: fault-injection rules
// under /_partita/faults, a split on demand), and it asks the fault rules it is given
// (internal/faultinject) about every request on a container before dispatching it (inject.go).
//
// It owns the wire format and nothing else: it must never hold state of its own beyond
// configuration (the fault rules are internal/faultinject's), decide anything about partitions, or touch storage.
package cosmos
