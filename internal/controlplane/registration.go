package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// A node's registration. Its record under nodesPrefix lives under a lease that the node keeps
// alive; the lease lapses when the node stops, and also when the control plane cannot renew it
// in time (no etcd leader for longer than LeaseTTL, the node paused or cut off). A lapsed lease
// is over for good, as etcd's concurrency.Session documents, so the node grants a new one and
// writes its record again, for as long as it runs: a node is never left alive but unregistered
// for longer than the control plane keeps it from registering.
//
// The node also writes its record under membersPrefix without a lease: the directory of every
// node that ever registered, which outlives the node's life, so that peers can still address a
// node that is not live (to reach its replicas once it is reachable again, before it has
// registered again) and status can name members on nodes that are down.

// membersPrefix holds every registered node's record, by cluster address, with no lease.
const membersPrefix = "/partita/members/"

// ErrRegistered is what Register returns when the node registered already.
var ErrRegistered = errors.New("controlplane: this node is registered already")

// registration is what keeps a node registered.
type registration struct {
	node   Node
	cancel context.CancelFunc
	done   chan struct{}

	mu sync.Mutex
	// live reports whether the node's record is under a lease being renewed; since is when
	// that last changed.
	live  bool
	since time.Time
}

// Registration is what Registered reports.
type Registration struct {
	Live  bool      // the node's record is live in the control plane
	Since time.Time // since when it has been live, or not
}

// Register records n as live and keeps it so for as long as this control plane runs: when its
// lease lapses, it registers again (above). The first registration is made before Register
// returns; a node registers once.
func (cp *ControlPlane) Register(ctx context.Context, n Node) error {
	kctx, cancel := context.WithCancel(context.Background())
	r := &registration{node: n, cancel: cancel, done: make(chan struct{})}
	if !cp.reg.CompareAndSwap(nil, r) {
		cancel()
		return ErrRegistered
	}
	ch, err := cp.registerOnce(ctx, kctx, n)
	if err != nil {
		cp.reg.Store(nil)
		cancel()
		return err
	}
	r.set(true)
	go cp.keepRegistered(kctx, r, ch)
	return nil
}

// Registered reports whether this node is registered now, and since when; Live false before
// Register.
func (cp *ControlPlane) Registered() Registration {
	r := cp.reg.Load()
	if r == nil {
		return Registration{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return Registration{Live: r.live, Since: r.since}
}

func (r *registration) set(live bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live, r.since = live, time.Now()
}

func (r *registration) stop() {
	r.cancel()
	<-r.done
}

// registerOnce grants a lease, writes n's records (the live one under the lease, the
// directory's without) and keeps the lease alive until kctx ends: the channel it returns
// closes when the lease lapses.
func (cp *ControlPlane) registerOnce(ctx, kctx context.Context, n Node) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	lease, err := cp.client.Grant(ctx, int64(LeaseTTL/time.Second))
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(n)
	if err != nil {
		return nil, err
	}
	if _, err := cp.client.Txn(ctx).Then(clientv3.OpPut(nodesPrefix+n.Addr, string(b), clientv3.WithLease(lease.ID)),
		clientv3.OpPut(membersPrefix+n.Addr, string(b))).Commit(); err != nil {
		return nil, err
	}
	return cp.client.KeepAlive(kctx, lease.ID)
}

// Backoff between two tries to register again: short, since a node that is not registered is
// not addressed by placement, but not a busy loop against a control plane without a leader.
const (
	registerBackoff    = 100 * time.Millisecond
	registerBackoffMax = time.Second
	registerTimeout    = 2 * time.Second
)

// keepRegistered drains the keep-alive answers of r's lease and, when the lease lapses,
// registers again, until kctx ends.
func (cp *ControlPlane) keepRegistered(kctx context.Context, r *registration, ch <-chan *clientv3.LeaseKeepAliveResponse) {
	defer close(r.done)
	for {
		for range ch { // the client renews; its answers are drained here
		}
		if kctx.Err() != nil {
			return
		}
		r.set(false)
		lapsed := time.Now()
		cp.log.Warn("this node's registration in the control plane lapsed (its lease could not be renewed in time); registering again",
			"node", fmt.Sprintf("%x", r.node.ID))
		wait := registerBackoff
		for {
			ctx, cancel := context.WithTimeout(kctx, registerTimeout)
			var err error
			ch, err = cp.registerOnce(ctx, kctx, r.node)
			cancel()
			if err == nil {
				break
			}
			if kctx.Err() != nil {
				return
			}
			cp.log.Debug("registering again", "err", err)
			select {
			case <-kctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, registerBackoffMax)
		}
		r.set(true)
		cp.log.Info("this node is registered in the control plane again", "node", fmt.Sprintf("%x", r.node.ID),
			"unregistered-for", time.Since(lapsed).Round(time.Millisecond))
	}
}

// Members lists every node that ever registered, live or not, by cluster address: the
// directory kept without leases. Each is marked when it is being drained, as Nodes does.
func (cp *ControlPlane) Members(ctx context.Context) ([]Node, error) {
	return cp.records(ctx, membersPrefix)
}
