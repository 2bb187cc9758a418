// Package status defines the one error type every layer of Partita fails with: an HTTP status,
// a Cosmos substatus and a message. The REST gateway turns it into a Cosmos error body as is.
//
// It owns the catalogue of statuses Partita uses; it must never import another package of
// Partita, so that every layer can depend on it.
package status
