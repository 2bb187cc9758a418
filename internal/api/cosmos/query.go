package cosmos

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/value"
)

// querySpec is the body of a query request.
type querySpec struct {
	Query      string            `json:"query"`
	Parameters []query.Parameter `json:"parameters"`
}

// readQuery parses a query request body and prepares the query; text is the query's text.
func (c *call) readQuery() (prepared *query.Prepared, params map[string]value.Value, text string, err error) {
	var spec querySpec
	if err := c.decodeJSON(&spec); err != nil {
		return nil, nil, "", err
	}
	if strings.TrimSpace(spec.Query) == "" {
		return nil, nil, "", fault.New(fault.BadRequest, "The query body needs a non-empty \"query\"")
	}
	if params, err = query.Params(spec.Parameters); err != nil {
		return nil, nil, "", err
	}
	prepared, err = query.Prepare(spec.Query)
	if err == nil {
		err = prepared.CheckParams(params)
	}
	return prepared, params, spec.Query, err
}

func (c *call) queryOptions(params map[string]value.Value) (query.Options, error) {
	max, err := c.maxItemCount()
	return query.Options{Params: params, MaxItems: max, Continuation: c.r.Header.Get("X-Ms-Continuation")}, err
}

// queryItems runs a query over a container, scoped by the request's headers (see scope).
func (c *call) queryItems() error {
	ct, err := c.container()
	if err != nil {
		return err
	}
	started := time.Now()
	prepared, params, text, err := c.readQuery()
	if err != nil {
		return err
	}
	c.recordQuery(ct, text)
	if isTrue(c.r.Header.Get("X-Ms-Cosmos-Is-Query-Plan-Request")) {
		return c.queryPlan(ct, prepared, params)
	}
	if err := c.allowCrossPartition(ct, prepared, params); err != nil {
		return err
	}
	r, err := c.scope(ct)
	if err != nil {
		return err
	}
	opts, err := c.queryOptions(params)
	if err != nil {
		return err
	}
	res, err := ct.QueryAt(c.ctx, c.readConsistency(), prepared, r, opts)
	c.charge = res.Charge
	if err != nil {
		return err
	}
	hdr := c.w.Header()
	if res.Next != "" {
		hdr["x-ms-continuation"] = []string{res.Next}
	}
	hdr["x-ms-session-token"] = []string{c.sessionTokens(res.Partitions)}
	hdr["x-ms-content-path"] = []string{ct.RID()}
	hdr["x-ms-item-count"] = []string{strconv.Itoa(len(res.Results))}
	hdr["x-ms-documentdb-query-metrics"] = []string{queryMetrics(res.Stats, prepared, time.Since(started))}
	if isTrue(c.r.Header.Get("X-Ms-Cosmos-Populateindexmetrics")) {
		hdr["x-ms-cosmos-index-utilization"] = []string{indexUtilization(ct.IndexMetrics(prepared, res.Stats.Index))}
	}
	c.reply(http.StatusOK, resultList(ct.RID(), res.Results))
	return nil
}

// recordQuery logs the query's text for the partition key advisor once per query: on its
// first page, and not for the SDKs' per-range requests of a fanned-out query (they name a
// range or an EPK range). An SDK that plans asks for the plan once, and its per-range
// requests are not logged.
func (c *call) recordQuery(ct *engine.Container, text string) {
	h := c.r.Header
	if h.Get("X-Ms-Continuation") != "" || h.Get("X-Ms-Documentdb-Partitionkeyrangeid") != "" ||
		h.Get("X-Ms-Start-Epk") != "" || h.Get("X-Ms-End-Epk") != "" {
		return
	}
	ct.RecordQuery(text)
}

// allowCrossPartition refuses, as Cosmos does, a query that may read more than one logical
// partition unless the request allows fan-out (x-ms-documentdb-query-enablecrosspartition:
// true, which the JavaScript SDK always sends and the Go SDK sends unless told not to). A
// query is scoped when the request names a partition key, a range or an EPK range (the SDKs'
// own per-range requests), or when its WHERE pins one partition key value.
func (c *call) allowCrossPartition(ct *engine.Container, p *query.Prepared, params map[string]value.Value) error {
	h := c.r.Header
	if isTrue(h.Get("X-Ms-Documentdb-Query-Enablecrosspartition")) || h.Get("X-Ms-Documentdb-Partitionkey") != "" ||
		h.Get("X-Ms-Documentdb-Partitionkeyrangeid") != "" || h.Get("X-Ms-Start-Epk") != "" || h.Get("X-Ms-End-Epk") != "" {
		return nil
	}
	if ranges := ct.QueryRanges(p, params); len(ranges) == 1 && ranges[0] != epk.All {
		return nil
	}
	if ct.Def().SystemKey && ct.Unsplit() {
		return nil // a non-partitioned container: its clients never ask for fan-out
	}
	return fault.New(fault.BadRequest, "Cross partition query is required but disabled. Set x-ms-documentdb-query-enablecrosspartition to true, name a partition key with x-ms-documentdb-partitionkey, or filter on one partition key value.")
}

// scope is the EPK range a feed or query request reads: one logical partition (or a prefix of
// a hierarchical key) named by the partition key header, one partition key range named by its
// id (how the Go SDK's ReadManyItems addresses ranges), the whole container otherwise;
// narrowed by x-ms-start-epk and x-ms-end-epk when given.
func (c *call) scope(ct *engine.Container) (epk.Range, error) {
	r := epk.All
	var err error
	if h := c.r.Header.Get("X-Ms-Documentdb-Partitionkeyrangeid"); h != "" {
		id, err := strconv.ParseUint(h, 10, 32)
		if err != nil {
			return r, fault.New(fault.BadRequest, "x-ms-documentdb-partitionkeyrangeid must be a range id, not %q", h)
		}
		if r, err = ct.PartitionRange(uint32(id)); err != nil {
			return r, err
		}
	}
	if h := c.r.Header.Get("X-Ms-Documentdb-Partitionkey"); h != "" {
		key, err := parsePartitionKey(h)
		if err != nil {
			return r, err
		}
		kr, err := ct.KeyRange(key)
		if err != nil {
			return r, err
		}
		// With a range id too (the Go SDK's change feed sends both), the logical partition
		// within that range: empty, but still in it, when the key lives elsewhere.
		if kr.Min >= r.Max || kr.Max <= r.Min {
			r.Max = r.Min
		} else {
			r.Min, r.Max = max(r.Min, kr.Min), min(r.Max, kr.Max)
		}
	}
	if lo, hi := c.r.Header.Get("X-Ms-Start-Epk"), c.r.Header.Get("X-Ms-End-Epk"); lo != "" || hi != "" {
		r, err = narrow(r, lo, hi)
	}
	return r, err
}

// narrow intersects r with the hex EPK bounds of x-ms-start-epk and x-ms-end-epk. Bounds that
// cross each other are refused: no client that meant a range sends them.
func narrow(r epk.Range, lo, hi string) (epk.Range, error) {
	start, end := epk.Min, epk.Max
	var err error
	if lo != "" {
		if start, err = epk.ParseHex(lo); err != nil {
			return r, fault.New(fault.BadRequest, "x-ms-start-epk is not a hex EPK: %q", lo)
		}
	}
	if hi != "" {
		if end, err = epk.ParseHex(hi); err != nil {
			return r, fault.New(fault.BadRequest, "x-ms-end-epk is not a hex EPK: %q", hi)
		}
	}
	if start > end {
		return r, fault.New(fault.BadRequest, "x-ms-start-epk %q is past x-ms-end-epk %q", lo, hi)
	}
	r.Min, r.Max = max(r.Min, start), min(r.Max, end)
	return r, nil
}

// queryMetrics writes x-ms-documentdb-query-metrics. retrievedDocumentCount is every item
// the execution loaded, the whole partition when it scanned; indexUtilizationRatio is the
// share of those that the index picked and the query returned (see indexHitRatio).
func queryMetrics(s query.Stats, p *query.Prepared, d time.Duration) string {
	ms := float64(d.Microseconds()) / 1000
	return fmt.Sprintf("totalExecutionTimeInMs=%.2f;queryCompileTimeInMs=0.00;queryLogicalPlanBuildTimeInMs=0.00;"+
		"queryPhysicalPlanBuildTimeInMs=0.00;queryOptimizationTimeInMs=0.00;VMExecutionTimeInMs=%.2f;"+
		"indexLookupTimeInMs=0.00;documentLoadTimeInMs=0.00;systemFunctionExecuteTimeInMs=0.00;"+
		"userFunctionExecuteTimeInMs=0.00;retrievedDocumentCount=%d;retrievedDocumentSize=%d;"+
		"outputDocumentCount=%d;outputDocumentSize=0;writeOutputTimeInMs=0.00;indexUtilizationRatio=%.2f",
		ms, ms, s.ItemsLoaded, s.BytesLoaded, s.Results, indexHitRatio(s, p))
}

// resultList renders query results as {"_rid", "Documents": [...], "_count"}.
func resultList(rid string, results []value.Value) []byte {
	docs := make([][]byte, len(results))
	for i, v := range results {
		docs[i] = value.AppendJSON(nil, v)
	}
	return documentList(rid, docs)
}

// queryPlan answers a query plan request (the .NET and Java SDKs make one for every
// cross-partition query, the JavaScript SDK when told to) with the query's plan, the query to
// run on each range (query.RangeQuery) and the EPK ranges it reads.
func (c *call) queryPlan(ct *engine.Container, p *query.Prepared, params map[string]value.Value) error {
	pl := p.Plan(params)
	rewritten, err := p.RangeQuery(params)
	if err != nil {
		return err
	}
	aliases := pl.GroupByAliasToAggregateType
	if aliases == nil {
		aliases = map[string]*string{}
	}
	orEmpty := func(xs []string) []string {
		if xs == nil {
			return []string{}
		}
		return xs
	}
	var ranges []map[string]any
	for _, r := range ct.QueryRanges(p, params) {
		ranges = append(ranges, map[string]any{"min": r.Min.Hex(), "max": r.Max.Hex(), "isMinInclusive": true, "isMaxInclusive": false})
	}
	c.charge = 0
	return c.replyJSON(http.StatusOK, map[string]any{
		"partitionedQueryExecutionInfoVersion": 2,
		"queryInfo": map[string]any{
			"distinctType": pl.DistinctType, "top": pl.Top, "offset": pl.Offset, "limit": pl.Limit,
			"orderBy": orEmpty(pl.OrderBy), "orderByExpressions": orEmpty(pl.OrderByExpressions),
			"groupByExpressions": orEmpty(pl.GroupByExpressions), "groupByAliases": orEmpty(pl.GroupByAliases),
			"aggregates": orEmpty(pl.Aggregates), "groupByAliasToAggregateType": aliases,
			"rewrittenQuery": rewritten, "hasSelectValue": pl.HasSelectValue, "hasNonStreamingOrderBy": false,
		},
		"queryRanges": ranges,
	})
}

// queryCatalog answers a query over databases or containers.
func (c *call) queryCatalog() error {
	var docs []map[string]any
	key := "Databases"
	if len(c.res.segs) == 1 {
		for _, d := range c.h.engine.Databases() {
			docs = append(docs, databaseJSON(d))
		}
	} else {
		cs, err := c.h.engine.Containers(c.res.segs[1])
		if err != nil {
			return err
		}
		for _, info := range cs {
			docs = append(docs, c.containerJSON(info))
		}
		key = "DocumentCollections"
	}
	return c.querySlice(key, docs)
}

// querySlice runs the request's query over in-memory resources and writes the page under
// the list name key.
func (c *call) querySlice(key string, resources []map[string]any) error {
	prepared, params, _, err := c.readQuery()
	if err != nil {
		return err
	}
	docs := make(query.Slice, len(resources))
	for i, r := range resources {
		if docs[i], err = json.Marshal(r); err != nil {
			return fault.New(fault.Internal, "encoding %s: %w", key, err)
		}
	}
	opts, err := c.queryOptions(params)
	if err != nil {
		return err
	}
	page, err := prepared.Run(docs, opts)
	c.charge = ru.Query(page.Stats.ItemsLoaded, page.Stats.BytesLoaded, page.Stats.Results, 1)
	if err != nil {
		return err
	}
	if page.Next != "" {
		c.w.Header()["x-ms-continuation"] = []string{page.Next}
	}
	out := make([]json.RawMessage, len(page.Results))
	for i, v := range page.Results {
		out[i] = value.AppendJSON(nil, v)
	}
	return c.replyJSON(http.StatusOK, map[string]any{"_rid": "", key: out, "_count": len(out)})
}
