package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// checkpoint is what a resumed import needs: how far into the input every item has been
// dealt with (imported, found already there, or failed and reported), and the tallies of
// that prefix, so that the final summary covers every run.
type checkpoint struct {
	Version  int    `json:"version"`
	Source   string `json:"source"`
	Format   string `json:"format"` // formatLines or formatArray
	Mode     string `json:"mode"`
	Database string `json:"database"`
	Coll     string `json:"container"`
	// Offset is the input offset just past the last item of the prefix: every item before it
	// is done and none after it is counted. Line is the input's line at Offset, and Items
	// how many items come before it.
	Offset int64 `json:"offset"`
	Line   int   `json:"line"`
	Items  int64 `json:"items"`
	tally
}

// tally counts outcomes.
type tally struct {
	Imported int64 `json:"imported"`
	// Present counts create-mode items found already stored with the same body (an earlier,
	// interrupted run wrote them).
	Present int64               `json:"present"`
	Failed  map[string]int64    `json:"failed"`  // by reason
	Samples map[string][]string `json:"samples"` // the first few failures of each reason
	RU      float64             `json:"ru"`
	// Throttled counts the 429s retried (operations of bulk requests, and whole requests).
	Throttled int64 `json:"throttled"`
}

// clone is a deep copy.
func (t tally) clone() tally {
	c := t
	c.Failed, c.Samples = map[string]int64{}, map[string][]string{}
	for k, v := range t.Failed {
		c.Failed[k] = v
		c.Samples[k] = append([]string(nil), t.Samples[k]...)
	}
	return c
}

// maxSamples is how many failures of each reason are kept to show.
const maxSamples = 5

func (t *tally) fail(reason, sample string) {
	if t.Failed == nil {
		t.Failed, t.Samples = map[string]int64{}, map[string][]string{}
	}
	t.Failed[reason]++
	if len(t.Samples[reason]) < maxSamples {
		t.Samples[reason] = append(t.Samples[reason], sample)
	}
}

func (t *tally) failed() int64 {
	n := int64(0)
	for _, c := range t.Failed {
		n += c
	}
	return n
}

func sortedKeys(m map[string]int64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// readCheckpoint reads the checkpoint at path; a missing file is no checkpoint.
func readCheckpoint(path string) (*checkpoint, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c checkpoint
	if err := json.Unmarshal(b, &c); err != nil || c.Version != 1 {
		return nil, fmt.Errorf("checkpoint %s is not one partita import wrote; remove it or pass --restart", path)
	}
	return &c, nil
}

// write replaces the checkpoint at path atomically: a crash leaves the old one or the new
// one, never a torn file.
func (c *checkpoint) write(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// outcome is what became of one item.
type outcome struct {
	imported, present bool
	reason, sample    string // a failure
	ru                float64
}

// tracker follows the items in flight and advances the checkpoint over the longest prefix of
// the input whose items are all done, however out of order they finish.
type tracker struct {
	mu      sync.Mutex
	cp      checkpoint      // the done prefix
	pending map[int64]*slot // items read and not yet in the prefix, by seq
	all     tally           // every outcome of this run, the prefix's or not
	dirty   bool            // cp changed since it was last written
}

type slot struct {
	line int // where the item ends
	end  int64
	done bool
	out  outcome
}

func newTracker(cp checkpoint) *tracker {
	return &tracker{cp: cp, pending: map[int64]*slot{}}
}

// read registers a record as read and in flight.
func (t *tracker) read(r record) {
	t.mu.Lock()
	t.pending[r.seq] = &slot{line: r.endLine, end: r.end}
	t.mu.Unlock()
}

// finish records what became of the item seq.
func (t *tracker) finish(seq int64, o outcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.pending[seq]
	s.done, s.out = true, o
	t.all.count(o)
	for {
		s := t.pending[t.cp.Items]
		if s == nil || !s.done {
			return
		}
		delete(t.pending, t.cp.Items)
		t.cp.count(s.out)
		t.cp.Items++
		t.cp.Offset, t.cp.Line = s.end, s.line
		t.dirty = true
	}
}

// spent adds request units spent on no item in particular (conflict reads) and 429s retried.
func (t *tracker) spent(ru float64, throttled int64) {
	t.mu.Lock()
	t.all.RU += ru
	t.cp.RU += ru
	t.all.Throttled += throttled
	t.cp.Throttled += throttled
	t.dirty = true
	t.mu.Unlock()
}

func (t *tally) count(o outcome) {
	t.RU += o.ru
	switch {
	case o.imported:
		t.Imported++
	case o.present:
		t.Present++
	default:
		t.fail(o.reason, o.sample)
	}
}

// snapshot returns the checkpoint and whether it changed since the last snapshot.
func (t *tracker) snapshot() (checkpoint, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.dirty
	t.dirty = false
	cp := t.cp
	cp.tally = cp.tally.clone()
	return cp, d
}

// done is the input offset up to which every item is done.
func (t *tracker) done() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cp.Offset
}

// totals is this run's tally.
func (t *tracker) totals() tally {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.all.clone()
}

// describe lists failures by reason, with their samples.
func describeFailures(t tally) string {
	var b strings.Builder
	for _, r := range sortedKeys(t.Failed) {
		fmt.Fprintf(&b, "  %s: %d\n", r, t.Failed[r])
		for _, s := range t.Samples[r] {
			fmt.Fprintf(&b, "    %s\n", s)
		}
	}
	return b.String()
}
