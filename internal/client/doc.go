// Package client is the small Cosmos DB REST client that Partita's own tools (partita sql,
// import, export, advise, chaos, partitions) use to talk to a running server.
//
// It signs each request with the account key exactly as the official SDKs do (the one signer
// is internal/masterkey), retries requests the server throttled (429) after the wait the server
// asked for, and turns any other failure into an *Error carrying the status, substatus and the
// server's message. It knows resources only as links and paths: the tools decide what to ask.
//
//	c, err := client.New("https://127.0.0.1:8081/", client.Options{Key: key, Insecure: true})
//	resp, err := c.Do(ctx, client.Request{Method: "GET", Type: "colls", Link: "dbs/db1/colls/c1"})
//
// It must never be imported by the server's own layers: it is a client.
package client
