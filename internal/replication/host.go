package replication

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"

	"github.com/partita-db/partita/internal/storage"
)

// Config configures a Host.
type Config struct {
	Node      NodeID
	DB        *storage.DB
	Transport Transport
	Open      Opener
	// TickInterval is the time between two ticks when the host runs by itself (Start); a host
	// driven by hand (Tick, Process) ignores it. 0: 100 ms.
	TickInterval time.Duration
	// ElectionTicks and HeartbeatTicks are Raft's (0: 10 and 1): a follower that hears nothing
	// from its leader for ElectionTicks to twice that campaigns.
	ElectionTicks, HeartbeatTicks int
	// QuiesceTicks is how many ticks a leader must find nothing to do before it quiesces its
	// group (0: 3; negative: never).
	QuiesceTicks int
	Logger       *slog.Logger
	// Notify, when set, is called whenever the host is handed work, for a host driven by hand
	// (Process) whose driver waits for work.
	Notify func()
	// CanOpen, when set, says whether Open could open a state machine with meta now; a
	// snapshot that it could not is refused (and sent again by Raft), rather than stop the
	// host when Open fails. A cluster's node may receive a replica before it has learned what
	// the replica is of.
	CanOpen func(g GroupID, meta []byte) bool
	// Removed, when set, is told of every replica the host destroyed (it was removed from its
	// group), after its state machine closed. It runs on the host's goroutine.
	Removed func(g GroupID)
}

// Host runs this node's replicas of many Raft groups. See doc.go.
type Host struct {
	cfg  Config
	self Member // the node and store; Replica unset

	// mu guards inbox and closed; the rest is the host goroutine's.
	mu     sync.Mutex
	inbox  []func()
	closed bool
	// gone is closed when the host closes: whoever waits for its goroutine gives up.
	gone chan struct{}
	// wake is signalled when inbox gains work.
	wake chan struct{}

	groups map[GroupID]*group
	// dirty are the groups whose RawNode may have a Ready: touched since their last one.
	dirty map[GroupID]bool
	// awake are the groups ticked: every group but the quiesced ones.
	awake map[GroupID]bool
	// live is what the host knows of other nodes' liveness (quiesce.go).
	live liveness
	// splits are the splits applied in the Ready being handled (split.go).
	splits []pendingSplit
	// early are votes for groups this node does not hold yet, kept for a few ticks: the
	// children of a split that this node has not applied yet (split.go).
	early map[GroupID][]earlyVote

	// proposals counts the proposals made through the host; syncs the batches synced;
	// snapshots the snapshots sent and installed.
	proposals, syncs           atomic.Uint64
	snapshotsSent, snapshotsIn atomic.Uint64
	// sending counts the snapshots being made and sent to other nodes, whole (snapshot.go) or
	// streamed (snapstream.go): Close waits for them, which end once gone is closed, before the
	// store may close under their reads.
	sending sync.WaitGroup

	stop, stopped chan struct{}
}

// New opens a host on cfg.DB and every replica the store holds.
func New(cfg Config) (*Host, error) {
	if cfg.TickInterval <= 0 {
		cfg.TickInterval = 100 * time.Millisecond
	}
	if cfg.ElectionTicks <= 0 {
		cfg.ElectionTicks = 10
	}
	if cfg.HeartbeatTicks <= 0 {
		cfg.HeartbeatTicks = 1
	}
	if cfg.QuiesceTicks == 0 {
		cfg.QuiesceTicks = 3
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	store, err := storeID(cfg.DB)
	if err != nil {
		return nil, err
	}
	h := &Host{cfg: cfg, self: Member{Node: cfg.Node, Store: store}, wake: make(chan struct{}, 1), gone: make(chan struct{}),
		groups: map[GroupID]*group{}, dirty: map[GroupID]bool{}, awake: map[GroupID]bool{}, early: map[GroupID][]earlyVote{}}
	h.live.init()
	// Sstables of streamed snapshots that were arriving when the process stopped: never
	// ingested, and of no use now (the leaders send again).
	if err := cfg.DB.RemoveSSTDirs(); err != nil {
		return nil, err
	}
	if err := h.loadGroups(); err != nil {
		h.closeGroups()
		return nil, err
	}
	return h, nil
}

// storeID reads the store's identity, or makes one for a new store.
func storeID(db *storage.DB) (StoreID, error) {
	v, err := db.GetCopy(nil, storage.StoreKey())
	if err == nil && len(v) == 8 {
		return StoreID(binary.BigEndian.Uint64(v)), nil
	}
	if err != nil && !storage.IsNotFound(err) {
		return 0, err
	}
	var b [8]byte
	rand.Read(b[:])
	id := binary.BigEndian.Uint64(b[:]) | 1 // never 0
	batch := db.NewBatch()
	defer batch.Close()
	if err := batch.Set(storage.StoreKey(), binary.BigEndian.AppendUint64(nil, id)); err != nil {
		return 0, err
	}
	return StoreID(id), batch.Commit()
}

// loadGroups opens every replica whose record the store holds.
func (h *Host) loadGroups() error {
	span := storage.RaftGroupsSpan()
	it, err := h.cfg.DB.NewIter(span.Start, span.End)
	if err != nil {
		return err
	}
	type found struct {
		g   GroupID
		rec replicaRecord
	}
	var recs []found
	for it.First(); it.Valid(); it.Next() {
		g, kind, _, err := storage.ParseRaftKey(it.Key())
		if err != nil || kind != storage.RaftReplica {
			continue
		}
		var rec replicaRecord
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			it.Close()
			return fmt.Errorf("group %d: replica record: %w", g, err)
		}
		recs = append(recs, found{GroupID(g), rec})
	}
	if err := it.Close(); err != nil {
		return err
	}
	for _, f := range recs {
		gr, err := h.openGroup(f.g, f.rec)
		if errors.Is(err, ErrGone) {
			if err := h.forget(f.g, f.rec.Replica); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		h.addGroup(gr)
	}
	return nil
}

// forget deletes the Raft state of replica self of g, whose state machine is gone, and leaves
// its tombstone.
func (h *Host) forget(g GroupID, self ReplicaID) error {
	b := h.cfg.DB.NewBatch()
	defer b.Close()
	if err := h.clearGroup(b, g, self+1); err != nil {
		return err
	}
	h.cfg.Logger.Info("replication: a replica whose state machine is gone removed", "group", g, "replica", self)
	return b.Commit()
}

func (h *Host) addGroup(gr *group) {
	h.groups[gr.id] = gr
	h.dirty[gr.id] = true
	h.awake[gr.id] = true
}

// Store is this node's store's identity.
func (h *Host) Store() StoreID { return h.self.Store }

// Node is this node's id.
func (h *Host) Node() NodeID { return h.cfg.Node }

// Start runs the host by itself: it ticks every TickInterval and processes work as it comes.
func (h *Host) Start() {
	h.stop, h.stopped = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(h.stopped)
		t := time.NewTicker(h.cfg.TickInterval)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				h.Tick()
			case <-h.wake:
			}
			for h.Process() {
			}
		}
	}()
}

// Close stops the host and closes every state machine. Proposals and reads in flight fail.
// Closing a closed host does nothing.
func (h *Host) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	close(h.gone)
	h.mu.Unlock()
	if h.stop != nil {
		close(h.stop)
		<-h.stopped
	}
	h.sending.Wait()
	h.closeGroups()
}

func (h *Host) closeGroups() {
	for _, gr := range h.groups {
		gr.failWaiters(errStopped)
		h.releaseOutgoing(gr)
		if gr.sm != nil {
			gr.sm.Close()
		}
	}
	h.groups = map[GroupID]*group{}
}

// enqueue hands fn to the host's goroutine.
func (h *Host) enqueue(fn func()) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return errStopped
	}
	h.inbox = append(h.inbox, fn)
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
	if h.cfg.Notify != nil {
		h.cfg.Notify()
	}
	return nil
}

// Deliver hands the host an envelope from another host (the transport's receiving side).
func (h *Host) Deliver(env *Envelope) {
	if env.Snapshot != nil && env.Snapshot.Stream != nil {
		h.deliverStreamed(env) // its sstables are still to come
		return
	}
	h.enqueue(func() { h.receive(env) })
}

// Tick advances the Raft clock of every group that is not quiesced, and sends this node's
// heartbeats. A host that runs by itself ticks every TickInterval.
func (h *Host) Tick() {
	h.enqueue(func() {
		for g := range h.awake {
			gr := h.groups[g]
			gr.rn.Tick()
			h.dirty[g] = true
			h.maybeQuiesce(gr)
		}
		h.heartbeat()
	})
}

// Process does the work at hand: what other goroutines handed over, then every Ready. It
// reports whether there was any; call it until there is none (Start does).
func (h *Host) Process() bool {
	h.mu.Lock()
	inbox := h.inbox
	h.inbox = nil
	h.mu.Unlock()
	for _, fn := range inbox {
		fn()
	}
	return h.handleReadies() || len(inbox) > 0
}

// ready is one group's Ready, and what persisting it needs.
type ready struct {
	gr *group
	rd raft.Ready
}

// handleReadies handles the Ready of every group that has one: it persists all of their
// entries and hard states in one batch, with one sync, then sends their messages, applies
// their committed entries and advances them, as the raft package documents.
func (h *Host) handleReadies() bool {
	var rds []ready
	for g := range h.dirty {
		gr := h.groups[g]
		delete(h.dirty, g)
		if gr == nil || !gr.rn.HasReady() {
			continue
		}
		rds = append(rds, ready{gr, gr.rn.Ready()})
	}
	if len(rds) == 0 {
		return false
	}
	// Persist: snapshots first (each ingested on its own), then one batch for every group's
	// entries and hard state, synced once if any of them must be.
	for i := range rds {
		if !raft.IsEmptySnap(rds[i].rd.Snapshot) {
			if err := h.installSnapshot(rds[i].gr, rds[i].rd.Snapshot); err != nil {
				h.fatal(rds[i].gr, err)
			}
		}
		// A snapshot stepped since the last Ready and not handed over in this one was stale:
		// Raft ignored it.
		h.dropIncoming(rds[i].gr)
	}
	// A leader's appends go to its followers before they are synced here, so that its sync
	// and theirs overlap (the Raft thesis, 10.2.1, which etcd raft's contract allows: messages
	// may be sent while the entries of the same Ready are persisted). It is safe because a
	// leader counts its own copy towards a commit only once it is synced (raft steps its
	// self-acknowledgement at Advance, below), so an entry still commits only once a majority
	// holds it durably. The rest (every answer, whose sender promises what it persisted)
	// waits for the sync, as do all of a Ready that changes a term or a vote.
	later := make([][]*pb.Message, len(rds))
	for i, r := range rds {
		var now []*pb.Message
		now, later[i] = sendsEarly(r.gr, r.rd)
		h.send(r.gr, now)
	}
	b := h.cfg.DB.NewBatch()
	sync := false
	for _, r := range rds {
		if err := r.gr.log.append(b, r.rd.Entries); err != nil {
			h.fatal(r.gr, err)
		}
		if !raft.IsEmptyHardState(r.rd.HardState) {
			if err := r.gr.log.setHardState(b, r.rd.HardState); err != nil {
				h.fatal(r.gr, err)
			}
		}
		sync = sync || r.rd.MustSync
	}
	if b.Count() > 0 {
		var err error
		if sync {
			err = b.Commit()
			h.syncs.Add(1)
		} else {
			err = b.CommitUnsynced()
		}
		if err != nil {
			// What the log holds can no longer be trusted to match what Raft was told.
			panic(fmt.Sprintf("replication: node %d: persisting Raft state: %v", h.cfg.Node, err))
		}
	}
	b.Close()
	// Send, then apply, then advance.
	for i, r := range rds {
		h.send(r.gr, later[i])
	}
	for _, r := range rds {
		gr := r.gr
		if r.rd.SoftState != nil || !raft.IsEmptyHardState(r.rd.HardState) {
			h.leadership(gr)
		}
		if len(r.rd.CommittedEntries) > 0 {
			if err := h.apply(gr, r.rd.CommittedEntries); err != nil {
				h.fatal(gr, err)
			}
		}
		for _, rs := range r.rd.ReadStates {
			if ch, ok := gr.reads[string(rs.RequestCtx)]; ok {
				ch <- readResult{index: rs.Index}
				delete(gr.reads, string(rs.RequestCtx))
			}
		}
		gr.rn.Advance(r.rd)
		h.dirty[gr.id] = true // a single voter commits at Advance: its next Ready applies
	}
	for _, r := range rds {
		h.afterApply(r.gr)
	}
	return true
}

// sendsEarly divides a Ready's messages into those that may be sent before its entries and
// hard state are synced (a leader's appends and heartbeats, when the Ready changes neither the
// term nor the vote that gr's log holds) and those that must wait.
func sendsEarly(gr *group, rd raft.Ready) (now, later []*pb.Message) {
	hs, held := rd.HardState, gr.log.hard
	if !raft.IsEmptyHardState(hs) && (hs.GetTerm() != held.GetTerm() || hs.GetVote() != held.GetVote()) {
		return nil, rd.Messages
	}
	for _, m := range rd.Messages {
		switch m.GetType() {
		case pb.MsgApp, pb.MsgHeartbeat:
			now = append(now, m)
		default:
			later = append(later, m)
		}
	}
	return now, later
}

// fatal stops the host after a failure it cannot recover from: the node must restart, and
// replay what is durable.
func (h *Host) fatal(gr *group, err error) {
	panic(fmt.Sprintf("replication: node %d group %d: %v", h.cfg.Node, gr.id, err))
}

// leadership tells the state machine when its replica starts or stops leading. Requests
// waiting on a replica that stopped leading fail.
func (h *Host) leadership(gr *group) {
	st := gr.rn.BasicStatus()
	leading, term := st.RaftState == raft.StateLeader, st.GetTerm()
	gr.handle.leader.Store(st.Lead)
	gr.handle.commit.Store(st.GetCommit())
	if m, ok := gr.desc.Member(ReplicaID(st.Lead)); ok {
		gr.handle.leaderNode.Store(uint64(m.Node))
	} else {
		gr.handle.leaderNode.Store(0)
	}
	gr.handle.term.Store(term)
	if leading == gr.leading && term == gr.term {
		return
	}
	if gr.leading && !leading {
		gr.failWaiters(ErrNotLeader)
	}
	gr.leading, gr.term = leading, term
	gr.handle.leading.Store(leading)
	if gr.sm != nil {
		gr.sm.Leader(leading, term)
	}
	if leading {
		h.wakeGroup(gr)
	}
}

// apply hands committed entries to the state machine, applying configuration changes to Raft
// first.
func (h *Host) apply(gr *group, ents []*pb.Entry) error {
	cs := make([]Committed, 0, len(ents))
	for _, e := range ents {
		c := Committed{Index: e.GetIndex(), Term: e.GetTerm()}
		switch e.GetType() {
		case pb.EntryNormal:
			c.Data = e.GetData()
		case pb.EntryConfChangeV2, pb.EntryConfChange:
			desc, err := h.applyConfChange(gr, e)
			if err != nil {
				return err
			}
			c.Desc = desc.encode()
		}
		cs = append(cs, c)
	}
	if gr.sm == nil {
		return fmt.Errorf("entries committed to a replica without a state machine")
	}
	if err := gr.sm.Apply(cs); err != nil {
		return err
	}
	gr.applied = ents[len(ents)-1].GetIndex()
	gr.sinceTruncation += len(ents)
	return nil
}

// afterApply finishes what the Ready's entries started: a split's children are created, a
// removed replica is destroyed, and the log is truncated now and then.
func (h *Host) afterApply(gr *group) {
	if gr.removed {
		h.destroy(gr)
		return
	}
	h.finishSplits()
	if gr.sinceTruncation >= truncateEvery {
		gr.sinceTruncation = 0
		if err := h.truncate(gr); err != nil {
			h.fatal(gr, err)
		}
	}
}

// send hands a Ready's messages to the transport.
func (h *Host) send(gr *group, msgs []*pb.Message) {
	for _, m := range msgs {
		to, ok := gr.member(ReplicaID(m.GetTo()))
		if !ok {
			continue // a replica whose place is unknown yet: Raft tries again
		}
		from := h.self
		from.Replica = gr.self
		env := &Envelope{Group: gr.id, From: from, To: to, Msg: m}
		if m.GetType() == pb.MsgSnap {
			h.sendSnapshot(gr, env)
			continue
		}
		h.cfg.Transport.Send(env)
	}
}

// receive steps an envelope into its group, creating the replica when a leader addresses one
// this node does not hold yet.
func (h *Host) receive(env *Envelope) {
	if env.To.Node != h.self.Node || env.To.Store != h.self.Store {
		return // meant for another life of this node's store
	}
	h.live.heard(env.From.Node)
	if env.isHeartbeat() {
		if env.Quiesce {
			h.quiesceFollower(env)
		}
		return
	}
	gr := h.groups[env.Group]
	if gr != nil && gr.self < env.To.Replica && createsReplica(env) {
		// Replica ids only grow, and a leader addresses a new replica on this store only once
		// the one it held left the group: that one missed its removal (the node was down or
		// cut off) and stays behind with nobody to talk to. It goes, for the new one.
		h.cfg.Logger.Info("replication: a replica removed while away replaced", "group", gr.id, "replica", gr.self, "by", env.To.Replica)
		h.destroy(gr)
		gr = nil
	}
	if gr == nil {
		if gr = h.createReplica(env); gr == nil {
			return
		}
	}
	if gr.self != env.To.Replica {
		return // for a replica of the group this node no longer holds
	}
	if _, known := gr.desc.Member(env.From.Replica); !known {
		gr.peers[env.From.Replica] = env.From
	}
	m := env.Msg
	if m.GetType() == pb.MsgSnap {
		if !h.acceptSnapshot(gr, env) {
			return
		}
	}
	switch t := m.GetType(); {
	case (t == pb.MsgPreVote || t == pb.MsgVote) && gr.quiesced && gr.rn.BasicStatus().Lead == m.GetFrom():
		// The replica this one follows asks for votes, so it no longer leads: its node
		// restarted before this one counted it as gone.
		h.wakeFollower(gr)
	case t != pb.MsgHeartbeat && t != pb.MsgHeartbeatResp:
		h.wakeGroup(gr) // heartbeats and their answers are no work: they leave a group idle
	}
	if err := gr.rn.Step(m); err != nil && !errors.Is(err, raft.ErrStepPeerNotFound) {
		h.cfg.Logger.Debug("replication: step", "group", gr.id, "err", err)
	}
	h.dirty[gr.id] = true
}

// createReplica creates an empty replica for a message addressed to one this node does not
// hold: a replica added to the group, which a snapshot will initialize. Not for a vote (an
// empty replica must not vote) nor for a replica id its tombstone rules out (one removed from
// the node, or the group of a split's parent).
func (h *Host) createReplica(env *Envelope) *group {
	if t := env.Msg.GetType(); t == pb.MsgVote || t == pb.MsgPreVote {
		h.keepEarlyVote(env)
		return nil
	}
	if !createsReplica(env) {
		return nil
	}
	g := env.Group
	if uint64(env.To.Replica) < h.tombstone(g) {
		return nil
	}
	rec := replicaRecord{Replica: env.To.Replica}
	b := h.cfg.DB.NewBatch()
	defer b.Close()
	if err := h.putReplicaRecord(b, g, rec); err != nil || b.Commit() != nil {
		return nil
	}
	gr, err := h.openGroup(g, rec)
	if err != nil {
		h.cfg.Logger.Error("replication: creating a replica", "group", g, "err", err)
		return nil
	}
	h.addGroup(gr)
	return gr
}

// createsReplica says whether env may create the replica it is addressed to: a leader's
// message, not a vote (an empty replica must not vote), a leadership transfer, a local message
// or a response.
func createsReplica(env *Envelope) bool {
	switch env.Msg.GetType() {
	case pb.MsgVote, pb.MsgPreVote, pb.MsgTimeoutNow:
		return false
	}
	return env.Msg.GetTerm() != 0
}

// tombstone is the replica id below which g never comes back on this node (0: none).
func (h *Host) tombstone(g GroupID) uint64 {
	v, err := h.cfg.DB.GetCopy(nil, storage.RaftKey(nil, uint64(g), storage.RaftTombstone, 0))
	if err != nil || len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// destroy removes a replica that applied its own removal: its state machine's data, its Raft
// state, and leaves a tombstone so that no message creates it again.
func (h *Host) destroy(gr *group) {
	gr.failWaiters(ErrNotLeader)
	h.releaseOutgoing(gr)
	var spans []storage.Span
	if gr.sm != nil {
		spans = gr.sm.Spans()
		gr.sm.Discard()
	}
	b := h.cfg.DB.NewBatch()
	defer b.Close()
	err := h.clearGroup(b, gr.id, max(gr.desc.Next, gr.self+1))
	for _, s := range spans {
		if err == nil {
			err = b.DeleteRange(s.Start, s.End)
		}
	}
	if err == nil {
		err = b.Commit()
	}
	if err != nil {
		h.fatal(gr, err)
	}
	h.cfg.DB.Rows.Forget(spans)
	delete(h.groups, gr.id)
	delete(h.awake, gr.id)
	delete(h.dirty, gr.id)
	h.cfg.Logger.Info("replication: replica removed", "group", gr.id, "replica", gr.self)
	if h.cfg.Removed != nil {
		h.cfg.Removed(gr.id)
	}
}

// clearGroup adds to b the removal of a group's Raft state on this node and its tombstone:
// replica ids below next never come back here.
func (h *Host) clearGroup(b *storage.Batch, g GroupID, next ReplicaID) error {
	span := storage.RaftGroupSpan(uint64(g))
	if err := b.DeleteRange(span.Start, span.End); err != nil {
		return err
	}
	return b.Set(storage.RaftKey(nil, uint64(g), storage.RaftTombstone, 0), binary.BigEndian.AppendUint64(nil, uint64(next)))
}

// truncateEvery is how many entries a replica applies between two looks at its log's length;
// the log keeps at least keepEntries, and is truncated once it holds more than maxEntries.
const (
	truncateEvery = 256
	keepEntries   = 512
	maxEntries    = 4096
	// farBehind is how far a follower may lag before the leader stops keeping the log for it:
	// it will get a snapshot instead.
	farBehind = 100_000
)

// truncate shortens gr's log when it grew long: up to what every follower that is not far
// behind has, when gr leads, and never past what gr applied.
func (h *Host) truncate(gr *group) error {
	if gr.log.last-gr.log.first < maxEntries {
		return nil
	}
	upto := gr.applied
	if gr.leading {
		gr.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
			if ReplicaID(id) != gr.self && gr.log.last-pr.Match < farBehind {
				upto = min(upto, pr.Match)
			}
		})
	}
	if upto <= gr.log.first+keepEntries {
		return nil
	}
	b := h.cfg.DB.NewBatch()
	defer b.Close()
	if err := gr.log.truncate(b, upto-keepEntries); err != nil {
		return err
	}
	return b.CommitUnsynced()
}

// Groups lists the groups this node holds a replica of.
func (h *Host) Groups() []GroupID {
	out := make(chan []GroupID, 1)
	if h.enqueue(func() {
		var gs []GroupID
		for g := range h.groups {
			gs = append(gs, g)
		}
		slices.Sort(gs)
		out <- gs
	}) != nil {
		return nil
	}
	return await(h, out)
}

// await waits for the host's goroutine to answer on ch (the zero value once the host closed);
// a host driven by hand is processed meanwhile by whoever drives it, so await must not be
// called from that goroutine.
func await[T any](h *Host, ch chan T) T {
	select {
	case v := <-ch:
		return v
	case <-h.gone:
		var zero T
		return zero
	}
}

// do runs fn on the host's goroutine and returns its error, or errStopped if the host closed
// first. Like await, not from the goroutine that drives the host.
func (h *Host) do(fn func() error) error {
	res := make(chan error, 1)
	if err := h.enqueue(func() { res <- fn() }); err != nil {
		return err
	}
	select {
	case err := <-res:
		return err
	case <-h.gone:
		return errStopped
	}
}

// Syncs is how many synced batches the host has committed: each makes the appends of every
// group of one Ready round durable.
func (h *Host) Syncs() uint64 { return h.syncs.Load() }

// Status is what a host says of its replica of a group.
type Status struct {
	Replica    ReplicaID
	Leading    bool
	Leader     ReplicaID
	Term       uint64
	Commit     uint64
	Applied    uint64
	Quiesced   bool
	Descriptor Descriptor
	// Match is, on the leader, how far each replica's log is known to match its own; Active
	// whether the leader heard from each within the last election timeout (Raft's
	// RecentActive, which CheckQuorum resets every election timeout; the leader's own is true).
	Match  map[ReplicaID]uint64
	Active map[ReplicaID]bool
}

// Status describes this node's replica of g; ok is false when it holds none.
func (h *Host) Status(g GroupID) (st Status, ok bool) {
	out := make(chan Status, 1)
	if h.enqueue(func() {
		gr := h.groups[g]
		if gr == nil {
			out <- Status{}
			return
		}
		bs := gr.rn.BasicStatus()
		st := Status{Replica: gr.self, Leading: gr.leading, Leader: ReplicaID(bs.Lead), Term: bs.GetTerm(),
			Commit: bs.GetCommit(), Applied: gr.applied, Quiesced: gr.quiesced, Descriptor: *gr.desc}
		if gr.leading {
			st.Match, st.Active = map[ReplicaID]uint64{}, map[ReplicaID]bool{}
			gr.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
				st.Match[ReplicaID(id)], st.Active[ReplicaID(id)] = pr.Match, pr.RecentActive || ReplicaID(id) == gr.self
			})
		}
		out <- st
	}) != nil {
		return Status{}, false
	}
	st = await(h, out)
	return st, st.Replica != 0
}

// Awake is how many of the host's groups are ticked (not quiesced).
func (h *Host) Awake() int {
	out := make(chan int, 1)
	if h.enqueue(func() { out <- len(h.awake) }) != nil {
		return 0
	}
	return await(h, out)
}

// Snapshots is how many snapshots the host has sent and installed.
func (h *Host) Snapshots() (sent, installed uint64) {
	return h.snapshotsSent.Load(), h.snapshotsIn.Load()
}

// CompactLog truncates this node's log of g up to the entry it applied last, as the host does
// once a log grows long: a follower that needs an entry it removed gets a snapshot instead.
// For tests and tools.
func (h *Host) CompactLog(g GroupID) error {
	return h.do(func() error {
		gr := h.groups[g]
		if gr == nil {
			return fmt.Errorf("replication: node %d holds no replica of group %d", h.cfg.Node, g)
		}
		b := h.cfg.DB.NewBatch()
		defer b.Close()
		if err := gr.log.truncate(b, gr.applied); err != nil {
			return err
		}
		return b.Commit()
	})
}
