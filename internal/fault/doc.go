// Package fault is Partita's one vocabulary of failures. Every layer below the front ends
// (engine, partition, query, storage, document, value) fails with a *Error of one Kind: not
// found, conflict, precondition failed, too large, throttled (with when to retry), gone (with
// why), bad request (with where, for query text), and so on. Nothing here speaks a protocol:
// each front end maps the kinds once, to its own codes (the Cosmos gateway to an HTTP status,
// a substatus and a {"code","message"} body; the CQL front end to its error codes).
//
// Use:
//
//	return fault.New(fault.NotFound, "Database %q does not exist", id)
//
//	if errors.Is(err, fault.Conflict) { ... }   // every *Error of that kind matches its Kind
//	e := fault.From(err)                         // anything else becomes an Internal *Error
//
// It must never import another package of Partita, so that every layer can depend on it.
package fault
