package cosmos

import (
	"net/http"

	"github.com/partita-db/partita/internal/fault"
)

// dispatch routes by URL shape and method.
func (c *call) dispatch() error {
	m := c.r.Method
	var shape [64]byte
	switch string(c.res.appendShape(shape[:0])) {
	case "":
		if m == http.MethodGet {
			return c.account()
		}
	case "dbs":
		switch {
		case m == http.MethodGet:
			return c.listDatabases()
		case m == http.MethodPost && isQuery(c.r):
			return c.queryCatalog()
		case m == http.MethodPost:
			return c.createDatabase()
		}
	case "dbs/*":
		switch m {
		case http.MethodGet:
			return c.readDatabase()
		case http.MethodDelete:
			return c.deleteDatabase()
		}
	case "dbs/*/colls":
		switch {
		case m == http.MethodGet:
			return c.listContainers()
		case m == http.MethodPost && isQuery(c.r):
			return c.queryCatalog()
		case m == http.MethodPost:
			return c.createContainer()
		}
	case "dbs/*/colls/*":
		switch m {
		case http.MethodGet:
			return c.readContainer()
		case http.MethodPut:
			return c.replaceContainer()
		case http.MethodDelete:
			return c.deleteContainer()
		}
	case "dbs/*/colls/*/docs":
		switch {
		case m == http.MethodGet:
			return c.readFeed()
		case m == http.MethodPost && isQuery(c.r):
			return c.queryItems()
		case m == http.MethodPost && c.r.Header.Get("X-Ms-Cosmos-Is-Batch-Request") != "":
			return c.batch()
		case m == http.MethodPost:
			return c.createItem()
		}
	case "dbs/*/colls/*/docs/*":
		switch m {
		case http.MethodGet:
			return c.readItem()
		case http.MethodPut:
			return c.replaceItem()
		case http.MethodDelete:
			return c.deleteItem()
		case http.MethodPatch:
			return c.patchItem()
		}
	case "dbs/*/colls/*/sprocs", "dbs/*/colls/*/triggers", "dbs/*/colls/*/udfs":
		switch {
		case m == http.MethodGet:
			return c.listScripts()
		case m == http.MethodPost && isQuery(c.r):
			return c.queryScripts()
		case m == http.MethodPost:
			return c.createScript()
		}
	case "dbs/*/colls/*/sprocs/*", "dbs/*/colls/*/triggers/*", "dbs/*/colls/*/udfs/*":
		switch {
		case m == http.MethodGet:
			return c.readScript()
		case m == http.MethodPut:
			return c.replaceScript()
		case m == http.MethodDelete:
			return c.deleteScript()
		// Not a query: a read-only key may sign queries (auth.go), and execution may write.
		case m == http.MethodPost && c.res.segs[4] == "sprocs" && !isQuery(c.r):
			return c.executeProcedure()
		}
	case "dbs/*/users":
		switch {
		case m == http.MethodGet:
			return c.listUsers()
		case m == http.MethodPost && isQuery(c.r):
			return c.queryUsers()
		case m == http.MethodPost:
			return c.createUser()
		}
	case "dbs/*/users/*":
		switch m {
		case http.MethodGet:
			return c.readUser()
		case http.MethodPut:
			return c.replaceUser()
		case http.MethodDelete:
			return c.deleteUser()
		}
	case "dbs/*/users/*/permissions":
		switch {
		case m == http.MethodGet:
			return c.listPermissions()
		case m == http.MethodPost && isQuery(c.r):
			return c.queryPermissions()
		case m == http.MethodPost:
			return c.createPermission()
		}
	case "dbs/*/users/*/permissions/*":
		switch m {
		case http.MethodGet:
			return c.readPermission()
		case http.MethodPut:
			return c.replacePermission()
		case http.MethodDelete:
			return c.deletePermission()
		}
	case "dbs/*/colls/*/pkranges":
		if m == http.MethodGet {
			return c.partitionKeyRanges()
		}
	case "dbs/*/colls/*/partitions":
		if m == http.MethodGet {
			return c.partitions()
		}
	case "dbs/*/colls/*/advice":
		if m == http.MethodGet {
			return c.advice()
		}
	case "dbs/*/colls/*/partitions/*":
		if c.res.segs[5] == "throughput" && (m == http.MethodGet || m == http.MethodPost) {
			return c.partitionThroughput() // redistribute.go
		}
	case "dbs/*/colls/*/operations/*":
		if c.res.segs[5] != "partitionkeydelete" {
			return fault.New(fault.NotFound, "A container has no operation %q; the one served is partitionkeydelete", c.res.segs[5])
		}
		if m == http.MethodPost {
			return c.deletePartitionKey() // keydelete.go
		}
	case "dbs/*/colls/*/partitions/*/split":
		if m == http.MethodPost {
			return c.splitPartition() // manage.go
		}
	case "offers":
		switch {
		case m == http.MethodGet:
			return c.listOffers()
		case m == http.MethodPost && isQuery(c.r):
			return c.queryOffers()
		}
	case "offers/*":
		switch m {
		case http.MethodGet:
			return c.readOffer()
		case http.MethodPut:
			return c.replaceOffer()
		}
	default:
		return c.unservedKind()
	}
	return &methodNotAllowed{method: m, shape: c.res.shape()}
}

func isQuery(r *http.Request) bool {
	return isTrue(r.Header.Get("X-Ms-Documentdb-Isquery")) || isTrue(r.Header.Get("X-Ms-Documentdb-Query")) ||
		r.Header.Get("Content-Type") == "application/query+json"
}

// cosmosKinds are the resource kinds of Cosmos DB's REST API that Partita does not serve (yet).
var cosmosKinds = map[string]string{
	"conflicts": "conflicts", "attachments": "attachments", "clientencryptionkeys": "client encryption keys",
	"schemas": "schemas", "media": "media", "addresses": "addresses",
}

// unservedKind answers a path Partita has no handler for, naming the kind of resource it
// asks for rather than the path of its parent.
func (c *call) unservedKind() error {
	if name, ok := cosmosKinds[c.res.typ]; ok {
		return fault.New(fault.NotFound, "Partita does not serve %s (%q resources) yet: %s /%s", name, c.res.typ, c.r.Method, c.res.shape())
	}
	return fault.New(fault.NotFound, "%q is not a kind of resource Partita knows: %s /%s", c.res.typ, c.r.Method, c.res.shape())
}
