package distribution

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replication"
)

// The defaults of an Asker's times.
const (
	// DefaultTimeout bounds how long a request looks for a node that takes it: a write for
	// its partition's leaseholder, a read for a holder that answers.
	DefaultTimeout = 10 * time.Second
	// DefaultCallTimeout bounds one call's wait for its answer: a node cut off from this one
	// (a network partition) would otherwise hold the request until the client gives up.
	DefaultCallTimeout = 5 * time.Second
	// DefaultBackoff is the pause before a round of holders is asked again.
	DefaultBackoff = 20 * time.Millisecond
)

// ErrNotSent is what a Call wraps when the request could not be sent at all (no connection
// to the node): it may be sent again, to that node later or to another, where after any
// other failure a write's outcome is unknown.
var ErrNotSent = errors.New("distribution: the request was not sent")

// ErrNoHolder is the failure of a request that no node holding its range took in time.
var ErrNoHolder = fault.New(fault.Unavailable, "No node that holds the partition answered in time; retry the request")

// Clock is the time an Asker waits by.
type Clock interface {
	Now() time.Time
	Sleep(d time.Duration)
}

// realClock is the time of the machine.
type realClock struct{}

func (realClock) Now() time.Time        { return time.Now() }
func (realClock) Sleep(d time.Duration) { time.Sleep(d) }

// Asker sends a node's requests to other nodes. Its fields are set before its first use and
// not changed after.
type Asker struct {
	// Self is this node, never asked.
	Self replication.NodeID
	// Call sends req to node and returns its answer (the cluster's Call): an error wrapping
	// ErrNotSent says that req never left, one wrapping nodecall.ErrCodec that it or its
	// answer did not encode or decode; after any other, req's outcome is unknown.
	Call func(ctx context.Context, node replication.NodeID, req *nodecall.Request) (nodecall.Answer, error)
	// Timeout, CallTimeout and Backoff: zero means the default of each.
	Timeout, CallTimeout, Backoff time.Duration
	// Clock is the time waited by; nil: the machine's.
	Clock Clock

	sent atomic.Uint64 // requests sent
}

// Sent is how many requests the Asker sent.
func (a *Asker) Sent() uint64 { return a.sent.Load() }

// Send sends req to node once, counted, within ctx.
func (a *Asker) Send(ctx context.Context, node replication.NodeID, req *nodecall.Request) (nodecall.Answer, error) {
	a.sent.Add(1)
	return a.Call(ctx, node, req)
}

// Ask sends req to a node holders lists, in turn, and returns the first answer of one that
// holds req's range: until one answers or Timeout passes (no call begins after it, even in
// the middle of a round). After a round of holders that did not, it calls forget (the records it read may be stale: where are the replicas now?) and
// waits Backoff before it lists them again. A request that may have been applied where its
// answer was lost is not sent again (see Repeatable): it fails with partition.ErrAmbiguous.
//
// Each call waits at most CallTimeout, whatever ctx allows: a client that gave up does not
// make a write's outcome any less unknown, and the node asked goes on with it regardless.
func (a *Asker) Ask(ctx context.Context, holders func() []replication.NodeID, forget func(), req *nodecall.Request) (nodecall.Answer, error) {
	clock := a.clock()
	repeat := Repeatable(req)
	deadline := clock.Now().Add(or(a.Timeout, DefaultTimeout))
	for {
		for _, node := range holders() {
			if node == a.Self || node == 0 {
				continue // this node's replica went away since the record was read
			}
			if clock.Now().After(deadline) {
				forget()
				return nodecall.Answer{}, ErrNoHolder // no call begins past the timeout
			}
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), or(a.CallTimeout, DefaultCallTimeout))
			ans, err := a.Send(cctx, node, req)
			cancel()
			switch {
			case errors.Is(err, nodecall.ErrCodec):
				return nodecall.Answer{}, fault.New(fault.Internal, "A request to another node: %w", err)
			case errors.Is(err, ErrNotSent) || err != nil && repeat:
				continue
			case err != nil:
				return nodecall.Answer{}, partition.ErrAmbiguous
			case ans.Moved:
				continue
			}
			return ans, nil
		}
		forget()
		if clock.Now().After(deadline) {
			return nodecall.Answer{}, ErrNoHolder
		}
		clock.Sleep(or(a.Backoff, DefaultBackoff))
	}
}

// Repeatable reports whether req may be sent again after a call that got no answer: it reads
// (a page of a range's items, a delegated point read or change feed page), so that running
// it twice changes nothing.
func Repeatable(req *nodecall.Request) bool {
	if req.Read != nil {
		return true
	}
	return req.Call != nil && (req.Call.Method == nodecall.CallRead || req.Call.Method == nodecall.CallFeed)
}

func (a *Asker) clock() Clock {
	if a.Clock == nil {
		return realClock{}
	}
	return a.Clock
}

func or(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
