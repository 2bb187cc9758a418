package faultinject

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
)

// Op is an operation a rule may match, as the gateway classifies requests.
type Op string

// The operations. Query plan requests (the JavaScript SDK's, before a query) are their own
// operation, so that a rule on queries hits the pages of a query and not its plan.
const (
	OpRead       Op = "read"       // GET an item
	OpCreate     Op = "create"     // POST an item
	OpUpsert     Op = "upsert"     // POST an item with x-ms-documentdb-is-upsert
	OpReplace    Op = "replace"    // PUT an item
	OpDelete     Op = "delete"     // DELETE an item
	OpPatch      Op = "patch"      // PATCH an item
	OpQuery      Op = "query"      // POST a query to docs
	OpQueryPlan  Op = "queryplan"  // POST a query plan request to docs
	OpReadFeed   Op = "readfeed"   // GET docs
	OpChangeFeed Op = "changefeed" // GET docs with A-IM
	OpBatch      Op = "batch"      // POST a transactional batch or a bulk request
	OpSproc      Op = "sproc"      // POST to run a stored procedure
	OpPKRanges   Op = "pkranges"   // GET the partition key ranges
	OpContainer  Op = "container"  // GET the container
)

// Ops are the operations a rule may name, in the order documentation lists them.
var Ops = []Op{OpRead, OpCreate, OpUpsert, OpReplace, OpDelete, OpPatch, OpQuery, OpQueryPlan,
	OpReadFeed, OpChangeFeed, OpBatch, OpSproc, OpPKRanges, OpContainer}

// Statuses a rule may answer with, and the substatuses of 410 that SDKs act on: 1002 the
// partition key range is gone (split), 1007 it is splitting, 1008 it is migrating. 0 adds
// latency only.
var (
	Statuses      = []int{429, 410, 449, 503, 408}
	GoneSubstatus = []int{1002, 1007, 1008}
)

// Limits on what a rule may ask for.
const (
	MaxWait  = time.Minute // a retry-after or a latency
	MaxRules = 1000        // rules held at once
	// DefaultRetryAfter is a 429's retry-after when the rule gives none.
	DefaultRetryAfter = 100 * time.Millisecond
	// substatusRateTooLarge is the substatus Cosmos sends with a 429 for spent throughput.
	substatusRateTooLarge = 3200
)

// Spec is a rule as a client asks for it (the body of POST /_partita/faults).
type Spec struct {
	// Database and Container select the container; empty matches any (Container needs
	// Database).
	Database  string `json:"database,omitempty"`
	Container string `json:"container,omitempty"`
	// Operations the rule matches; empty matches every operation above.
	Operations []Op `json:"operations,omitempty"`
	// PKRangeID, when set, limits the rule to requests on that partition key range: that
	// name it (x-ms-documentdb-partitionkeyrangeid) or whose partition key, EPK bounds or
	// whole-container scope reach into its range. It keeps matching requests that name it
	// after it was split, so that a 410 can be injected for a range that is gone.
	PKRangeID string `json:"partitionKeyRangeId,omitempty"`
	// MinEPK and MaxEPK (hex, [min, max)), when either is set, limit the rule to requests
	// whose scope reaches into that EPK range.
	MinEPK string `json:"minEpk,omitempty"`
	MaxEPK string `json:"maxEpk,omitempty"`
	// Status is the answer: 429, 410, 449, 503 or 408; 0 only adds latency.
	Status int `json:"status,omitempty"`
	// Substatus: for 410, 1002 (default), 1007 or 1008; for 429 it is always 3200.
	Substatus int `json:"substatus,omitempty"`
	// RetryAfterMs is a 429's x-ms-retry-after-ms (default 100).
	RetryAfterMs int64 `json:"retryAfterMs,omitempty"`
	// LatencyMs delays the request; without a Status it is then served normally.
	LatencyMs int64 `json:"latencyMs,omitempty"`
	// Rate is the probability that a matching request is hit (0: always).
	Rate float64 `json:"rate,omitempty"`
	// Count, when above 0, makes the rule hit only the next Count matching requests.
	Count int64 `json:"count,omitempty"`
	// TTLMs, when above 0, makes the rule expire that long after it is created.
	TTLMs int64 `json:"ttlMs,omitempty"`
}

// Rule is a rule as it is listed.
type Rule struct {
	ID string `json:"id"`
	Spec
	// Action is what the rule does, as metrics label it: "429", "410/1002", "449", "503",
	// "408", "latency".
	Action    string    `json:"action"`
	Created   time.Time `json:"created"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	// Remaining is how many more requests a Count rule will hit; absent for other rules.
	Remaining *int64 `json:"remaining,omitempty"`
	Hits      int64  `json:"hits"`
}

// rule is a validated rule with its counters.
type rule struct {
	id      string
	spec    Spec
	action  string
	created time.Time
	expires time.Time // zero: never
	ops     []Op      // empty: any
	rangeID int64     // -1: any
	epks    *epk.Range
	// remaining counts down the hits of a Count rule; it only decreases, and a request is
	// hit only by taking one from it, so a Count rule hits exactly Count requests.
	remaining atomic.Int64
	hits      atomic.Int64
}

// compile validates s and makes its rule.
func compile(s Spec, id string, now time.Time) (*rule, error) {
	bad := func(format string, args ...any) error {
		return fault.New(fault.BadRequest, "The fault rule is not valid: "+format, args...)
	}
	r := &rule{id: id, spec: s, created: now, rangeID: -1}
	if s.Container != "" && s.Database == "" {
		return nil, bad("a container needs its database")
	}
	for _, op := range s.Operations {
		if !slices.Contains(Ops, op) {
			return nil, bad("unknown operation %q; the operations are %s", op, opList())
		}
	}
	r.ops = s.Operations
	if s.PKRangeID != "" {
		n, err := strconv.ParseUint(s.PKRangeID, 10, 32)
		if err != nil {
			return nil, bad("partitionKeyRangeId must be a range id such as \"0\", not %q", s.PKRangeID)
		}
		r.rangeID = int64(n)
	}
	if s.MinEPK != "" || s.MaxEPK != "" {
		rg := epk.All
		var err error
		if s.MinEPK != "" {
			if rg.Min, err = epk.ParseHex(s.MinEPK); err != nil {
				return nil, bad("minEpk is not a hex EPK: %q", s.MinEPK)
			}
		}
		if s.MaxEPK != "" {
			if rg.Max, err = epk.ParseHex(s.MaxEPK); err != nil {
				return nil, bad("maxEpk is not a hex EPK: %q", s.MaxEPK)
			}
		}
		if !rg.Valid() {
			return nil, bad("minEpk %q must be below maxEpk %q", s.MinEPK, s.MaxEPK)
		}
		r.epks = &rg
	}
	switch {
	case s.Status == 0 && s.LatencyMs == 0:
		return nil, bad("give a status (%s) or a latency", statusList())
	case s.Status != 0 && !slices.Contains(Statuses, s.Status):
		return nil, bad("status %d cannot be injected; the statuses are %s", s.Status, statusList())
	case s.Status == 410 && s.Substatus == 0:
		r.spec.Substatus = 1002
	case s.Status == 410:
		if !slices.Contains(GoneSubstatus, s.Substatus) {
			return nil, bad("a 410's substatus must be 1002, 1007 or 1008, not %d", s.Substatus)
		}
	case s.Status == 429:
		if s.Substatus != 0 && s.Substatus != substatusRateTooLarge {
			return nil, bad("a 429's substatus is %d, not %d", substatusRateTooLarge, s.Substatus)
		}
		r.spec.Substatus = substatusRateTooLarge
	case s.Substatus != 0:
		return nil, bad("only 410 and 429 take a substatus")
	}
	switch {
	case s.RetryAfterMs != 0 && s.Status != 429:
		return nil, bad("only a 429 takes a retry-after")
	case s.RetryAfterMs < 0 || s.RetryAfterMs > MaxWait.Milliseconds():
		return nil, bad("retryAfterMs must be from 0 to %d", MaxWait.Milliseconds())
	case s.Status == 429 && s.RetryAfterMs == 0:
		r.spec.RetryAfterMs = DefaultRetryAfter.Milliseconds()
	}
	if s.LatencyMs < 0 || s.LatencyMs > MaxWait.Milliseconds() {
		return nil, bad("latencyMs must be from 0 to %d", MaxWait.Milliseconds())
	}
	if !(s.Rate >= 0 && s.Rate <= 1) { // also refuses NaN
		return nil, bad("rate must be a probability from 0 (meaning always) to 1, not %v", s.Rate)
	}
	if s.Count < 0 {
		return nil, bad("count must not be negative")
	}
	r.remaining.Store(s.Count)
	if s.TTLMs < 0 {
		return nil, bad("ttlMs must not be negative")
	}
	if s.TTLMs > 0 {
		r.expires = now.Add(time.Duration(s.TTLMs) * time.Millisecond)
	}
	r.action = "latency"
	if s.Status != 0 {
		r.action = strconv.Itoa(s.Status)
		if s.Status == 410 {
			r.action += "/" + strconv.Itoa(r.spec.Substatus)
		}
	}
	return r, nil
}

func opList() string {
	names := make([]string, len(Ops))
	for i, op := range Ops {
		names[i] = string(op)
	}
	return strings.Join(names, ", ")
}

func statusList() string {
	var b []string
	for _, s := range Statuses {
		b = append(b, strconv.Itoa(s))
	}
	return strings.Join(b, ", ")
}

// matches reports whether req is one the rule selects (whether it fires is decided apart).
func (r *rule) matches(req *Request) bool {
	s := &r.spec
	if s.Database != "" && s.Database != req.Database || s.Container != "" && s.Container != req.Container {
		return false
	}
	if len(r.ops) > 0 && !slices.Contains(r.ops, req.Op) {
		return false
	}
	if r.rangeID >= 0 && req.RangeID != r.rangeID {
		rg, ok := req.rangeOf(uint32(r.rangeID))
		if !ok || !req.reaches(rg) {
			return false
		}
	}
	return r.epks == nil || req.reaches(*r.epks)
}

// listing is the rule as Rule shows it.
func (r *rule) listing() Rule {
	out := Rule{ID: r.id, Spec: r.spec, Action: r.action, Created: r.created, ExpiresAt: r.expires, Hits: r.hits.Load()}
	if r.spec.Count > 0 {
		n := r.remaining.Load()
		out.Remaining = &n
	}
	return out
}
