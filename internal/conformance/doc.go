// Package conformance finds the conformance data for tests: files recorded from Cosmos DB and
// its SDKs (query samples, effective partition key vectors) that live outside the repository,
// in shared/conformance beside its root, and are read in place.
//
//	data, err := os.ReadFile(conformance.Path(t, "epk-vectors.json"))
//
// Path skips the test when the data is absent, so a bare clone still passes; when the CI
// environment variable is set, absence is a failure instead, so that CI never passes by
// skipping. It is for tests only: it must never be imported by code that ships, and it must
// never copy, download or write the data.
package conformance
