package cql

import (
	"net/netip"
	"slices"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// Events about the other nodes of a cluster (Options.Peers), as Cassandra sends them to the
// drivers that REGISTER for them: TOPOLOGY_CHANGE NEW_NODE when a node is seen for the first
// time, then STATUS_CHANGE UP; STATUS_CHANGE DOWN when a node leaves the live list, and UP when
// it comes back. Drivers add the node to their pool, or mark it down, at once, instead of at
// their next read of system.peers. A node that is gone for good is never reported REMOVED_NODE:
// the cluster cannot tell it from one that is down (it is removed from the groups after
// --dead-after, and drivers drop it at their next refresh).

// watchPeers starts watching Options.Peers, when set, and returns what stops it.
func (s *Server) watchPeers() (stop func()) {
	if s.opts.Peers == nil {
		return func() {}
	}
	every := s.opts.PeersEvery
	if every <= 0 {
		every = time.Second
	}
	done := make(chan struct{})
	go func() {
		var w peerWatch
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if peers, err := s.opts.Peers(); err == nil {
				for _, ev := range w.update(peers) {
					s.publish(ev.kind, ev.msg)
				}
			}
			select {
			case <-t.C:
			case <-done:
				return
			}
		}
	}()
	return func() { close(done) }
}

// peerWatch is what watchPeers knows of the nodes: those ever seen, and those up.
type peerWatch struct {
	started bool
	seen    map[netip.AddrPort]bool
	up      map[netip.AddrPort]bool
}

type peerEvent struct {
	kind eventKind
	msg  message.Message
}

// update takes the live nodes as of now and returns the events their change makes, in the
// order of the nodes' addresses. The first update only learns them: a driver reads the nodes
// that are there when it connects from system.peers.
func (w *peerWatch) update(live []netip.AddrPort) []peerEvent {
	if !w.started {
		w.started, w.seen, w.up = true, map[netip.AddrPort]bool{}, map[netip.AddrPort]bool{}
		for _, a := range live {
			w.seen[a], w.up[a] = true, true
		}
		return nil
	}
	var evs []peerEvent
	now := map[netip.AddrPort]bool{}
	slices.SortFunc(live, func(a, b netip.AddrPort) int { return a.Compare(b) })
	for _, a := range live {
		now[a] = true
		if !w.seen[a] {
			w.seen[a] = true
			evs = append(evs, peerEvent{topologyEvents, &message.TopologyChangeEvent{ChangeType: primitive.TopologyChangeTypeNewNode, Address: inet(a)}})
		}
		if !w.up[a] {
			w.up[a] = true
			evs = append(evs, peerEvent{statusEvents, &message.StatusChangeEvent{ChangeType: primitive.StatusChangeTypeUp, Address: inet(a)}})
		}
	}
	var gone []netip.AddrPort
	for a := range w.up {
		if !now[a] {
			gone = append(gone, a)
		}
	}
	slices.SortFunc(gone, func(a, b netip.AddrPort) int { return a.Compare(b) })
	for _, a := range gone {
		delete(w.up, a)
		evs = append(evs, peerEvent{statusEvents, &message.StatusChangeEvent{ChangeType: primitive.StatusChangeTypeDown, Address: inet(a)}})
	}
	return evs
}

func inet(a netip.AddrPort) *primitive.Inet {
	return &primitive.Inet{Addr: a.Addr().AsSlice(), Port: int32(a.Port())}
}
