package replication

import (
	"encoding/binary"
	"errors"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
)

// Handle is a state machine's way to its group: from any goroutine but the host's, it
// proposes entries and asks for the index a linearizable read must wait for; and it says
// whether the replica leads the group.
type Handle struct {
	h *Host
	g GroupID
	// leading, leader and term are as of the host's last Ready of the group.
	leading      atomic.Bool
	leader, term atomic.Uint64
	leaderNode   atomic.Uint64 // the node of leader, when the descriptor names it
	commit       atomic.Uint64 // the commit index the replica knows, as of the same Ready
	reads        atomic.Uint64 // numbers the read requests
}

// Errors of a Handle's requests.
var (
	// ErrNotLeader: the replica does not lead the group (or stopped leading it while the
	// request waited); Leader says who does, when known.
	ErrNotLeader = errors.New("replication: the replica does not lead its group")
	// ErrTimeout: the group did not answer in time (no quorum); the request may still take
	// effect.
	ErrTimeout = errors.New("replication: the group did not answer in time")
)

// readTimeout bounds the wait for a ReadIndex.
const readTimeout = 5 * time.Second

// readRetry is how long a ReadIndex waits for its answer before it asks again: a follower's
// request and its leader's answer are one message each, which a change of leader or a lost
// connection drops without a word.
const readRetry = 300 * time.Millisecond

// Leader reports whether the replica leads its group, and in which term.
func (hd *Handle) Leader() (leading bool, term uint64) {
	return hd.leading.Load(), hd.term.Load()
}

// LeaderReplica is the replica that leads the group, as far as this one knows (0: none known).
func (hd *Handle) LeaderReplica() ReplicaID { return ReplicaID(hd.leader.Load()) }

// LeaderNode is the node of the replica that leads the group, as far as this one knows (0: none
// known): where requests that need the leader go.
func (hd *Handle) LeaderNode() NodeID { return NodeID(hd.leaderNode.Load()) }

// Propose hands data to the group's log, in order, to be applied by every replica once
// committed. It returns once the replica's Raft took or refused them: taken counts those it
// took, all in one round, and err says why the next was not (ErrNotLeader, or an error
// because the host was stopped before it could look at them). Nothing tells the proposer when
// an entry commits but its own state machine applying it. An entry taken may still be lost if
// the replica loses its leadership; the state machine tells, when it applies the entries that
// follow, whether its proposal was among them.
func (hd *Handle) Propose(data ...[]byte) (taken int, err error) {
	type result struct {
		taken int
		err   error
	}
	res := make(chan result, 1)
	err = hd.h.enqueue(func() {
		gr := hd.h.groups[hd.g]
		if gr == nil {
			res <- result{0, ErrNotLeader}
			return
		}
		hd.h.wakeGroup(gr)
		hd.h.dirty[hd.g] = true
		for i, d := range data {
			err := gr.rn.Propose(d)
			if errors.Is(err, raft.ErrProposalDropped) {
				err = ErrNotLeader
			}
			if err != nil {
				res <- result{i, err}
				return
			}
			hd.h.proposals.Add(1)
		}
		res <- result{len(data), nil}
	})
	if err != nil {
		return 0, err
	}
	select {
	case r := <-res:
		return r.taken, r.err
	case <-hd.h.gone:
		// Raft may have taken them before the host stopped: not an error, since that would say
		// they were not taken. Their fate shows when the replica, restarted, applies its log.
		return len(data), nil
	}
}

// ReadIndex returns an index such that a read served once the replica has applied it sees
// every write acknowledged before ReadIndex was called: the leader led the group when a
// quorum answered after the call (Raft's ReadIndex, ReadOnlySafe). A follower asks its leader
// for it, again every readRetry until an answer comes (for up to readTimeout); a replica that
// knows no leader fails at once.
func (hd *Handle) ReadIndex() (uint64, error) { return hd.readIndex(false) }

// LeaderReadIndex is ReadIndex on the leader only: it fails on a replica that does not lead
// when the host takes the request, so that it also confirms that this replica still led the
// group after the call.
func (hd *Handle) LeaderReadIndex() (uint64, error) { return hd.readIndex(true) }

func (hd *Handle) readIndex(leaderOnly bool) (uint64, error) {
	deadline := time.NewTimer(readTimeout)
	defer deadline.Stop()
	retry := time.NewTicker(readRetry)
	defer retry.Stop()
	for {
		ctx, res, err := hd.askRead(leaderOnly)
		if err != nil {
			return 0, err
		}
		select {
		case r := <-res:
			return r.index, r.err
		case <-hd.h.gone:
			return 0, errStopped
		case <-retry.C:
			hd.forgetRead(ctx) // an answer still on its way is dropped: the next request's counts
		case <-deadline.C:
			hd.forgetRead(ctx)
			return 0, ErrTimeout
		}
	}
}

// askRead sends a read request, whose answer comes on res, named ctx.
func (hd *Handle) askRead(leaderOnly bool) (ctx []byte, res chan readResult, err error) {
	res = make(chan readResult, 1)
	ctx = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(hd.g)), hd.reads.Add(1))
	err = hd.h.enqueue(func() {
		gr := hd.h.groups[hd.g]
		if gr == nil || !gr.leading && (leaderOnly || gr.rn.BasicStatus().Lead == 0) {
			res <- readResult{err: ErrNotLeader}
			return
		}
		hd.h.wakeGroup(gr)
		gr.reads[string(ctx)] = res
		gr.rn.ReadIndex(ctx)
		hd.h.dirty[hd.g] = true
	})
	return ctx, res, err
}

// forgetRead stops waiting for the answer to the read request ctx.
func (hd *Handle) forgetRead(ctx []byte) {
	hd.h.enqueue(func() {
		if gr := hd.h.groups[hd.g]; gr != nil {
			delete(gr.reads, string(ctx))
		}
	})
}

// Committed is the commit index the replica knows of: on a follower, what its leader last
// told it, which a bounded-staleness read measures its lag against.
func (hd *Handle) Committed() uint64 { return hd.commit.Load() }

// Group is the handle's group.
func (hd *Handle) Group() GroupID { return hd.g }
