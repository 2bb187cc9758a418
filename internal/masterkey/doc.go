// Package masterkey is Partita's one implementation of the Cosmos DB master-key signature: the
// HMAC-SHA256, under the decoded account key, of
//
//	verb + "\n" + resourceType + "\n" + resourceLink + "\n" + date + "\n\n"
//
// with verb, resource type and date in ASCII lower case and the link exactly as given, sent
// base64-encoded as the Authorization header value "type=master&ver=1.0&sig=<signature>",
// URL-query-escaped.
//
// Clients (the CLI, the bench tools, the end-to-end tests) sign with Authorization:
//
//	k, err := masterkey.Parse(accountKey)
//	req.Header.Set("x-ms-date", date)
//	req.Header.Set("Authorization", k.Authorization("GET", "docs", "dbs/d/colls/c/docs/x", date))
//
// The gateway verifies with AppendSignature into a stack buffer and compares with hmac.Equal;
// pooled HMAC states make that allocation-free, since it runs on every request.
//
// Derive gives keys for other uses of the account key (the gateway signs resource tokens with
// one), kept apart from request signatures.
//
// It owns the canonical payload and the signature only: reading the header, checking the date
// and deciding what a read-only key may do belong to the gateway. It must never import another
// package of Partita, and never put a key or a signature it computed into an error or a log: an
// expected signature in a message would let anyone forge one.
package masterkey
