package cosmos

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/ru"
)

func databaseJSON(d engine.DatabaseInfo) map[string]any {
	return map[string]any{
		"id": d.ID, "_rid": d.RID, "_self": d.Self, "_etag": quoted(d.ETag), "_ts": d.TS,
		"_colls": "colls/", "_users": "users/",
	}
}

// defaultIndexingPolicy is what Cosmos gives a container created without one.
var defaultIndexingPolicy = json.RawMessage(`{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`)

func containerJSON(c engine.ContainerInfo) map[string]any {
	indexing := c.Indexing
	if len(indexing) == 0 {
		indexing = defaultIndexingPolicy
	}
	out := map[string]any{
		"id": c.ID, "_rid": c.RID, "_self": c.Self, "_etag": quoted(c.ETag), "_ts": c.TS,
		"partitionKey":   keyDefinitionJSON(c.PartitionKey),
		"indexingPolicy": indexing,
		"conflictResolutionPolicy": map[string]any{
			"mode": "LastWriterWins", "conflictResolutionPath": "/_ts", "conflictResolutionProcedure": "",
		},
		"geospatialConfig": map[string]any{"type": "Geography"},
		"uniqueKeyPolicy":  c.UniqueKeys,
		"_docs":            "docs/", "_sprocs": "sprocs/", "_triggers": "triggers/", "_udfs": "udfs/", "_conflicts": "conflicts/",
	}
	if c.DefaultTTL != nil {
		out["defaultTtl"] = *c.DefaultTTL
	}
	if c.VectorPolicy != nil {
		out["vectorEmbeddingPolicy"] = c.VectorPolicy
	}
	if c.FullTextPolicy != nil {
		out["fullTextPolicy"] = c.FullTextPolicy
	}
	return out
}

// containerJSON is containerJSON as the request's API version shows it: to a client of a
// version before 2018-12-31 (the Python SDK 3.1 sends 2018-09-17), a container created without
// a partition key has none, as the service shows it to them, so that it names none.
func (c *call) containerJSON(info engine.ContainerInfo) map[string]any {
	out := containerJSON(info)
	if v := c.r.Header.Get("X-Ms-Version"); info.PartitionKey.SystemKey && v != "" && v < systemKeyVersion {
		delete(out, "partitionKey")
	}
	return out
}

// systemKeyVersion is the first API version to which the service shows the system key.
const systemKeyVersion = "2018-12-31"

// keyDefinitionJSON is a container's partition key definition as the service shows it: the
// system key as it shows it for a container created without one, without a version.
func keyDefinitionJSON(d engine.PartitionKeyDef) map[string]any {
	if d.SystemKey {
		return map[string]any{"paths": d.Paths, "kind": d.Kind, "systemKey": true}
	}
	return map[string]any{"paths": d.Paths, "kind": d.Kind, "version": d.Version}
}

// throughputHeaders reads the throughput a create request asks for: x-ms-offer-throughput for
// manual, x-ms-cosmos-offer-autopilot-settings for autoscale. nil when neither is present.
func (c *call) throughputHeaders() (*engine.Throughput, error) {
	manual := c.r.Header.Get("X-Ms-Offer-Throughput")
	auto := c.r.Header.Get("X-Ms-Cosmos-Offer-Autopilot-Settings")
	switch {
	case manual != "" && auto != "":
		return nil, fault.New(fault.BadRequest, "Give either x-ms-offer-throughput or x-ms-cosmos-offer-autopilot-settings, not both")
	case manual != "":
		n, err := strconv.Atoi(manual)
		if err != nil || n <= 0 {
			return nil, fault.New(fault.BadRequest, "x-ms-offer-throughput must be a positive whole number of RU/s, not %q", manual)
		}
		return &engine.Throughput{Manual: n}, nil
	case auto != "":
		var s struct {
			MaxThroughput int `json:"maxThroughput"`
		}
		if err := json.Unmarshal([]byte(auto), &s); err != nil || s.MaxThroughput <= 0 {
			return nil, fault.New(fault.BadRequest, "x-ms-cosmos-offer-autopilot-settings must be {\"maxThroughput\": <RU/s>}, not %q", auto)
		}
		return &engine.Throughput{AutoscaleMax: s.MaxThroughput}, nil
	}
	return nil, nil
}

func (c *call) createDatabase() error {
	var body struct {
		ID string `json:"id"`
	}
	if err := c.decodeJSON(&body); err != nil {
		return err
	}
	t, err := c.throughputHeaders()
	if err != nil {
		return err
	}
	d, err := c.h.engine.CreateDatabase(body.ID, t)
	if err != nil {
		return err
	}
	c.charge = ru.CatalogWrite()
	return c.replyResource(http.StatusCreated, d.ETag, databaseJSON(d))
}

func (c *call) readDatabase() error {
	d, err := c.h.engine.Database(c.res.segs[1])
	if err != nil {
		return err
	}
	c.charge = ru.Catalog()
	return c.replyResource(http.StatusOK, d.ETag, databaseJSON(d))
}

func (c *call) deleteDatabase() error {
	if err := c.h.engine.DeleteDatabase(c.res.segs[1], c.ifMatch()); err != nil {
		return err
	}
	c.charge = ru.CatalogWrite()
	c.reply(http.StatusNoContent, nil)
	return nil
}

func (c *call) listDatabases() error {
	dbs := c.h.engine.Databases()
	lo, hi, err := c.page(len(dbs), func(i int) string { return dbs[i].ID })
	if err != nil {
		return err
	}
	list := []map[string]any{}
	for _, d := range dbs[lo:hi] {
		list = append(list, databaseJSON(d))
	}
	c.charge = ru.Catalog()
	return c.replyJSON(http.StatusOK, map[string]any{"_rid": "", "Databases": list, "_count": len(list)})
}

// page picks the page of a list sorted by id that the request asks for (x-ms-max-item-count,
// x-ms-continuation), sets the continuation header for the next one, and returns its bounds.
// The token is the last id of the previous page, so it survives inserts and deletes.
func (c *call) page(n int, id func(int) string) (lo, hi int, err error) {
	max, err := c.maxItemCount()
	if err != nil {
		return 0, 0, err
	}
	if tok := c.r.Header.Get("X-Ms-Continuation"); tok != "" {
		last, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil {
			return 0, 0, fault.New(fault.BadRequest, "The continuation token %q is not valid; pass back the token a previous page returned", tok)
		}
		lo = sort.Search(n, func(i int) bool { return id(i) > string(last) })
	}
	hi = n
	if max > 0 && max < n-lo { // not lo+max < n: a huge max would wrap around
		hi = lo + max
		c.set("x-ms-continuation", base64.RawURLEncoding.EncodeToString([]byte(id(hi-1))))
	}
	return lo, hi, nil
}

// containerBody is the body of a container create or replace.
type containerBody struct {
	ID           string                  `json:"id"`
	PartitionKey *engine.PartitionKeyDef `json:"partitionKey"`
	Indexing     json.RawMessage         `json:"indexingPolicy"`
	DefaultTTL   json.RawMessage         `json:"defaultTtl"` // absent or null: time to live off
	UniqueKeys   json.RawMessage         `json:"uniqueKeyPolicy"`
	VectorPolicy json.RawMessage         `json:"vectorEmbeddingPolicy"`
	FullText     json.RawMessage         `json:"fullTextPolicy"`
}

func (c *call) createContainer() error {
	var body containerBody
	if err := c.decodeJSON(&body); err != nil {
		return err
	}
	if body.PartitionKey == nil || len(body.PartitionKey.Paths) == 0 && body.PartitionKey.Kind == "" {
		// A legacy, non-partitioned container, as the SDKs up to 2.x and Python's 3.x create
		// it: the service gives it the system key.
		def := engine.SystemKey()
		body.PartitionKey = &def
	}
	t, err := c.throughputHeaders()
	if err != nil {
		return err
	}
	ttl, err := engine.ParseDefaultTTL(body.DefaultTTL)
	if err != nil {
		return err
	}
	info, err := c.h.engine.CreateContainer(c.res.segs[1], engine.ContainerSpec{
		ID: body.ID, PartitionKey: *body.PartitionKey, Throughput: t, Indexing: body.Indexing, DefaultTTL: ttl,
		UniqueKeys: body.UniqueKeys, VectorPolicy: body.VectorPolicy, FullTextPolicy: body.FullText,
	})
	if err != nil {
		return err
	}
	c.charge = ru.CatalogWrite()
	return c.replyResource(http.StatusCreated, info.ETag, c.containerJSON(info))
}

func (c *call) readContainer() error {
	info, err := c.h.engine.ContainerInfo(c.res.segs[1], c.res.segs[3])
	if err != nil {
		return err
	}
	var u engine.Usage
	for _, p := range info.Partitions {
		u.Items, u.Bytes = u.Items+p.Items, u.Bytes+p.Bytes
	}
	c.setQuota(u)
	c.setIndexProgress(info)
	c.charge = ru.Catalog()
	return c.replyResource(http.StatusOK, info.ETag, c.containerJSON(info))
}

func (c *call) replaceContainer() error {
	var body containerBody
	if err := c.decodeJSON(&body); err != nil {
		return err
	}
	if body.ID != c.res.segs[3] {
		return fault.New(fault.BadRequest, "The id %q in the body does not match the container %q in the path", body.ID, c.res.segs[3])
	}
	// A replace gives the whole container, the partition key included: one without it would
	// be taken for a container that has none.
	if body.PartitionKey == nil {
		return fault.New(fault.BadRequest, "A container replace must give the container's partition key definition, which cannot change")
	}
	// A body without defaultTtl turns time to live off.
	ttl, err := engine.ParseDefaultTTL(body.DefaultTTL)
	if err != nil {
		return err
	}
	info, err := c.h.engine.ReplaceContainer(c.res.segs[1], c.res.segs[3], engine.ContainerReplace{
		PartitionKey: *body.PartitionKey, Indexing: body.Indexing, DefaultTTL: ttl, UniqueKeys: body.UniqueKeys,
		VectorPolicy: body.VectorPolicy, FullTextPolicy: body.FullText, IfMatch: c.ifMatch(),
	})
	if err != nil {
		return err
	}
	c.charge = ru.CatalogWrite()
	return c.replyResource(http.StatusOK, info.ETag, c.containerJSON(info))
}

func (c *call) deleteContainer() error {
	if err := c.h.engine.DeleteContainer(c.res.segs[1], c.res.segs[3], c.ifMatch()); err != nil {
		return err
	}
	c.charge = ru.CatalogWrite()
	c.reply(http.StatusNoContent, nil)
	return nil
}

func (c *call) listContainers() error {
	cs, err := c.h.engine.Containers(c.res.segs[1])
	if err != nil {
		return err
	}
	lo, hi, err := c.page(len(cs), func(i int) string { return cs[i].ID })
	if err != nil {
		return err
	}
	list := []map[string]any{}
	for _, info := range cs[lo:hi] {
		list = append(list, c.containerJSON(info))
	}
	c.charge = ru.Catalog()
	return c.replyJSON(http.StatusOK, map[string]any{"_rid": "", "DocumentCollections": list, "_count": len(list)})
}
