package faultinject

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
)

// Request is what the gateway tells a Set about a request.
type Request struct {
	Database, Container string
	Op                  Op
	// RangeID is the partition key range the request names (x-ms-documentdb-partitionkeyrangeid),
	// -1 for none.
	RangeID int64
	// Scope is the EPK range the request reaches (its partition key's, its range's, or the
	// whole container's); valid only with HasScope (false when the headers could not be read,
	// or the range it names is gone).
	Scope    epk.Range
	HasScope bool
	// Ranges, when set, finds the current EPK range of a partition key range id; a rule on a
	// range id needs it to match requests that do not name the range.
	Ranges func(id uint32) (epk.Range, bool)
}

func (q *Request) rangeOf(id uint32) (epk.Range, bool) {
	if q.Ranges == nil {
		return epk.Range{}, false
	}
	return q.Ranges(id)
}

// reaches reports whether the request's scope overlaps r.
func (q *Request) reaches(r epk.Range) bool {
	if !q.HasScope {
		return false
	}
	// A point's scope may be the empty [e, e): it reaches r when r holds e.
	if q.Scope.Min == q.Scope.Max {
		return r.Contains(q.Scope.Min)
	}
	return q.Scope.Min < r.Max && r.Min < q.Scope.Max
}

// Hit is what a rule does to the request it fired on.
type Hit struct {
	Rule       string
	Action     string        // as Rule.Action
	Status     int           // 0: latency only, then serve the request
	Substatus  int           // 0 for none
	RetryAfter time.Duration // for a 429
	Latency    time.Duration // to wait before answering or serving
}

// Set is a server's fault-injection rules. It is safe for concurrent use.
type Set struct {
	// rules is the live list, replaced whole on every change; nil when there is none, so
	// that Armed is one atomic load.
	rules atomic.Pointer[[]*rule]
	mu    sync.Mutex // serializes changes to rules, and guards next and totals
	next  uint64
	// totals counts the hits of every rule by its id and action, removed rules included: a
	// Prometheus counter must never go down.
	totals map[[2]string]uint64
	now    func() time.Time
	// draw returns a number in [0, 1) for rate rules; tests replace it.
	draw func() float64
}

// NewSet makes an empty Set on the given clock (nil: time.Now).
func NewSet(now func() time.Time) *Set {
	if now == nil {
		now = time.Now
	}
	return &Set{now: now, totals: map[[2]string]uint64{}, draw: rand.Float64}
}

// Armed reports whether any rule exists. The gateway asks it on every request and does the
// rest only when it is true.
func (s *Set) Armed() bool { return s.rules.Load() != nil }

// Add validates spec and adds its rule, returning it as listed.
func (s *Set) Add(spec Spec) (Rule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	live := s.live(now)
	if len(live) >= MaxRules {
		return Rule{}, fault.New(fault.BadRequest, "There are already %d fault rules, the most a server holds; remove some", MaxRules)
	}
	r, err := compile(spec, strconv.FormatUint(s.next+1, 10), now)
	if err != nil {
		return Rule{}, err
	}
	s.next++
	s.store(append(live, r))
	return r.listing(), nil
}

// List returns the rules that have not expired, oldest first.
func (s *Set) List() []Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	live := s.live(s.now())
	s.store(live)
	out := make([]Rule, len(live))
	for i, r := range live {
		out[i] = r.listing()
	}
	return out
}

// Get returns one rule.
func (s *Set) Get(id string) (Rule, error) {
	for _, r := range s.List() {
		if r.ID == id {
			return r, nil
		}
	}
	return Rule{}, notFound(id)
}

// Remove removes one rule.
func (s *Set) Remove(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	live := s.live(s.now())
	i := slices.IndexFunc(live, func(r *rule) bool { return r.id == id })
	if i < 0 {
		return notFound(id)
	}
	s.store(slices.Delete(live, i, i+1))
	return nil
}

// Clear removes every rule, returning how many there were.
func (s *Set) Clear() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.live(s.now()))
	s.store(nil)
	return n
}

func notFound(id string) error {
	return fault.New(fault.NotFound, "There is no fault rule %q (it may have expired)", id)
}

// live is a copy of the rules that have not expired. Callers hold s.mu.
func (s *Set) live(now time.Time) []*rule {
	var out []*rule
	if cur := s.rules.Load(); cur != nil {
		for _, r := range *cur {
			if r.expires.IsZero() || now.Before(r.expires) {
				out = append(out, r)
			}
		}
	}
	return out
}

// store publishes rules; none publishes nil. Callers hold s.mu.
func (s *Set) store(rules []*rule) {
	if len(rules) == 0 {
		s.rules.Store(nil)
		return
	}
	s.rules.Store(&rules)
}

// Match decides whether a rule fires on req: the first rule, oldest first, that matches it,
// has not expired, wins its draw (rate) and still has hits left (count). It returns false when
// none does; the request is then served as it is.
func (s *Set) Match(req *Request) (Hit, bool) {
	cur := s.rules.Load()
	if cur == nil {
		return Hit{}, false
	}
	now := s.now()
	expired := false
	for _, r := range *cur {
		if !r.expires.IsZero() && !now.Before(r.expires) {
			expired = true
			continue
		}
		if !r.matches(req) || r.spec.Rate > 0 && s.draw() >= r.spec.Rate || !r.take() {
			continue
		}
		r.hits.Add(1)
		s.mu.Lock()
		s.totals[[2]string{r.id, r.action}]++
		if expired {
			s.store(s.live(now))
		}
		s.mu.Unlock()
		return Hit{Rule: r.id, Action: r.action, Status: r.spec.Status, Substatus: r.spec.Substatus,
			RetryAfter: time.Duration(r.spec.RetryAfterMs) * time.Millisecond,
			Latency:    time.Duration(r.spec.LatencyMs) * time.Millisecond}, true
	}
	if expired { // drop them, so that Armed turns false again once every rule is gone
		s.mu.Lock()
		s.store(s.live(now))
		s.mu.Unlock()
	}
	return Hit{}, false
}

// take takes one of a Count rule's remaining hits; other rules always have one.
func (r *rule) take() bool {
	if r.spec.Count == 0 {
		return true
	}
	for {
		n := r.remaining.Load()
		if n <= 0 {
			return false
		}
		if r.remaining.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// Total is how many requests one rule hit with one action.
type Total struct {
	Rule, Action string
	Hits         uint64
}

// Totals lists the hits of every rule there has been, for metrics.
func (s *Set) Totals() []Total {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Total, 0, len(s.totals))
	for k, n := range s.totals {
		out = append(out, Total{Rule: k[0], Action: k[1], Hits: n})
	}
	slices.SortFunc(out, func(a, b Total) int {
		if len(a.Rule) != len(b.Rule) {
			return len(a.Rule) - len(b.Rule)
		}
		return cmp.Compare(a.Rule, b.Rule) // ids are numbers: shorter ones are smaller
	})
	return out
}
