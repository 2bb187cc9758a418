// Package cosmos is the Cosmos DB REST gateway: it authenticates requests (master-key HMAC, or
// a resource token it issued for a permission, resourcetoken.go), maps URLs to resources, parses Cosmos headers and bodies, calls the engine, and writes
// responses, headers and errors in the shapes the official SDKs expect.
//
// Besides the Cosmos resources it answers two Partita admin views of a container, signed like
// any request: /partitions (partitions.go, its physical partitions' metrics) and /advice
// (advice.go, internal/advisor's partition key advice from a sample, the hottest logical
// partitions and the query texts the engine logged).
//
// It owns the wire format and nothing else: it must never hold state of its own beyond
// configuration, decide anything about partitions, or touch storage.
package cosmos
