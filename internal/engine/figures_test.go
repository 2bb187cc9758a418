package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/ru"
)

// A partition's figures are its leader's sizes and its replicas' request units added; an
// older node's figures, which say nothing of that, are left out.
func TestMergeFigures(t *testing.T) {
	hot, cold := epk.EPK("\x10"), epk.EPK("\x20")
	fs := []nodecall.ReplicaFigure{
		{Group: 1, Bytes: 900, RU: 5, Full: true, Items: 9, LSN: 40, Total: 100, Throttled: 2,
			Seconds: []ru.SecondSpent{{Second: 99, RU: 30}}, Trend: []nodecall.TrendFigure{{Start: 95, PeakRU: 30, Normalized: 0.3}},
			Hottest: []nodecall.LogicalFigure{{EPK: hot.Hex(), RU: 20}}},
		{Group: 1, Bytes: 1000, RU: 7, Full: true, Leading: true, Items: 10, LSN: 41, Total: 50, Throttled: 1,
			Seconds: []ru.SecondSpent{{Second: 99, RU: 40}, {Second: 98, RU: 10}}, Trend: []nodecall.TrendFigure{{Start: 95, PeakRU: 40, Normalized: 0.4}},
			Hottest: []nodecall.LogicalFigure{{EPK: cold.Hex(), RU: 25}, {EPK: hot.Hex(), RU: 10, Key: json.RawMessage(`"tenant-42"`)}}},
		{Group: 1, Bytes: 1100, RU: 9, Full: true, Items: 11, LSN: 39}, // behind, not leading
		{Group: 2, Bytes: 5, RU: 1},                                    // an older node's
	}
	m := mergeFigures(fs)
	if len(m) != 1 || m[2] != nil {
		t.Fatalf("partitions %v", m)
	}
	pf := m[1]
	if pf.PartitionStats != (PartitionStats{LSN: 41, Items: 10, Bytes: 1000}) || pf.total != 150 || pf.throttled != 3 {
		t.Fatalf("figures %+v", pf)
	}
	if s := ru.StatsOf(100, pf.seconds, 100); s.LastSecond != 70 || s.LastMinute != 80 || s.NormalizedUse != 0.7 {
		t.Fatalf("budget figures %+v", s)
	}
	if len(pf.trend) != 1 || pf.trend[0].PeakRU != 70 || pf.trend[0].Normalized != 0.7 || pf.trend[0].Start.Unix() != 95 {
		t.Fatalf("trend %+v", pf.trend)
	}
	// The key value comes from the replica that read it (a node of an earlier release sends
	// none).
	if len(pf.hottest) != 2 || pf.hottest[0].EPK != hot || pf.hottest[0].RU != 30 || string(pf.hottest[0].Key) != `"tenant-42"` || pf.hottest[1].EPK != cold {
		t.Fatalf("hottest %+v", pf.hottest)
	}
	// Without a leader among them, the replica furthest along.
	m = mergeFigures(append([]nodecall.ReplicaFigure(nil), fs[0], fs[2]))
	if m[1].LSN != 40 {
		t.Fatalf("without a leader: %+v", m[1].PartitionStats)
	}
	// The placement's weights are those of before.
	lf := newLoadFigures(time.Time{}, fs)
	if lf.bytes[1] != 1100 || lf.ru[1] != 21 || lf.bytes[2] != 5 {
		t.Fatalf("load figures %v %v", lf.bytes, lf.ru)
	}
}
