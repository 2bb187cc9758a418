// Package engine is the account: the catalog of databases and containers, the partitions of
// each container and the routing of every item to the partition that owns its effective
// partition key. It is the one entry point for the APIs (REST today, CQL later): they hand it
// parsed requests and get back results and *status.Error failures, never storage errors.
//
// It owns the catalog's persistence (records under the catalog key family) and the rules for
// partition key definitions and throughput. It must never know about HTTP or wire formats.
package engine
