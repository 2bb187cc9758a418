package cosmos

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/faultinject"
)

// Fault injection in the request pipeline: after a request is authenticated and before it is
// dispatched, the handler's rules (internal/faultinject) may answer it with an error or delay
// it. An injected error is answered before anything is read or applied, so data is unchanged.
// Only requests on a container's data and metadata are classified (operation below); the
// management API (/_partita/..., the split endpoint, the partitions view) never is.

// injectedStatusCodes are the textual codes of the statuses rules inject.
var injectedStatusCodes = map[int]string{
	http.StatusTooManyRequests: "TooManyRequests", http.StatusGone: "Gone", 449: "RetryWith",
	http.StatusServiceUnavailable: "ServiceUnavailable", http.StatusRequestTimeout: "RequestTimeout",
}

// inject applies the first rule that fires on the request, if any. It reports whether it
// answered the request (then nothing else may be written).
func (c *call) inject() bool {
	op := c.operation()
	if op == "" {
		return false
	}
	q := c.faultRequest(op)
	hit, ok := c.h.faults.Match(&q)
	if !ok {
		return false
	}
	activity := c.w.Header()["x-ms-activity-id"][0] // set by ServeHTTP before anything else
	if hit.Latency > 0 {
		t := time.NewTimer(hit.Latency)
		select {
		case <-t.C:
		case <-c.r.Context().Done():
			t.Stop()
		}
	}
	if hit.Status == 0 {
		c.h.log.Info("fault injected: latency", "rule", hit.Rule, "latency", hit.Latency, "op", string(op),
			"method", c.r.Method, "path", c.r.URL.Path, "activity", activity)
		return false
	}
	c.h.log.Warn("fault injected", "rule", hit.Rule, "action", hit.Action, "op", string(op),
		"method", c.r.Method, "path", c.r.URL.Path, "activity", activity)
	hdr := c.w.Header()
	if hit.Substatus != 0 {
		hdr["x-ms-substatus"] = []string{strconv.Itoa(hit.Substatus)}
	}
	if hit.RetryAfter > 0 {
		hdr["x-ms-retry-after-ms"] = []string{strconv.FormatInt(hit.RetryAfter.Milliseconds(), 10)}
	}
	body, _ := json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{injectedStatusCodes[hit.Status], "Injected by Partita's fault rule " + hit.Rule + " (" + hit.Action + "); the request was not applied. Remove the rule with DELETE /_partita/faults/" + hit.Rule + " or `partita chaos rm " + hit.Rule + "`."})
	c.reply(hit.Status, body)
	return true
}

// operation classifies a request on a container for fault rules; "" for anything else.
func (c *call) operation() faultinject.Op {
	segs, m := c.res.segs, c.r.Method
	if len(segs) < 4 || segs[0] != "dbs" || segs[2] != "colls" {
		return ""
	}
	switch {
	case len(segs) == 4 && m == http.MethodGet:
		return faultinject.OpContainer
	case len(segs) == 5 && segs[4] == "pkranges" && m == http.MethodGet:
		return faultinject.OpPKRanges
	case len(segs) == 5 && segs[4] == "docs":
		switch {
		case m == http.MethodGet && c.r.Header.Get("A-IM") != "":
			return faultinject.OpChangeFeed
		case m == http.MethodGet:
			return faultinject.OpReadFeed
		case m == http.MethodPost && isQuery(c.r) && isTrue(c.r.Header.Get("X-Ms-Cosmos-Is-Query-Plan-Request")):
			return faultinject.OpQueryPlan
		case m == http.MethodPost && isQuery(c.r):
			return faultinject.OpQuery
		case m == http.MethodPost && c.r.Header.Get("X-Ms-Cosmos-Is-Batch-Request") != "":
			return faultinject.OpBatch
		case m == http.MethodPost && isTrue(c.r.Header.Get("X-Ms-Documentdb-Is-Upsert")):
			return faultinject.OpUpsert
		case m == http.MethodPost:
			return faultinject.OpCreate
		}
	case len(segs) == 6 && segs[4] == "docs":
		switch m {
		case http.MethodGet:
			return faultinject.OpRead
		case http.MethodPut:
			return faultinject.OpReplace
		case http.MethodDelete:
			return faultinject.OpDelete
		case http.MethodPatch:
			return faultinject.OpPatch
		}
	case len(segs) == 6 && segs[4] == "sprocs" && m == http.MethodPost && !isQuery(c.r):
		return faultinject.OpSproc
	}
	return ""
}

// faultRequest describes the request to the rules: its container, operation, the range id it
// names and the EPK range it reaches, read from its headers as the operation will read them.
func (c *call) faultRequest(op faultinject.Op) faultinject.Request {
	q := faultinject.Request{Database: c.res.segs[1], Container: c.res.segs[3], Op: op, RangeID: -1}
	if h := c.r.Header.Get("X-Ms-Documentdb-Partitionkeyrangeid"); h != "" {
		if id, err := strconv.ParseUint(h, 10, 32); err == nil {
			q.RangeID = int64(id)
		}
	}
	ct, err := c.container()
	if err != nil {
		return q // no such container: only rules without a range can match
	}
	q.Ranges = func(id uint32) (epk.Range, bool) {
		r, err := ct.PartitionRange(id)
		return r, err == nil
	}
	if s, err := c.scope(ct); err == nil {
		q.Scope, q.HasScope = s, true
	}
	return q
}
