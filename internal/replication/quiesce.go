package replication

import (
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/tracker"
)

// Quiescence. A group nobody writes to still costs a tick, a heartbeat and its answer per
// replica every tick, which adds up over thousands of groups. So once a leader has found for
// QuiesceTicks ticks that every replica has every entry and nothing is in flight, it sends its
// followers a quiesce notice and stops ticking the group; each follower that has every entry
// of that leader's term stops ticking it too. The first message, proposal or read wakes a
// replica, and its messages wake the others.
//
// A quiesced follower does not notice its leader's death by itself: no tick, no election. The
// hosts exchange one heartbeat per pair of nodes each tick instead (whatever the number of
// groups), and when a node has not been heard from for an election timeout, every group
// quiesced under a leader on it wakes, with its election timeout already elapsed (the time it
// slept counts), and elects another; and every group quiesced under a leader here with a
// replica on it wakes too, so that a leader cut off from its followers steps down.

// liveness is what a host knows of the other nodes.
type liveness struct {
	ticks int64
	// last is the tick at which each node was last heard from.
	last map[NodeID]int64
	dead map[NodeID]bool
}

func (l *liveness) init() {
	l.last, l.dead = map[NodeID]int64{}, map[NodeID]bool{}
}

// heard records that node n sent something.
func (l *liveness) heard(n NodeID) {
	l.last[n] = l.ticks
	delete(l.dead, n)
}

// heartbeat sends this node's heartbeat to every node that holds a replica of one of its
// groups, and wakes the groups quiesced under a leader that went silent.
func (h *Host) heartbeat() {
	h.live.ticks++
	h.dropEarlyVotes()
	peers := map[NodeID]Member{}
	for _, gr := range h.groups {
		for _, m := range gr.desc.Members {
			if m.Node != h.self.Node {
				peers[m.Node] = m
			}
		}
	}
	for n, m := range peers {
		h.cfg.Transport.Send(heartbeat(h.self, Member{Node: n, Store: m.Store}))
		if _, ok := h.live.last[n]; !ok {
			h.live.last[n] = h.live.ticks // not heard yet: counted from now
		}
		if !h.live.dead[n] && h.live.ticks-h.live.last[n] > int64(h.cfg.ElectionTicks) {
			h.live.dead[n] = true
			h.wakeLedBy(n)
		}
	}
}

// wakeLedBy wakes every quiesced group whose leader lives on node n, and every one this node
// leads with a replica on n: a leader cut off from its followers learns it so, and steps
// down (CheckQuorum) once it ticks, rather than claim its leadership while it sleeps.
func (h *Host) wakeLedBy(n NodeID) {
	for _, gr := range h.groups {
		if !gr.quiesced {
			continue
		}
		if gr.leading {
			for _, m := range gr.desc.Members {
				if m.Node == n {
					h.wakeGroup(gr)
					break
				}
			}
			continue
		}
		if m, ok := gr.member(ReplicaID(gr.rn.BasicStatus().Lead)); ok && m.Node == n {
			h.wakeFollower(gr)
		}
	}
}

// wakeFollower wakes gr, a quiesced follower whose leader no longer leads (gone silent, or
// asking for votes), and counts the time it slept: otherwise it would keep that leader's
// lease (CheckQuorum), refuse the votes of the others and elect nobody until it timed out
// awake.
func (h *Host) wakeFollower(gr *group) {
	h.wakeGroup(gr)
	for range h.cfg.ElectionTicks {
		gr.rn.TickQuiesced() //nolint:staticcheck // exactly its use: time slept counts
	}
}

// wakeGroup makes gr ticked again.
func (h *Host) wakeGroup(gr *group) {
	gr.idle = 0
	if gr.quiesced {
		gr.quiesced = false
		h.awake[gr.id] = true
	}
}

// maybeQuiesce quiesces gr when it leads a group with nothing to do for QuiesceTicks ticks.
func (h *Host) maybeQuiesce(gr *group) {
	if h.cfg.QuiesceTicks < 0 || !gr.leading || !h.idle(gr) {
		gr.idle = 0
		return
	}
	if gr.idle++; gr.idle < h.cfg.QuiesceTicks {
		return
	}
	st := gr.rn.BasicStatus()
	from := h.self
	from.Replica = gr.self
	for _, m := range gr.desc.Members {
		if m.Replica != gr.self {
			h.cfg.Transport.Send(&Envelope{Group: gr.id, From: from, To: m, Quiesce: true, Term: st.GetTerm(), Commit: st.GetCommit()})
		}
	}
	gr.quiesced = true
	delete(h.awake, gr.id)
}

// idle reports whether gr, which leads, has nothing in flight: every entry committed, applied
// and on every replica, no read, configuration change or leadership transfer in flight, and
// no replica on a node that went silent.
func (h *Host) idle(gr *group) bool {
	st := gr.rn.BasicStatus()
	last := gr.log.last
	if st.GetCommit() != last || gr.applied != last || st.LeadTransferee != 0 || len(gr.reads) > 0 ||
		len(gr.confs) > 0 || gr.desc.AutoLeave {
		return false
	}
	for _, m := range gr.desc.Members {
		if h.live.dead[m.Node] {
			return false // a follower whose node went silent: tick on, and step down without a quorum
		}
	}
	caughtUp := true
	gr.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		caughtUp = caughtUp && pr.Match == last
	})
	return caughtUp
}

// quiesceFollower quiesces a follower on its leader's notice, if it has every entry of it.
func (h *Host) quiesceFollower(env *Envelope) {
	gr := h.groups[env.Group]
	if gr == nil || gr.quiesced {
		return
	}
	st := gr.rn.BasicStatus()
	if st.Lead != uint64(env.From.Replica) || st.GetTerm() != env.Term || gr.log.last != env.Commit ||
		gr.applied != env.Commit || st.GetCommit() != env.Commit {
		return
	}
	gr.quiesced = true
	delete(h.awake, gr.id)
}
