package cosmos

import (
	"net/http"
	"strings"

	"github.com/partita-db/partita/internal/fault"
)

// The envelope of a request: what every request may carry whatever it asks for, checked
// before it is routed.

// apiVersions are the REST API versions a request may name in x-ms-version: the ones Cosmos
// documents as supported (2014-08-21 was retired in 2016) and the newer ones the official
// SDKs send (the Go SDK 2020-11-05, the JavaScript SDK 2020-07-15). A request without the
// header gets the latest behaviour, as Cosmos gives it.
var apiVersions = map[string]bool{
	"2015-04-08": true, "2015-06-03": true, "2015-08-06": true, "2015-12-16": true,
	"2016-07-11": true, "2017-01-19": true, "2017-02-22": true, "2017-05-03": true,
	"2017-11-15": true, "2018-06-18": true, "2018-08-31": true, "2018-09-17": true,
	"2018-12-31": true, "2019-10-14": true, "2020-07-15": true, "2020-11-05": true,
}

// checkEnvelope refuses a request that names an API version Cosmos does not have, or that
// repeats a header that carries one value: which of two partition keys, etags or dates was
// meant cannot be told, and taking the first would act on what the client may not have meant.
func checkEnvelope(r *http.Request) error {
	for name, values := range r.Header {
		if len(values) > 1 && singleValued(name) {
			return fault.New(fault.BadRequest, "The header %s is given %d times; it takes one value", name, len(values))
		}
	}
	if v, ok := r.Header["X-Ms-Version"]; ok && !apiVersions[v[0]] {
		return fault.New(fault.BadRequest, "Invalid API version %q: x-ms-version must be a supported REST API version such as 2018-12-31 or 2020-07-15", v[0])
	}
	return nil
}

// singleValued reports whether a header (in canonical form) takes one value: every Cosmos
// header, the conditions, and Authorization.
func singleValued(name string) bool {
	switch name {
	case "Authorization", "If-Match", "If-None-Match", "If-Modified-Since", "A-Im", "Content-Type", "Prefer", "Date":
		return true
	}
	return strings.HasPrefix(name, "X-Ms-")
}
