package cosmos

import (
	"net/http"
	"strconv"

	"github.com/partita-db/partita/internal/ru"
)

// partitionKeyRanges answers GET .../pkranges. Clients read it as an incremental feed: they
// send the etag they hold and expect 304 when the ranges have not changed since.
func (c *call) partitionKeyRanges() error {
	info, err := c.h.engine.ContainerInfo(c.res.segs[1], c.res.segs[3])
	if err != nil {
		return err
	}
	c.charge = ru.Catalog()
	etag := quoted(info.RID + ":" + strconv.FormatUint(uint64(info.RangeGeneration), 10))
	c.w.Header()["etag"] = []string{etag}
	if c.r.Header.Get("If-None-Match") == etag {
		c.reply(http.StatusNotModified, nil)
		return nil
	}
	ranges := make([]map[string]any, len(info.Partitions))
	for i, p := range info.Partitions {
		id := strconv.FormatUint(uint64(p.ID), 10)
		parents := make([]string, len(p.Parents))
		for j, q := range p.Parents {
			parents[j] = strconv.FormatUint(uint64(q), 10)
		}
		ranges[i] = map[string]any{
			"id": id, "_rid": info.RID, "_self": info.Self + "pkranges/" + id + "/", "_etag": etag, "_ts": info.TS,
			"minInclusive": p.Range.Min.Hex(), "maxExclusive": p.Range.Max.Hex(),
			"ridPrefix": p.ID, "throughputFraction": 1 / float64(len(info.Partitions)),
			"status": "online", "parents": parents, "lsn": p.LSN,
		}
	}
	c.w.Header()["x-ms-content-path"] = []string{info.RID}
	return c.replyJSON(http.StatusOK, map[string]any{"_rid": info.RID, "PartitionKeyRanges": ranges, "_count": len(ranges)})
}
