// Package e2e drives a real `partita serve` process through the official Azure Cosmos DB Go
// SDK (azcosmos), through raw signed HTTP requests, and through gocql on the Cassandra API
// (cql_test.go; cql_bench_test.go measures it beside the REST API). The JavaScript SDK suite
// lives in js/.
package e2e
