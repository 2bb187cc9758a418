package server

import (
	"log/slog"
	"strconv"

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

// nodeCollector exposes a cluster node's replication counters; nothing on a node alone.
type nodeCollector struct{ engine *engine.Engine }

var (
	descNodeInfo  = prometheus.NewDesc("partita_node_info", "This node of the cluster: its node and store ids (hex), always 1.", []string{"node", "store"}, nil)
	descReplicas  = prometheus.NewDesc("partita_node_replicas", "Replicas of physical partitions this node holds.", nil, nil)
	descLeaders   = prometheus.NewDesc("partita_node_leaders", "Replicas of this node that lead their partition's group.", nil, nil)
	descLearners  = prometheus.NewDesc("partita_node_learners", "Replicas of this node still catching up (not voting yet).", nil, nil)
	descSnapshots = prometheus.NewDesc("partita_replication_snapshots_total", "Snapshots of partitions this node sent or installed.", []string{"direction"}, nil)
	descForwarded = prometheus.NewDesc("partita_forwarded_requests_total", "Writes and splits this node sent to another node's leader (sent), or ran for another node (served).", []string{"direction"}, nil)
	descReads     = prometheus.NewDesc("partita_replica_reads_total", "Clients' reads this node's replicas served, as their group's leader or as a follower.", []string{"replica"}, nil)
)

func (c nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descNodeInfo, descReplicas, descLeaders, descLearners, descSnapshots, descForwarded, descReads} {
		ch <- d
	}
}

func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.engine.NodeMetrics()
	if m.Node == 0 {
		return
	}
	ch <- prometheus.MustNewConstMetric(descNodeInfo, prometheus.GaugeValue, 1, strconv.FormatUint(m.Node, 16), strconv.FormatUint(m.Store, 16))
	ch <- prometheus.MustNewConstMetric(descReplicas, prometheus.GaugeValue, float64(m.Replicas))
	ch <- prometheus.MustNewConstMetric(descLeaders, prometheus.GaugeValue, float64(m.Leading))
	ch <- prometheus.MustNewConstMetric(descLearners, prometheus.GaugeValue, float64(m.Learners))
	ch <- prometheus.MustNewConstMetric(descSnapshots, prometheus.CounterValue, float64(m.SnapshotsSent), "sent")
	ch <- prometheus.MustNewConstMetric(descSnapshots, prometheus.CounterValue, float64(m.SnapshotsInstalled), "installed")
	ch <- prometheus.MustNewConstMetric(descForwarded, prometheus.CounterValue, float64(m.Forwarded), "sent")
	ch <- prometheus.MustNewConstMetric(descForwarded, prometheus.CounterValue, float64(m.Served), "served")
	ch <- prometheus.MustNewConstMetric(descReads, prometheus.CounterValue, float64(m.ReadsLeading), "leader")
	ch <- prometheus.MustNewConstMetric(descReads, prometheus.CounterValue, float64(m.ReadsFollowing), "follower")
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
