// Package e2e drives a real `partita serve` process through the official Azure Cosmos DB Go
// SDK (azcosmos) and through raw signed HTTP requests. The JavaScript SDK suite lives in js/.
package e2e
