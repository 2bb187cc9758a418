package partition

import (
	"sort"
	"sync"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/storage"
)

// LogicalStat describes one logical partition of a physical partition.
type LogicalStat struct {
	EPK   epk.EPK
	Items int64
	Bytes int64
	RU    float64 // request units charged to it in the last minute or so
}

// maxHotTracked bounds how many logical partitions the hot-partition tracker remembers.
const maxHotTracked = 10000

// hotTracker counts request units per logical partition over the current and the previous
// minute, so that the hottest logical partitions of the last one to two minutes can be named.
type hotTracker struct {
	mu        sync.Mutex
	minute    int64
	cur, prev map[epk.EPK]float64
}

func (h *hotTracker) add(now time.Time, e epk.EPK, charge float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rotate(now)
	if h.cur == nil {
		h.cur = map[epk.EPK]float64{}
	}
	if _, ok := h.cur[e]; !ok && len(h.cur) >= maxHotTracked {
		return // a flood of distinct keys: none of them is hot
	}
	h.cur[e] += charge
}

func (h *hotTracker) rotate(now time.Time) {
	m := now.Unix() / 60
	switch {
	case m == h.minute:
	case m == h.minute+1:
		h.prev, h.cur, h.minute = h.cur, nil, m
	default:
		h.prev, h.cur, h.minute = nil, nil, m
	}
}

// RecordLogical charges request units to the logical partition e, for the hottest list.
func (p *Partition) RecordLogical(e epk.EPK, charge float64) { p.hot.add(time.Now(), e, charge) }

// Hottest returns up to n logical partitions by request units charged recently.
func (p *Partition) Hottest(n int) []LogicalStat {
	p.hot.mu.Lock()
	p.hot.rotate(time.Now())
	sum := map[epk.EPK]float64{}
	for e, ru := range p.hot.prev {
		sum[e] += ru
	}
	for e, ru := range p.hot.cur {
		sum[e] += ru
	}
	p.hot.mu.Unlock()
	out := make([]LogicalStat, 0, len(sum))
	for e, ru := range sum {
		out = append(out, LogicalStat{EPK: e, RU: ru})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RU > out[j].RU || out[i].RU == out[j].RU && out[i].EPK < out[j].EPK })
	return out[:min(n, len(out))]
}

// Largest returns up to n logical partitions of this partition by bytes stored.
func (p *Partition) Largest(n int) ([]LogicalStat, error) {
	var out []LogicalStat
	err := eachLogical(p.db, p.container, p.rng, func(ls LogicalStat) {
		out = append(out, ls)
		// Keep the list short: sort and cut whenever it doubles.
		if len(out) > 2*n {
			sortBySize(out)
			out = out[:n]
		}
	})
	sortBySize(out)
	return out[:min(n, len(out))], err
}

// eachLogical calls fn with the statistics record of every logical partition of container
// whose EPK lies in r, in EPK order (their RU is zero).
func eachLogical(db *storage.DB, container uint32, r epk.Range, fn func(LogicalStat)) error {
	lo, hi := storage.LogicalSpan(container, string(r.Min), string(r.Max))
	it, err := db.NewIter(lo, hi)
	if err != nil {
		return err
	}
	defer it.Close()
	// NextPrefix: every write to a logical partition rewrites its record (see storage.Iter).
	for it.First(); it.Valid(); it.NextPrefix() {
		e, err := storage.ParseLogicalKey(it.Key())
		if err != nil {
			return err
		}
		c, _, err := decodeCounts(it.Value())
		if err != nil {
			return err
		}
		fn(LogicalStat{EPK: epk.EPK(e), Items: c.Items, Bytes: c.Bytes})
	}
	return it.Error()
}

func sortBySize(ls []LogicalStat) {
	sort.Slice(ls, func(i, j int) bool {
		return ls[i].Bytes > ls[j].Bytes || ls[i].Bytes == ls[j].Bytes && ls[i].EPK < ls[j].EPK
	})
}
