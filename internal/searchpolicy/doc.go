// Package searchpolicy holds a container's two search policies, as Cosmos DB users declare them
// when they create the container:
//
//   - the vector embedding policy names the paths that hold vectors, with each one's data
//     type, number of dimensions and distance function
//     ({"vectorEmbeddings": [{"path": "/embedding", "dataType": "float32",
//     "dimensions": 1536, "distanceFunction": "cosine"}]});
//   - the full-text policy names the paths that hold text, with each one's language
//     ({"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/text", "language": "en-US"}]}).
//
// It parses and validates them as the service does, re-encodes them for the catalog, and
// answers lookups by path for the query engine (which distance function VectorDistance uses
// on c.embedding, which language FullTextContains uses on c.text).
//
//	vec, err := searchpolicy.ParseVector(raw)   // nil when raw declares no embedding
//	emb, ok := vec.Lookup([]string{"embedding"})
//	ft, err := searchpolicy.ParseFullText(raw)  // nil when raw is absent
//	lang := ft.Language([]string{"text"})
//
// The indexes over these paths are declared in the indexing policy (package indexing); the
// checks that tie the two together (an index's path must be declared here) live in the engine,
// which holds both. This package knows nothing of storage, queries or the wire.
package searchpolicy
