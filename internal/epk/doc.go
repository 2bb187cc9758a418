// Package epk owns Partita's partition key arithmetic: partition key values,
// hashing them to effective partition keys (EPKs) exactly as Azure Cosmos DB
// does, and ranges of EPKs.
//
// An EPK is the byte string that decides which physical partition holds a
// logical partition. Cosmos DB has three ways to compute it, and Partita must
// reproduce each bit for bit so that partition key ranges, continuation tokens
// and feed ranges mean the same thing here as in the service:
//
//   - hash version 1 (HashV1): MurmurHash3 x86_32 of the components, followed
//     by the order-preserving binary encoding of the (truncated) components;
//   - hash version 2 (HashV2): MurmurHash3 x64_128 of all components together,
//     16 bytes with the top two bits cleared;
//   - MultiHash (HashMulti), for hierarchical partition keys: the HashV2 of
//     each component on its own, concatenated, so that a key prefix maps to a
//     contiguous EPK range (PrefixRange).
//
// EPKs compare as plain byte strings. The whole key space is [Min, Max) with
// Min = "" and Max = "\xff" (hex "FF").
//
// Everything here is a pure function of its arguments. The package must never
// do I/O, keep global mutable state, or import anything beyond the standard
// library: it sits at the bottom of the dependency graph and its outputs are
// persisted (range boundaries, document placement), so its behaviour may only
// change together with a data migration. The conformance vectors in
// shared/conformance/epk-vectors.json are the judge of correctness.
package epk
