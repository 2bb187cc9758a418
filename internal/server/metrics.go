package server

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/faultinject"
)

// collector exposes the engine's partition metrics to Prometheus, read at scrape time.
type collector struct {
	engine *engine.Engine
	log    *slog.Logger
}

var (
	labels      = []string{"database", "container", "partition"}
	descItems   = prometheus.NewDesc("partita_partition_items", "Items stored in the physical partition.", labels, nil)
	descBytes   = prometheus.NewDesc("partita_partition_bytes", "Bytes of items stored in the physical partition.", labels, nil)
	descLSN     = prometheus.NewDesc("partita_partition_lsn", "Sequence number of the partition's last committed write.", labels, nil)
	descBudget  = prometheus.NewDesc("partita_partition_ru_per_second", "The partition's share of the provisioned throughput, in RU/s.", labels, nil)
	descLast    = prometheus.NewDesc("partita_partition_ru_last_second", "Request units spent in the last complete second.", labels, nil)
	descNorm    = prometheus.NewDesc("partita_partition_normalized_ru_consumption", "Highest share of the budget spent in any second of the last minute (1 = throttling).", labels, nil)
	descRU      = prometheus.NewDesc("partita_partition_ru_total", "Request units charged to the partition.", labels, nil)
	descThrottl = prometheus.NewDesc("partita_partition_throttled_total", "Requests refused with 429 because the partition's budget was spent.", labels, nil)
)

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descItems, descBytes, descLSN, descBudget, descLast, descNorm, descRU, descThrottl} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	ms, err := c.engine.Metrics(0)
	if err != nil {
		c.log.Error("collecting partition metrics", "err", err)
		return
	}
	for _, m := range ms {
		l := []string{m.Database, m.Container, itoa(m.ID)}
		ch <- prometheus.MustNewConstMetric(descItems, prometheus.GaugeValue, float64(m.Items), l...)
		ch <- prometheus.MustNewConstMetric(descBytes, prometheus.GaugeValue, float64(m.Bytes), l...)
		ch <- prometheus.MustNewConstMetric(descLSN, prometheus.GaugeValue, float64(m.LSN), l...)
		ch <- prometheus.MustNewConstMetric(descBudget, prometheus.GaugeValue, m.PerSecond, l...)
		ch <- prometheus.MustNewConstMetric(descLast, prometheus.GaugeValue, m.LastSecond, l...)
		ch <- prometheus.MustNewConstMetric(descNorm, prometheus.GaugeValue, m.NormalizedUse, l...)
		ch <- prometheus.MustNewConstMetric(descRU, prometheus.CounterValue, m.Total, l...)
		ch <- prometheus.MustNewConstMetric(descThrottl, prometheus.CounterValue, float64(m.Throttled), l...)
	}
}

func itoa(n uint32) string {
	const digits = "0123456789"
	if n == 0 {
		return "0"
	}
	var b [10]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = digits[n%10]
	}
	return string(b[i:])
}

// faultCollector exposes how many answers each fault-injection rule injected, by action
// ("429", "410/1002", "latency", ...), removed rules included.
type faultCollector struct{ set *faultinject.Set }

var descInjected = prometheus.NewDesc("partita_faults_injected_total",
	"Requests a fault-injection rule answered with an injected error or delayed.", []string{"rule", "action"}, nil)

func (c faultCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descInjected }

func (c faultCollector) Collect(ch chan<- prometheus.Metric) {
	for _, t := range c.set.Totals() {
		ch <- prometheus.MustNewConstMetric(descInjected, prometheus.CounterValue, float64(t.Hits), t.Rule, t.Action)
	}
}
