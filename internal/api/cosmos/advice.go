package cosmos

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/partita-db/partita/internal/advisor"
	"github.com/partita-db/partita/internal/fault"
)

// Bounds of GET /dbs/{db}/colls/{c}/advice: how many items it samples (it reads up to
// adviceScanFactor times as many to draw them from, never fewer than adviceMinScan).
const (
	adviceDefaultSample = 2000
	adviceMaxSample     = 10000
	adviceScanFactor    = 10
	adviceMinScan       = 20000
	adviceHottest       = 256 // hottest logical partitions asked of each physical partition
)

// advice answers Partita's partition key advice for a container (not a Cosmos resource):
// internal/advisor's judgement of a sample of its items, the request units recently charged
// to its logical partitions and the query texts it recently ran. Query parameters, all
// optional: sample (items, 1..10000), partitions (P of the predicted spreads, 1..1024),
// writeRate (RU/s of writes the suffixes are sized for; default the container's throughput),
// growth (how many times its size the container will reach, at least 1).
func (c *call) advice() error {
	q := c.r.URL.Query()
	sample, err := intParam(q.Get("sample"), "sample", adviceDefaultSample, 1, adviceMaxSample)
	if err != nil {
		return err
	}
	spreadP, err := intParam(q.Get("partitions"), "partitions", 0, 1, advisor.MaxSpread)
	if err != nil {
		return err
	}
	writeRate, err := floatParam(q.Get("writeRate"), "writeRate", 0, 1e9)
	if err != nil {
		return err
	}
	growth, err := floatParam(q.Get("growth"), "growth", 1, 1e6)
	if err != nil {
		return err
	}
	db, id := c.res.segs[1], c.res.segs[3]
	ct, err := c.container()
	if err != nil {
		return err
	}
	items, err := ct.Sample(sample, max(adviceMinScan, adviceScanFactor*sample))
	if err != nil {
		return err
	}
	ms, err := c.h.engine.ContainerMetrics(db, id, adviceHottest)
	if err != nil {
		return err
	}
	var rates []advisor.LogicalRate
	var throughput float64
	for _, m := range ms {
		throughput += m.PerSecond
		for _, l := range m.Hottest {
			rates = append(rates, advisor.LogicalRate{EPK: l.EPK, RU: l.RU})
		}
	}
	var queries []advisor.QueryCount
	for _, rq := range ct.RecentQueries() {
		queries = append(queries, advisor.QueryCount{Text: rq.Text, Count: rq.Count})
	}
	rateNote := ""
	if writeRate == 0 {
		writeRate, rateNote = throughput, fmt.Sprintf("suffixes are sized for the container's whole throughput, %.0f RU/s, as its write rate (pass writeRate to size them for another)", throughput)
	}
	def, usage := ct.Def(), ct.Usage()
	adv := advisor.Advise(advisor.Input{
		Database: db, Container: id, Items: items,
		Current:    advisor.KeyDef{Paths: def.Paths, Kind: def.Kind, Version: def.Version},
		Partitions: len(ms), SpreadPartitions: spreadP, TotalItems: usage.Items, TotalBytes: usage.Bytes,
		Growth: growth, Rates: rates, Queries: queries, WriteRate: writeRate,
	})
	if rateNote != "" && len(adv.Synthetic) > 0 {
		adv.Notes = append(adv.Notes, rateNote)
	}
	return c.replyJSON(http.StatusOK, adv)
}

// intParam reads an optional integer query parameter within [lo, hi]; def when absent.
func intParam(s, name string, def, lo, hi int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fault.New(fault.BadRequest, "The query parameter %s must be an integer from %d to %d, not %q", name, lo, hi, s)
	}
	return n, nil
}

// floatParam reads an optional number query parameter within [lo, hi]; lo when absent.
func floatParam(s, name string, lo, hi float64) (float64, error) {
	if s == "" {
		return lo, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f >= lo && f <= hi) {
		return 0, fault.New(fault.BadRequest, "The query parameter %s must be a number from %g to %g, not %q", name, lo, hi, s)
	}
	return f, nil
}
