package replicationtest

import (
	"math/rand/v2"
	"sync"

	"github.com/partita-db/partita/internal/replication"
)

// Network is the harness's transport: it queues every envelope, and delivers it at the next
// delivery round unless a fault applies. Faults: links cut in either direction, and at random
// (from a seeded source) drops, delays of some rounds, duplicates and reordering.
type Network struct {
	mu    sync.Mutex
	hosts map[replication.NodeID]*replication.Host
	queue []queued
	round int
	// cut links, by (from, to).
	cut map[[2]replication.NodeID]bool
	// Faults at random; all zero by default.
	rng                 *rand.Rand
	drop, dup, delay    float64 // probabilities
	maxDelay            int     // rounds
	reorder             bool
	sent, delivered     int
	dropped, duplicated int
}

type queued struct {
	env *replication.Envelope
	due int
}

// NewNetwork returns a network without faults; seed drives the random ones, once set.
func NewNetwork(seed uint64) *Network {
	return &Network{hosts: map[replication.NodeID]*replication.Host{}, cut: map[[2]replication.NodeID]bool{},
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// attach makes the network deliver envelopes for node n to h (nil: to nobody, a node down).
func (n *Network) attach(node replication.NodeID, h *replication.Host) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if h == nil {
		delete(n.hosts, node)
		return
	}
	n.hosts[node] = h
}

// Send implements replication.Transport.
func (n *Network) Send(env *replication.Envelope) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.sent++
	if n.hosts[env.From.Node] == nil {
		return // from a node that is down: it died before it could send
	}
	if n.cut[[2]replication.NodeID{env.From.Node, env.To.Node}] {
		n.dropped++
		return
	}
	if n.drop > 0 && n.rng.Float64() < n.drop {
		n.dropped++
		return
	}
	due := n.round + 1
	if n.delay > 0 && n.rng.Float64() < n.delay {
		due += 1 + n.rng.IntN(max(n.maxDelay, 1))
	}
	n.queue = append(n.queue, queued{env, due})
	if n.dup > 0 && n.rng.Float64() < n.dup {
		n.duplicated++
		n.queue = append(n.queue, queued{env, due + n.rng.IntN(2)})
	}
}

// deliver runs a delivery round: every envelope due is handed to its node's host. It reports
// whether it delivered any, and whether any is still queued.
func (n *Network) deliver() (delivered, pending bool) {
	n.mu.Lock()
	n.round++
	var due, later []queued
	for _, q := range n.queue {
		if q.due <= n.round {
			due = append(due, q)
		} else {
			later = append(later, q)
		}
	}
	n.queue = later
	if n.reorder {
		n.rng.Shuffle(len(due), func(i, j int) { due[i], due[j] = due[j], due[i] })
	}
	type hop struct {
		h   *replication.Host
		env *replication.Envelope
	}
	var hops []hop
	for _, q := range due {
		// A link cut after the envelope was sent loses it too.
		if h := n.hosts[q.env.To.Node]; h != nil && !n.cut[[2]replication.NodeID{q.env.From.Node, q.env.To.Node}] {
			hops = append(hops, hop{h, q.env})
			n.delivered++
		} else {
			n.dropped++
		}
	}
	pending = len(n.queue) > 0
	n.mu.Unlock()
	for _, x := range hops {
		x.h.Deliver(x.env)
	}
	return len(hops) > 0, pending
}

// Cut cuts the links between the nodes of a and those of b, both ways.
func (n *Network) Cut(a, b []replication.NodeID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, x := range a {
		for _, y := range b {
			n.cut[[2]replication.NodeID{x, y}] = true
			n.cut[[2]replication.NodeID{y, x}] = true
		}
	}
}

// CutOneWay cuts the link from node a to node b only.
func (n *Network) CutOneWay(a, b replication.NodeID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cut[[2]replication.NodeID{a, b}] = true
}

// Heal restores every link.
func (n *Network) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.cut)
}

// SetFaults sets the probabilities of the random faults (0 for none), and how many rounds a
// delayed envelope waits at most.
func (n *Network) SetFaults(drop, dup, delay float64, maxDelay int, reorder bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.drop, n.dup, n.delay, n.maxDelay, n.reorder = drop, dup, delay, maxDelay, reorder
}
