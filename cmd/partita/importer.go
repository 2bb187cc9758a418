package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partita-db/partita/internal/client"
	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// Bulk requests are filled up to MaxBulkOperations items or this many bytes of items, so
// that a request stays well under the server's 2 MB body limit.
const maxBatchBytes = 1 << 20

// flushAfter is how long a partly filled batch may wait for more items (a slow stdin).
const flushAfter = 500 * time.Millisecond

// importer sends the items of one import: the reader's records go to a batch per partition
// key range; full batches go to the workers, which send them as bulk requests and retry what
// the server throttled or sent elsewhere.
type importer struct {
	c     *client.Client
	ct    *client.Container
	o     importOptions
	track *tracker

	rangesMu sync.Mutex
	ranges   []client.Range

	// lastProgress is when an item was last written (UnixNano): throttled items are retried
	// for as long as something gets through.
	lastProgress atomic.Int64
}

// op is one item on its way.
type op struct {
	seq  int64
	line int
	id   string
	key  string // the partition key, a JSON array
	epk  epk.EPK
	body []byte
}

type batch struct {
	rangeID string
	ops     []op
	bytes   int
	since   time.Time
}

func newImporter(c *client.Client, ct *client.Container, o importOptions, t *tracker) *importer {
	imp := &importer{c: c, ct: ct, o: o, track: t}
	imp.lastProgress.Store(time.Now().UnixNano())
	return imp
}

// run reads rd to its end (or ctx's), calling tick as it goes, and returns once every item
// sent has its outcome. Its error is the reader's.
func (imp *importer) run(ctx context.Context, rd *itemReader, tick func()) error {
	if err := imp.refreshRanges(ctx); err != nil {
		return err
	}
	records := make(chan record, 256)
	var readErr error
	go func() {
		defer close(records)
		for ctx.Err() == nil {
			r, err := rd.Next()
			if err != nil {
				if err != io.EOF {
					readErr = err
				}
				return
			}
			select {
			case records <- r:
			case <-ctx.Done():
				return
			}
		}
	}()

	jobs := make(chan batch)
	var wg sync.WaitGroup
	for range imp.o.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range jobs {
				imp.send(ctx, b.ops)
			}
		}()
	}
	open := map[string]*batch{}
	dispatch := func(b *batch) bool {
		delete(open, b.rangeID)
		select {
		case jobs <- *b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	ticker := time.NewTicker(flushAfter / 2)
	defer ticker.Stop()
loop:
	for {
		select {
		case r, ok := <-records:
			if !ok {
				break loop
			}
			imp.track.read(r)
			o, err := imp.parse(r)
			if err != nil {
				imp.track.finish(r.seq, failure(r.line, err))
				continue
			}
			rg := imp.rangeOf(o.epk)
			b := open[rg]
			if b == nil {
				b = &batch{rangeID: rg, since: time.Now()}
				open[rg] = b
			}
			if len(b.ops) > 0 && b.bytes+len(o.body) > maxBatchBytes {
				if !dispatch(b) {
					break loop
				}
				b = &batch{rangeID: rg, since: time.Now()}
				open[rg] = b
			}
			b.ops = append(b.ops, o)
			b.bytes += len(o.body)
			if len(b.ops) == client.MaxBulkOperations {
				if !dispatch(b) {
					break loop
				}
				tick()
			}
		case <-ticker.C:
			for _, b := range open {
				if time.Since(b.since) >= flushAfter && !dispatch(b) {
					break loop
				}
			}
			tick()
		case <-ctx.Done():
			break loop
		}
	}
	for _, b := range open {
		if ctx.Err() != nil || !dispatch(b) {
			break
		}
	}
	close(jobs)
	wg.Wait()
	tick()
	return readErr
}

// parse checks a record as the server would check the item and finds where it goes.
func (imp *importer) parse(r record) (op, error) {
	if len(r.body) > document.MaxItemBytes {
		return op{}, fault.New(fault.TooLarge, "the item is %d bytes; the limit is %d", len(r.body), document.MaxItemBytes)
	}
	id, key, e, err := imp.ct.ItemKey(r.body)
	if err != nil {
		return op{}, err
	}
	return op{seq: r.seq, line: r.line, id: id, key: key, epk: e, body: r.body}, nil
}

// failure is the outcome of an item refused before it was sent.
func failure(line int, err error) outcome {
	f := fault.From(err)
	reason := "invalid item"
	switch {
	case f.Kind == fault.TooLarge:
		reason = "too large"
	case strings.HasPrefix(f.Message, "The request body is not valid JSON"):
		reason = "invalid JSON"
	case strings.Contains(f.Message, "'id'") || strings.Contains(f.Message, "The id"):
		reason = "bad id"
	case strings.Contains(f.Message, "partition key"):
		reason = "bad partition key"
	}
	return outcome{reason: reason, sample: fmt.Sprintf("line %d: %s", line, f.Message)}
}

func (imp *importer) refreshRanges(ctx context.Context) error {
	rs, err := imp.c.Ranges(ctx, imp.ct)
	if err != nil {
		return fmt.Errorf("reading the partition key ranges: %w", err)
	}
	imp.rangesMu.Lock()
	imp.ranges = rs
	imp.rangesMu.Unlock()
	return nil
}

// rangeOf is the id of the range e belongs to, as far as the importer knows.
func (imp *importer) rangeOf(e epk.EPK) string {
	imp.rangesMu.Lock()
	defer imp.rangesMu.Unlock()
	if r := client.RangeOf(imp.ranges, e); r != nil {
		return r.ID
	}
	return ""
}

// send writes ops (of one range) until each has an outcome, or ctx ends: then the ops left
// have none, and the checkpoint stays before them.
func (imp *importer) send(ctx context.Context, ops []op) {
	failures := 0 // consecutive failed requests
	for len(ops) > 0 && ctx.Err() == nil {
		rg := imp.rangeOf(ops[0].epk)
		// After a split the ops of one batch may now belong to several ranges: send those of
		// the first op's range, and the rest after.
		now, later := ops[:0:0], ops[:0:0]
		for _, o := range ops {
			if imp.rangeOf(o.epk) == rg {
				now = append(now, o)
			} else {
				later = append(later, o)
			}
		}
		retry, wait, err := imp.sendOnce(ctx, rg, now)
		if err != nil {
			failures++
			status := client.StatusOf(err)
			switch {
			case ctx.Err() != nil:
				return
			case status == http.StatusTooManyRequests:
				wait = retryAfter(err)
				retry = now
				imp.track.spent(0, 1)
			case status == http.StatusGone && failures < 10:
				// The range split (or moved): route again by the ranges as they are now. A
				// server that keeps answering 410 is not making progress: after ten in a row
				// the items fail with its message.
				imp.refreshRanges(ctx)
				wait = time.Duration(failures) * 50 * time.Millisecond
				retry = now
			case (status == 0 || status >= 500) && failures < 5:
				// The connection failed or the server did: try again, after a while.
				wait = time.Duration(failures) * 500 * time.Millisecond
				retry = now
			default:
				for _, o := range now {
					imp.track.finish(o.seq, outcome{reason: reasonOf(err), sample: fmt.Sprintf("line %d: %v", o.line, err)})
				}
			}
		} else {
			failures = 0
		}
		if imp.o.afterBatch != nil {
			imp.o.afterBatch()
		}
		if len(retry) > 0 && time.Since(time.Unix(0, imp.lastProgress.Load())) > imp.o.giveUpAfter {
			for _, o := range retry {
				imp.track.finish(o.seq, outcome{reason: "throttled", sample: fmt.Sprintf("line %d: still throttled after no item was written for %s", o.line, imp.o.giveUpAfter)})
			}
			retry = nil
		}
		ops = append(retry, later...)
		if len(retry) > 0 && wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

func retryAfter(err error) time.Duration {
	if e, ok := err.(*client.Error); ok && e.RetryAfter > 0 {
		return e.RetryAfter
	}
	return 100 * time.Millisecond
}

// reasonOf names a failure by its status, as the summary groups them: "409 Conflict".
func reasonOf(err error) string {
	if e, ok := err.(*client.Error); ok {
		return fmt.Sprintf("%d %s", e.Status, e.Code)
	}
	return "request failed"
}

// sendOnce sends ops as one bulk request to range rg and records the outcome of each op that
// has one; it returns the ops to send again and how long to wait first.
func (imp *importer) sendOnce(ctx context.Context, rg string, ops []op) (retry []op, wait time.Duration, err error) {
	kind := "Upsert"
	if imp.o.mode == "create" {
		kind = "Create"
	}
	bulk := make([]client.BulkOp, len(ops))
	for i, o := range ops {
		bulk[i] = client.BulkOp{OperationType: kind, ID: o.id, PartitionKey: o.key, ResourceBody: o.body}
	}
	results, resp, err := imp.c.Bulk(ctx, imp.ct.Link, rg, bulk)
	if err != nil {
		return nil, 0, err
	}
	if resp.Throttled > 0 {
		imp.track.spent(0, int64(resp.Throttled))
	}
	gone := false
	for i, r := range results {
		o := ops[i]
		switch {
		case r.StatusCode >= 200 && r.StatusCode < 300:
			imp.lastProgress.Store(time.Now().UnixNano())
			imp.track.finish(o.seq, outcome{imported: true, ru: r.RequestCharge})
		case r.StatusCode == http.StatusTooManyRequests:
			imp.track.spent(r.RequestCharge, 1)
			retry = append(retry, o)
			wait = max(wait, r.RetryAfter())
		case r.StatusCode == http.StatusGone:
			imp.track.spent(r.RequestCharge, 0)
			retry = append(retry, o)
			gone = true
		case r.StatusCode == http.StatusConflict && imp.o.mode == "create":
			imp.track.finish(o.seq, imp.conflict(ctx, o, r))
		default:
			reason := fmt.Sprintf("%d %s", r.StatusCode, http.StatusText(r.StatusCode))
			imp.track.finish(o.seq, outcome{reason: reason, ru: r.RequestCharge, sample: fmt.Sprintf("line %d: %s", o.line, r.Message)})
		}
	}
	if len(retry) > 0 && wait == 0 {
		wait = 50 * time.Millisecond
	}
	if gone {
		if err := imp.refreshRanges(ctx); err != nil {
			return retry, time.Second, nil
		}
	}
	return retry, wait, nil
}

// conflict decides a create-mode 409: the item is already there. When the stored item is
// the input's item (an interrupted run wrote it), it is done; otherwise it is a conflict.
func (imp *importer) conflict(ctx context.Context, o op, r client.BulkResult) outcome {
	h := http.Header{}
	h.Set("x-ms-documentdb-partitionkey", o.key)
	link := imp.ct.Link + "/docs/" + o.id
	resp, err := imp.c.Do(ctx, client.Request{Method: http.MethodGet, Type: "docs", Link: link, Header: h})
	conflict := outcome{reason: "409 Conflict", ru: r.RequestCharge,
		sample: fmt.Sprintf("line %d: an item with id %q and this partition key already exists with a different body", o.line, o.id)}
	if err != nil {
		conflict.sample = fmt.Sprintf("line %d: %s (reading the stored item: %v)", o.line, r.Message, err)
		return conflict
	}
	imp.track.spent(resp.Charge, int64(resp.Throttled))
	stored, err1 := value.Parse(resp.Body)
	mine, err2 := value.Parse(o.body)
	if err1 != nil || err2 != nil || !value.Equal(withoutSystem(stored), withoutSystem(mine)) {
		return conflict
	}
	return outcome{present: true, ru: r.RequestCharge}
}

// withoutSystem is an item without the properties the server writes.
func withoutSystem(v value.Value) value.Value {
	if v.Kind() != value.Object {
		return v
	}
	kept := make([]value.Member, 0, len(v.Members()))
	for _, m := range v.Members() {
		if !document.IsSystemProperty(m.Key) {
			kept = append(kept, m)
		}
	}
	return value.Obj(kept)
}

// saveCheckpoints writes the checkpoint to path every interval while it changes, until the
// returned function is called. Nothing is written for an import without a checkpoint file.
func (imp *importer) saveCheckpoints(path string, interval time.Duration) (stop func()) {
	if path == "" {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if cp, changed := imp.track.snapshot(); changed {
					cp.write(path)
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
