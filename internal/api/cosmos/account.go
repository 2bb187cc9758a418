package cosmos

import (
	"net/http"
	"time"
)

// queryEngineConfiguration is what the account advertises about its query limits; the
// JavaScript SDK reads it when it plans queries itself.
const queryEngineConfiguration = `{"maxSqlQueryInputLength":262144,"maxJoinsPerSqlQuery":5,` +
	`"maxLogicalAndPerSqlQuery":500,"maxLogicalOrPerSqlQuery":500,"maxUdfRefPerSqlQuery":10,` +
	`"maxInExpressionItemsCount":16000,"queryMaxInMemorySortDocumentCount":500,` +
	`"maxQueryRequestTimeoutFraction":0.9,"sqlAllowNonFiniteNumbers":false,"sqlAllowAggregateFunctions":true,` +
	`"sqlAllowSubQuery":true,"sqlAllowScalarSubQuery":true,"allowNewKeywords":true,"sqlAllowLike":true,` +
	`"sqlAllowGroupByClause":true,"maxSpatialQueryCells":12,"spatialMaxGeometryPointCount":256,` +
	`"sqlDisableOptimizationFlags":0,"sqlAllowTop":true,"enableSpatialIndexing":true}`

type location struct {
	Name     string `json:"name"`
	Endpoint string `json:"databaseAccountEndpoint"`
}

// account answers GET /. The SDKs send every later request to the advertised endpoint, so it
// is the address this request reached, with the scheme it used.
func (c *call) account() error {
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	endpoint := scheme + "://" + c.r.Host + "/"
	locs := []location{{Name: "partita", Endpoint: endpoint}}
	c.charge = 0
	st := c.h.engine.Staleness()
	n := c.h.engine.ReplicaSetSize(c.ctx) // the replicas each partition has

	return c.replyJSON(http.StatusOK, map[string]any{
		// Not "localhost": the JavaScript SDK treats that id as the emulator and re-reads the account.
		"id":                           "partita",
		"_rid":                         c.r.Host,
		"_self":                        "",
		"media":                        "//media/",
		"addresses":                    "//addresses/",
		"_dbs":                         "//dbs/",
		"writableLocations":            locs,
		"readableLocations":            locs,
		"enableMultipleWriteLocations": false,
		"userReplicationPolicy":        map[string]any{"asyncReplication": false, "minReplicaSetSize": n, "maxReplicasetSize": n},
		"userConsistencyPolicy": map[string]any{"defaultConsistencyLevel": c.h.consistency,
			"maxStalenessPrefix": st.Versions, "maxIntervalInSeconds": int(st.Interval / time.Second)},
		"systemReplicationPolicy":  map[string]any{"minReplicaSetSize": n, "maxReplicasetSize": n},
		"readPolicy":               map[string]any{"primaryReadCoefficient": 1, "secondaryReadCoefficient": 1},
		"queryEngineConfiguration": queryEngineConfiguration,
	})
}
