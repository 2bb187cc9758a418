// Package client is the small Cosmos DB REST client that Partita's own tools (partita sql,
// import, export, advise, chaos, partitions) use to talk to a running server.
//
// It signs each request with the account key exactly as the official SDKs do (the one signer
// is internal/masterkey), retries requests the server throttled (429) after the wait the server
// asked for, and turns any other failure into an *Error carrying the status, substatus and the
// server's message. It knows resources mostly as links and paths: the tools decide what to ask.
//
// On top of Do it has what the data tools share: Query runs a query over a whole container,
// following the server's continuations page by page; Bulk sends up to 100 independent
// operations in one request, addressed to a partition key range as the SDKs' bulk mode does;
// ReadContainer and Ranges give a container's partition key definition and its ranges, from
// which Container.ItemKey and RangeOf route an item to its range with the SDKs' hashing
// (internal/epk) and the server's own item rules (internal/document).
//
//	c, err := client.New("https://127.0.0.1:8081/", client.Options{Key: key, Insecure: true})
//	resp, err := c.Do(ctx, client.Request{Method: "GET", Type: "colls", Link: "dbs/db1/colls/c1"})
//
// It must never be imported by the server's own layers: it is a client.
package client
