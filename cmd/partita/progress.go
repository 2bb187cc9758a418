package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress shows how far an import or export has got: a bar with rate and ETA on a
// terminal, a plain line every few seconds otherwise (logs, CI). It is safe for concurrent
// use.
type progress struct {
	mu      sync.Mutex
	verb    string // "importing", "exporting"
	bar     *progressbar.ProgressBar
	w       io.Writer
	total   int64 // bytes of input (import) or items (export); -1 when unknown
	bytes   bool  // the amounts are bytes, else items
	started time.Time
	every   time.Duration
	last    time.Time
	cur     int64
	items   int64
	detail  string
}

// newProgress reports to w, with a bar when tty; total is -1 when unknown.
func newProgress(w io.Writer, tty bool, verb string, total int64, bytes bool, every time.Duration) *progress {
	p := &progress{verb: verb, w: w, total: total, bytes: bytes, started: time.Now(), every: every}
	p.last = p.started
	if tty {
		opts := []progressbar.Option{
			progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(verb),
			progressbar.OptionSetWidth(30), progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100 * time.Millisecond), progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
		}
		if bytes {
			opts = append(opts, progressbar.OptionShowBytes(true))
		} else {
			opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("items"))
		}
		p.bar = progressbar.NewOptions64(total, opts...)
	}
	return p
}

// update says where things are: cur of total, items dealt with, and a detail (failures,
// throttling) to show alongside.
func (p *progress) update(cur, items int64, detail string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur, p.items, p.detail = cur, items, detail
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("%s: %s items%s", p.verb, humanCount(items), detail))
		p.bar.Set64(cur)
		return
	}
	if now := time.Now(); now.Sub(p.last) >= p.every {
		p.last = now
		p.line(now)
	}
}

// line writes the plain progress line.
func (p *progress) line(now time.Time) {
	secs := now.Sub(p.started).Seconds()
	rate := float64(p.items) / max(secs, 1e-3)
	s := fmt.Sprintf("%s: %s items, %.0f items/s", p.verb, humanCount(p.items), rate)
	if p.total > 0 {
		frac := float64(p.cur) / float64(p.total)
		s += fmt.Sprintf(", %.1f%%", 100*frac)
		if frac > 0 && frac < 1 {
			eta := time.Duration(secs * (1 - frac) / frac * float64(time.Second))
			s += ", ETA " + elapsed(eta.Round(time.Second))
		}
	}
	fmt.Fprintf(p.w, "%s, %s elapsed%s\n", s, elapsed(now.Sub(p.started)), p.detail)
}

// done ends the display.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		if p.total > 0 {
			p.bar.Set64(p.total)
		}
		p.bar.Finish()
	}
}
