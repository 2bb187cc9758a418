package main

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is what a workload run needs to know.
type Config struct {
	Concurrency int
	Duration    time.Duration
	ItemSize    int
	Keys        int
	Items       int
	RunID       string
	// Rate, when above zero, paces the run at this many operations per second in all (an open
	// loop): each operation has a scheduled start, and its latency counts from that start, so
	// a server that falls behind is charged for the queue it causes.
	Rate float64
}

// worker is the per-goroutine state of a run.
type worker struct {
	cfg  *Config
	c    Client
	rng  *rand.Rand
	zipf *rand.Zipf
	id   int
	seq  int
	rec  Recorder
}

// op runs one operation. It returns the RU charged and, when it wants only part of
// its time measured (replace excludes its read), that duration; 0 means the whole call.
type op func(ctx context.Context, w *worker) (charge float64, d time.Duration, err error)

var workloads = map[string]op{
	"read":        opRead(uniform),
	"create":      opCreate,
	"upsert":      opUpsert(uniform),
	"replace":     opReplace,
	"patch":       opPatch,
	"query-pk":    opQueryPK,
	"query-range": opQueryRange,
	"query-top":   opQuery("SELECT TOP 10 c.id, c.n FROM c ORDER BY c.n DESC"),
	"count":       opQuery("SELECT VALUE COUNT(1) FROM c"),
	"ycsb-a":      opMix(0.50),
	"ycsb-b":      opMix(0.95),
	"ycsb-c":      opRead(zipfian),
	"ycsb-f":      opRMW,
	"load":        nil, // runLoad
}

var workloadOrder = []string{"load", "read", "create", "upsert", "replace", "patch", "query-pk", "query-range",
	"query-top", "count", "ycsb-a", "ycsb-b", "ycsb-c", "ycsb-f"}

// needsItems tells whether a workload reads the preloaded items.
func needsItems(name string) bool { return name != "create" && name != "load" }

// Preloaded item i has id item-i, partition key pk-(i mod keys) and n = i.
func itemID(i int) string              { return fmt.Sprintf("item-%d", i) }
func itemPK(cfg *Config, i int) string { return fmt.Sprintf("pk-%d", i%cfg.Keys) }

// itemBody renders {"id","pk","n","pad"} padded to about cfg.ItemSize bytes.
func itemBody(cfg *Config, id, pk string, n int, rng *rand.Rand) []byte {
	b, _ := json.Marshal(map[string]any{"id": id, "pk": pk, "n": n, "pad": ""})
	padLen := max(cfg.ItemSize-len(b), 0)
	pad := make([]byte, padLen)
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	for i := range pad {
		pad[i] = letters[rng.IntN(len(letters))]
	}
	b, _ = json.Marshal(map[string]any{"id": id, "pk": pk, "n": n, "pad": string(pad)})
	return b
}

type chooser func(w *worker) int

func uniform(w *worker) int { return w.rng.IntN(w.cfg.Items) }

// zipfian picks a preloaded item with a zipfian skew, scrambled (as YCSB does) so that the
// hot items are spread over the key space rather than being items 0, 1, 2...
func zipfian(w *worker) int {
	h := fnv.New64a()
	var b [8]byte
	z := w.zipf.Uint64()
	for i := range b {
		b[i] = byte(z >> (8 * i))
	}
	h.Write(b[:])
	return int(h.Sum64() % uint64(w.cfg.Items))
}

func opRead(pick chooser) op {
	return func(ctx context.Context, w *worker) (float64, time.Duration, error) {
		i := pick(w)
		r, err := w.c.Read(ctx, itemPK(w.cfg, i), itemID(i))
		return r.Charge, 0, err
	}
}

func opCreate(ctx context.Context, w *worker) (float64, time.Duration, error) {
	w.seq++
	pk := fmt.Sprintf("pk-%d", w.rng.IntN(w.cfg.Keys))
	id := fmt.Sprintf("c-%s-%d-%d", w.cfg.RunID, w.id, w.seq)
	r, err := w.c.Create(ctx, pk, itemBody(w.cfg, id, pk, w.rng.IntN(w.cfg.Items), w.rng))
	return r.Charge, 0, err
}

func update(ctx context.Context, w *worker, i int) (float64, error) {
	pk := itemPK(w.cfg, i)
	r, err := w.c.Upsert(ctx, pk, itemBody(w.cfg, itemID(i), pk, i, w.rng))
	return r.Charge, err
}

func opUpsert(pick chooser) op {
	return func(ctx context.Context, w *worker) (float64, time.Duration, error) {
		ru, err := update(ctx, w, pick(w))
		return ru, 0, err
	}
}

// readModifyWrite reads item i and replaces it if its etag still matches.
func readModifyWrite(ctx context.Context, w *worker, i int) (float64, time.Duration, error) {
	pk, id := itemPK(w.cfg, i), itemID(i)
	r, err := w.c.Read(ctx, pk, id)
	if err != nil {
		return r.Charge, 0, err
	}
	start := time.Now()
	r2, err := w.c.Replace(ctx, pk, id, itemBody(w.cfg, id, pk, i, w.rng), r.ETag)
	return r.Charge + r2.Charge, time.Since(start), err
}

// opReplace measures only the replace; its read (for the etag) is not timed.
func opReplace(ctx context.Context, w *worker) (float64, time.Duration, error) {
	return readModifyWrite(ctx, w, uniform(w))
}

// opPatch increments the number of a preloaded item, chosen uniformly.
func opPatch(ctx context.Context, w *worker) (float64, time.Duration, error) {
	i := uniform(w)
	r, err := w.c.Incr(ctx, itemPK(w.cfg, i), itemID(i))
	return r.Charge, 0, err
}

// opRMW (YCSB F) measures the read and the write together.
func opRMW(ctx context.Context, w *worker) (float64, time.Duration, error) {
	ru, _, err := readModifyWrite(ctx, w, zipfian(w))
	return ru, 0, err
}

func opMix(readFrac float64) op {
	return func(ctx context.Context, w *worker) (float64, time.Duration, error) {
		i := zipfian(w)
		if w.rng.Float64() < readFrac {
			r, err := w.c.Read(ctx, itemPK(w.cfg, i), itemID(i))
			return r.Charge, 0, err
		}
		ru, err := update(ctx, w, i)
		return ru, 0, err
	}
}

func opQueryPK(ctx context.Context, w *worker) (float64, time.Duration, error) {
	pk := fmt.Sprintf("pk-%d", w.rng.IntN(w.cfg.Keys))
	r, err := w.c.Query(ctx, pk, "SELECT * FROM c WHERE c.pk = @pk", map[string]any{"@pk": pk})
	return r.Charge, 0, err
}

func opQueryRange(ctx context.Context, w *worker) (float64, time.Duration, error) {
	lo := w.rng.IntN(max(w.cfg.Items-10, 1))
	r, err := w.c.Query(ctx, "", "SELECT c.id FROM c WHERE c.n >= @lo AND c.n < @hi",
		map[string]any{"@lo": lo, "@hi": lo + 10})
	return r.Charge, 0, err
}

func opQuery(q string) op {
	return func(ctx context.Context, w *worker) (float64, time.Duration, error) {
		r, err := w.c.Query(ctx, "", q, nil)
		return r.Charge, 0, err
	}
}

// opTimeout bounds one operation; runs end by deadline, not by cancelling operations.
const opTimeout = 30 * time.Second

func newWorker(cfg *Config, c Client, id int) *worker {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(id)))
	return &worker{cfg: cfg, c: c, id: id, rng: rng,
		zipf: rand.NewZipf(rng, 1.01, 1, uint64(max(cfg.Items-1, 1)))}
}

// runWorkers runs body on cfg.Concurrency workers until each returns, then merges their
// recordings.
func runWorkers(cfg *Config, c Client, body func(w *worker)) (*Recorder, time.Duration) {
	workers := make([]*worker, cfg.Concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range workers {
		w := newWorker(cfg, c, i)
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(w)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	total := &Recorder{}
	for _, w := range workers {
		total.Merge(&w.rec)
	}
	return total, elapsed
}

// run drives workload name for cfg.Duration with cfg.Concurrency workers.
func run(name string, cfg *Config, c Client) (*Recorder, time.Duration) {
	if name == "load" {
		return runLoad(cfg, c, 0, cfg.Items, true)
	}
	f := workloads[name]
	start := time.Now()
	end := start.Add(cfg.Duration)
	var next atomic.Int64 // the next scheduled operation, when paced
	return runWorkers(cfg, c, func(w *worker) {
		for {
			t0 := time.Now()
			paced := cfg.Rate > 0
			if paced {
				t0 = start.Add(time.Duration(float64(next.Add(1)-1) / cfg.Rate * float64(time.Second)))
				time.Sleep(time.Until(t0))
			}
			if !t0.Before(end) {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
			ru, d, err := f(ctx, w)
			if d == 0 || paced {
				d = time.Since(t0)
			}
			cancel()
			w.rec.Add(d, ru, err)
		}
	})
}

// runLoad upserts items [from, to), showing progress on stderr when asked.
func runLoad(cfg *Config, c Client, from, to int, progress bool) (*Recorder, time.Duration) {
	var next, done atomic.Int64
	next.Store(int64(from))
	start := time.Now()
	stop := make(chan struct{})
	var pw sync.WaitGroup
	if progress {
		pw.Add(1)
		go func() {
			defer pw.Done()
			t := time.NewTicker(250 * time.Millisecond)
			defer t.Stop()
			n := to - from
			line := func() {
				d := done.Load()
				fmt.Fprintf(os.Stderr, "\rload: %d/%d items (%.0f%%), %.0f items/s ", d, n,
					100*float64(d)/float64(max(n, 1)), float64(d)/time.Since(start).Seconds())
			}
			for {
				select {
				case <-stop:
					line()
					fmt.Fprintln(os.Stderr)
					return
				case <-t.C:
					line()
				}
			}
		}()
	}
	total, elapsed := runWorkers(cfg, c, func(w *worker) {
		for {
			i := int(next.Add(1) - 1)
			if i >= to {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
			t0 := time.Now()
			ru, err := update(ctx, w, i)
			cancel()
			w.rec.Add(time.Since(t0), ru, err)
			done.Add(1)
		}
	})
	close(stop)
	pw.Wait()
	return total, elapsed
}

// preload makes sure items item-0 .. item-(Items-1) exist: if the first and last both
// read back, it assumes the rest do; otherwise it loads them all (upserts, so reruns are safe).
func preload(cfg *Config, c Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	_, err1 := c.Read(ctx, itemPK(cfg, 0), itemID(0))
	_, err2 := c.Read(ctx, itemPK(cfg, cfg.Items-1), itemID(cfg.Items-1))
	if err1 == nil && err2 == nil {
		return nil
	}
	fmt.Fprintf(os.Stderr, "preloading %d items of %d bytes over %d keys\n", cfg.Items, cfg.ItemSize, cfg.Keys)
	rec, _ := runLoad(cfg, c, 0, cfg.Items, true)
	if rec.Errors > 0 {
		return fmt.Errorf("preload: %d errors, first: %v", rec.Errors, rec.FirstErr)
	}
	return nil
}

func parseWorkloads(s string) ([]string, error) {
	var out []string
	for _, w := range strings.Split(s, ",") {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		if w == "all" {
			out = append(out, workloadOrder...)
			continue
		}
		if _, ok := workloads[w]; !ok {
			return nil, fmt.Errorf("unknown workload %q (known: %s, all)", w, strings.Join(workloadOrder, ", "))
		}
		out = append(out, w)
	}
	return out, nil
}
