package faultinject

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTestSet() (*Set, *clock) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return NewSet(c.now), c
}

func must(t *testing.T, s *Set, spec Spec) Rule {
	t.Helper()
	r, err := s.Add(spec)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func req(db, coll string, op Op) *Request {
	return &Request{Database: db, Container: coll, Op: op, RangeID: -1, Scope: epk.All, HasScope: true}
}

func TestSpecValidation(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want string // part of the error; empty: valid
	}{
		{Spec{Status: 429}, ""},
		{Spec{Status: 410, Substatus: 1007}, ""},
		{Spec{LatencyMs: 10}, ""},
		{Spec{Status: 503, LatencyMs: 10, Rate: 0.5, Count: 3, TTLMs: 1000}, ""},
		{Spec{}, "give a status"},
		{Spec{Status: 500}, "status 500 cannot be injected"},
		{Spec{Status: 410, Substatus: 1003}, "must be 1002, 1007 or 1008"},
		{Spec{Status: 429, Substatus: 1002}, "a 429's substatus is 3200"},
		{Spec{Status: 503, Substatus: 1}, "only 410 and 429 take a substatus"},
		{Spec{Status: 503, RetryAfterMs: 5}, "only a 429 takes a retry-after"},
		{Spec{Status: 429, RetryAfterMs: -1}, "retryAfterMs must be"},
		{Spec{Status: 429, RetryAfterMs: 61000}, "retryAfterMs must be"},
		{Spec{LatencyMs: 61000}, "latencyMs must be"},
		{Spec{Status: 429, Rate: 1.5}, "rate must be"},
		{Spec{Status: 429, Rate: -0.1}, "rate must be"},
		{Spec{Status: 429, Count: -1}, "count must not be negative"},
		{Spec{Status: 429, TTLMs: -1}, "ttlMs must not be negative"},
		{Spec{Status: 429, Container: "c"}, "a container needs its database"},
		{Spec{Status: 429, Operations: []Op{"reed"}}, `unknown operation "reed"`},
		{Spec{Status: 429, PKRangeID: "x"}, "partitionKeyRangeId must be a range id"},
		{Spec{Status: 429, MinEPK: "zz"}, "minEpk is not a hex EPK"},
		{Spec{Status: 429, MinEPK: "20", MaxEPK: "10"}, "must be below maxEpk"},
	} {
		s, _ := newTestSet()
		_, err := s.Add(tc.spec)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.spec, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, fault.BadRequest)):
			t.Errorf("%+v: got %v, want a bad request with %q", tc.spec, err, tc.want)
		case tc.want != "" && s.Armed():
			t.Errorf("%+v: refused but armed", tc.spec)
		}
	}
}

func TestDefaults(t *testing.T) {
	s, _ := newTestSet()
	r := must(t, s, Spec{Status: 429})
	if r.Substatus != 3200 || r.RetryAfterMs != 100 || r.Action != "429" || r.Remaining != nil {
		t.Errorf("429 defaults: %+v", r)
	}
	r = must(t, s, Spec{Status: 410})
	if r.Substatus != 1002 || r.Action != "410/1002" {
		t.Errorf("410 defaults: %+v", r)
	}
	if r := must(t, s, Spec{LatencyMs: 5}); r.Action != "latency" {
		t.Errorf("latency action: %q", r.Action)
	}
}

func TestMatchSelectors(t *testing.T) {
	s, _ := newTestSet()
	if s.Armed() {
		t.Fatal("an empty set is armed")
	}
	if _, hit := s.Match(req("db", "c", OpRead)); hit {
		t.Fatal("an empty set hits")
	}
	must(t, s, Spec{Database: "db", Container: "c", Operations: []Op{OpQuery, OpRead}, Status: 503})
	for _, tc := range []struct {
		r   *Request
		hit bool
	}{
		{req("db", "c", OpRead), true},
		{req("db", "c", OpQuery), true},
		{req("db", "c", OpCreate), false},
		{req("db", "other", OpRead), false},
		{req("db2", "c", OpRead), false},
	} {
		h, hit := s.Match(tc.r)
		if hit != tc.hit || hit && (h.Status != 503 || h.Rule != "1") {
			t.Errorf("%+v: hit %v %+v, want %v", tc.r, hit, h, tc.hit)
		}
	}
}

func TestMatchRanges(t *testing.T) {
	// Two ranges: 0 is [, 20), 1 is [20, FF). Range 2 was split away.
	ranges := map[uint32]epk.Range{0: {Min: epk.Min, Max: "\x20"}, 1: {Min: "\x20", Max: epk.Max}}
	lookup := func(id uint32) (epk.Range, bool) { r, ok := ranges[id]; return r, ok }
	at := func(e epk.EPK) *Request {
		return &Request{Database: "db", Container: "c", Op: OpRead, RangeID: -1, Scope: epk.Range{Min: e, Max: e}, HasScope: true, Ranges: lookup}
	}
	named := func(id int64, hasScope bool) *Request {
		q := &Request{Database: "db", Container: "c", Op: OpQuery, RangeID: id, Ranges: lookup, HasScope: hasScope}
		if r, ok := ranges[uint32(id)]; ok {
			q.Scope = r
		}
		return q
	}
	s, _ := newTestSet()
	must(t, s, Spec{PKRangeID: "0", Status: 410})
	for _, tc := range []struct {
		name string
		r    *Request
		hit  bool
	}{
		{"key in range 0", at("\x10"), true},
		{"key in range 1", at("\x30"), false},
		{"names range 0", named(0, true), true},
		{"names range 1", named(1, true), false},
		{"whole container", &Request{Op: OpQuery, RangeID: -1, Scope: epk.All, HasScope: true, Ranges: lookup}, true},
		{"unreadable scope", &Request{Op: OpQuery, RangeID: -1, Ranges: lookup}, false},
	} {
		if _, hit := s.Match(tc.r); hit != tc.hit {
			t.Errorf("%s: hit %v, want %v", tc.name, hit, tc.hit)
		}
	}
	// A rule on a range that is gone still hits requests naming it (their scope is unknown).
	s.Clear()
	must(t, s, Spec{PKRangeID: "2", Status: 410})
	if _, hit := s.Match(named(2, false)); !hit {
		t.Error("a request naming a gone range is not hit")
	}
	if _, hit := s.Match(at("\x10")); hit {
		t.Error("a key elsewhere is hit by a rule on a gone range")
	}
	// EPK bounds.
	s.Clear()
	must(t, s, Spec{MinEPK: "10", MaxEPK: "20", Status: 449})
	for e, want := range map[epk.EPK]bool{"\x05": false, "\x10": true, "\x1f\xff": true, "\x20": false} {
		if _, hit := s.Match(at(e)); hit != want {
			t.Errorf("EPK %s: hit %v, want %v", e.Hex(), hit, want)
		}
	}
}

// TestCountExactlyN: a rule for the next N requests hits exactly N of many concurrent ones,
// then is listed with nothing remaining and N hits.
func TestCountExactlyN(t *testing.T) {
	s, _ := newTestSet()
	must(t, s, Spec{Status: 429, Count: 7})
	var wg sync.WaitGroup
	var mu sync.Mutex
	hits := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if _, hit := s.Match(req("db", "c", OpRead)); hit {
					mu.Lock()
					hits++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if hits != 7 {
		t.Fatalf("%d hits, want 7", hits)
	}
	l := s.List()
	if len(l) != 1 || l[0].Hits != 7 || l[0].Remaining == nil || *l[0].Remaining != 0 {
		t.Fatalf("listing %+v", l)
	}
}

func TestRate(t *testing.T) {
	s, _ := newTestSet()
	draws := []float64{0.1, 0.5, 0.19, 0.2, 0.9}
	s.draw = func() float64 { d := draws[0]; draws = draws[1:]; return d }
	must(t, s, Spec{Status: 503, Rate: 0.2})
	var got []bool
	for range 5 {
		_, hit := s.Match(req("db", "c", OpRead))
		got = append(got, hit)
	}
	if want := []bool{true, false, true, false, false}; !slices.Equal(got, want) {
		t.Fatalf("hits %v, want %v", got, want)
	}
}

// TestExpiry: a rule stops at its TTL, leaves the listing, and the set disarms once no rule
// is left.
func TestExpiry(t *testing.T) {
	s, c := newTestSet()
	r := must(t, s, Spec{Status: 408, TTLMs: 1000})
	if !r.ExpiresAt.Equal(c.t.Add(time.Second)) {
		t.Fatalf("expires at %v", r.ExpiresAt)
	}
	c.t = c.t.Add(999 * time.Millisecond)
	if _, hit := s.Match(req("db", "c", OpRead)); !hit {
		t.Fatal("not hit before expiry")
	}
	c.t = c.t.Add(time.Millisecond)
	if _, hit := s.Match(req("db", "c", OpRead)); hit {
		t.Fatal("hit at expiry")
	}
	if s.Armed() || len(s.List()) != 0 {
		t.Fatal("an expired rule is still armed or listed")
	}
	if _, err := s.Get(r.ID); !errors.Is(err, fault.NotFound) {
		t.Fatalf("get of an expired rule: %v", err)
	}
}

// TestRemoveAndTotals: rules are removable one by one or all at once, and the totals that
// metrics show keep counting what removed rules did.
func TestRemoveAndTotals(t *testing.T) {
	s, _ := newTestSet()
	a := must(t, s, Spec{Operations: []Op{OpRead}, Status: 429})
	b := must(t, s, Spec{Operations: []Op{OpCreate}, Status: 410, Substatus: 1008})
	s.Match(req("db", "c", OpRead))
	s.Match(req("db", "c", OpRead))
	s.Match(req("db", "c", OpCreate))
	if err := s.Remove(a.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(a.ID); !errors.Is(err, fault.NotFound) {
		t.Fatalf("second remove: %v", err)
	}
	if _, hit := s.Match(req("db", "c", OpRead)); hit {
		t.Fatal("a removed rule hit")
	}
	if got, err := s.Get(b.ID); err != nil || got.Hits != 1 {
		t.Fatalf("get %+v %v", got, err)
	}
	if n := s.Clear(); n != 1 || s.Armed() {
		t.Fatalf("clear removed %d, armed %v", n, s.Armed())
	}
	want := []Total{{"1", "429", 2}, {"2", "410/1008", 1}}
	got := s.Totals()
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("totals %+v, want %+v", got, want)
	}
}
