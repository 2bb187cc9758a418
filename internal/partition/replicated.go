package partition

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/storage"
)

// A replicated partition is one replica of a Raft group (package replication hosts it). Its
// writer runs on every replica, but only the leaseholder's decides: the replica that leads the
// group and has applied a lease entry of its own term (below). What it decides is encoded
// (codec.go) and proposed to the group; every replica, the leaseholder included, applies the
// committed entries in log order (ApplyLog), and the leaseholder answers each request once it
// has applied the entry that carried it. Reads on the leaseholder wait for a read index
// (ReadIndex), so that none misses a write acknowledged before it began.

// Replication is what a replicated partition needs of its group; replication.Handle provides
// it.
type Replication interface {
	// Propose hands encoded entries to the group's log, in order, all in the same round, so
	// that one sync makes them durable. It returns how many were taken; err says why the
	// next one was not (an entry not taken is never applied).
	Propose(data ...[]byte) (taken int, err error)
	// ReadIndex is the index a linearizable read must wait for the partition to apply; a
	// follower asks its leader.
	ReadIndex() (uint64, error)
	// LeaderReadIndex is ReadIndex on the leader only: it also confirms that the replica
	// still led its group after the call.
	LeaderReadIndex() (uint64, error)
	// Leader reports whether the replica leads its group, and in which term.
	Leader() (leading bool, term uint64)
	// Committed is the commit index the replica knows of (a follower, from its leader).
	Committed() uint64
}

// LogEntry is a committed entry of the group's log, as the partition applies it.
type LogEntry struct {
	Index, Term uint64
	Data        []byte // an encoded entry; nil for an empty entry or a configuration change
	Group       []byte // the group's descriptor after a configuration change; nil otherwise
}

// Errors of a replicated partition's requests.
var (
	// ErrNotLeaseholder refuses a request to a replica that does not hold the lease: ask the
	// leader. Nothing was done.
	ErrNotLeaseholder = fault.New(fault.Unavailable, "This replica does not hold the partition's lease; retry on its leader")
	// ErrAmbiguous is a write whose outcome is not known: proposed, but neither applied nor
	// refused in time (the leader lost its quorum). It may still be applied.
	ErrAmbiguous = fault.New(fault.Unavailable, "The write's outcome is unknown: the partition's replicas did not answer in time; read the item to learn whether it was applied")
)

// Ambiguous reports whether err leaves the outcome of a write unknown: every other failure of
// Execute means that nothing was applied.
func Ambiguous(err error) bool { return errors.Is(err, ErrAmbiguous) }

// Refused reports whether err is the refusal of a replica that applied nothing and that another
// replica, or the same one later, may not refuse: it does not hold the lease, lost it while
// the request waited, or applied an earlier entry the request followed after it was refused.
func Refused(err error) bool {
	return errors.Is(err, ErrNotLeaseholder) || errors.Is(err, errStaleLease) || errors.Is(err, errOutOfOrder)
}

// Retriable reports whether a write that failed with err may be sent again, to its group's
// leader as it is then: it was refused, and applied nowhere.
func Retriable(err error) bool { return Refused(err) && !Ambiguous(err) }

// Closed reports whether err is the refusal of a partition that closed: it split, or its node
// is stopping. A read refused so by a partition that split is read again on its child.
func Closed(err error) bool { return errors.Is(err, errClosed) }

// Leading reports whether the partition is a replica that leads its group (it may not hold
// the lease yet); false on a single node.
func (p *Partition) Leading() bool {
	leading, _ := p.LeaderTerm()
	return leading
}

// LeaderTerm reports whether the partition is a replica that leads its group, and in which
// term; false on a single node.
func (p *Partition) LeaderTerm() (leading bool, term uint64) {
	l, ok := p.log.(*replicatedLog)
	if !ok {
		return false, 0
	}
	return l.r.Leader()
}

// leaderWait bounds how long a follower's read waits for a leader to be known.
const leaderWait = 2 * time.Second

// proposalTimeout bounds the wait for a proposal's outcome.
const proposalTimeout = 10 * time.Second

// replicatedLog is the entryLog of a replicated partition.
type replicatedLog struct {
	p *Partition
	r Replication
	// salt makes the replica's proposal ids unlike any other replica's, or its own in an
	// earlier life.
	salt uint64

	mu   sync.Mutex
	next uint64
	// waiting are the proposals in flight, by id: their outcome, and the epoch they carry.
	waiting map[uint64]proposal
	// applied is closed, and replaced, whenever an apply moves the applied index.
	applied chan struct{}
	// leading and term are what the host last told (SetLeader).
	leading bool
	term    uint64
	// taking is the lease SetLeader last proposed, so that the writer waits for it rather
	// than propose a second lease of the same term.
	taking *leaseTake
	fresh  freshness // for Bounded reads; its own lock
}

// leaseTake is a lease proposed for term; done is closed once it is decided: applied,
// refused, or given up.
type leaseTake struct {
	term uint64
	done chan struct{}
}

type proposal struct {
	done  chan error
	epoch uint64
}

func newReplicatedLog(p *Partition, r Replication) *replicatedLog {
	var b [8]byte
	rand.Read(b[:])
	return &replicatedLog{p: p, r: r, salt: binary.BigEndian.Uint64(b[:]) &^ (1<<32 - 1),
		waiting: map[uint64]proposal{}, applied: make(chan struct{})}
}

// commit proposes ents and waits for each one's outcome.
func (l *replicatedLog) commit(ents []*entry) []error {
	errs := make([]error, len(ents))
	waits := make([]chan error, len(ents))
	data := make([][]byte, len(ents))
	l.mu.Lock()
	for i, e := range ents {
		l.next++
		e.proposal = l.salt | l.next&(1<<32-1)
		w := proposal{done: make(chan error, 1), epoch: e.epoch}
		if e.kind == entryLease {
			w.epoch = e.lease
		}
		l.waiting[e.proposal] = w
		waits[i] = w.done
	}
	l.mu.Unlock()
	for i, e := range ents {
		data[i] = encodeEntry(nil, e)
	}
	if taken, err := l.r.Propose(data...); err != nil {
		l.mu.Lock()
		for i := taken; i < len(ents); i++ {
			delete(l.waiting, ents[i].proposal)
			errs[i], waits[i] = ErrNotLeaseholder, nil
		}
		l.mu.Unlock()
	}
	deadline := time.Now().Add(proposalTimeout)
	for i, w := range waits {
		if w == nil {
			continue
		}
		timeout := time.NewTimer(time.Until(deadline))
		select {
		case errs[i] = <-w:
		case <-l.p.closing:
			select {
			case errs[i] = <-w: // applied (a split's commit closes the partition at once)
			default:
				errs[i] = ErrAmbiguous // the replica is going away: its proposal may still commit
			}
		case <-timeout.C:
			l.mu.Lock()
			delete(l.waiting, ents[i].proposal)
			l.mu.Unlock()
			errs[i] = ErrAmbiguous
		}
		timeout.Stop()
	}
	return errs
}

// resolve ends the wait of the proposal id, if it is this replica's.
func (l *replicatedLog) resolve(id uint64, err error) {
	if id == 0 {
		return
	}
	l.mu.Lock()
	w, ok := l.waiting[id]
	delete(l.waiting, id)
	l.mu.Unlock()
	if ok {
		w.done <- err
	}
}

// leaseApplied fails the proposals decided under another lease than epoch: applied later,
// each would be refused.
func (l *replicatedLog) leaseApplied(epoch uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, w := range l.waiting {
		if w.epoch != epoch {
			w.done <- errStaleLease
			delete(l.waiting, id)
		}
	}
}

// isLocal reports whether the partition is a single node's, whose log is its own batches.
func (p *Partition) isLocal() bool {
	_, ok := p.log.(localLog)
	return ok
}

// SetLeader tells the partition whether its replica leads the group, and in which term (the
// host calls it). A replica that starts leading proposes its lease at once; its writer waits
// for it (leaseholder).
func (p *Partition) SetLeader(leading bool, term uint64) {
	l, ok := p.log.(*replicatedLog)
	if !ok {
		return
	}
	l.mu.Lock()
	took := leading && (!l.leading || l.term != term)
	l.leading, l.term = leading, term
	var take *leaseTake
	if took {
		take = &leaseTake{term: term, done: make(chan struct{})}
		l.taking = take
	}
	l.mu.Unlock()
	if took {
		// Take the lease at once, not at the first request: once it is applied, every
		// replica's proposals of earlier leases fail at once (leaseApplied), instead of waiting
		// for their time out, when they were lost with the leadership. The writer waits for
		// this one (leaseholder), so a term has one lease entry, not one more at a time of its
		// own. Not from this goroutine: the host that calls SetLeader must go on to handle the
		// proposal.
		go func() {
			defer close(take.done)
			l.commit([]*entry{{kind: entryLease, lease: term}})
		}()
	}
}

// LeaseTaken reports whether the partition may decide writes without taking a lease first:
// always on a single node; replicated, when its replica leads and has applied the lease entry
// of its term (which a replica that starts leading proposes at once, from another goroutine).
func (p *Partition) LeaseTaken() bool {
	l, ok := p.log.(*replicatedLog)
	if !ok {
		return true
	}
	leading, term := l.r.Leader()
	return leading && p.published.Load().Epoch == term
}

// leaseholder checks, on the writer, that the partition may decide entries in state st: on a
// single node always; replicated, when its replica leads and holds the lease of its term,
// which it takes first if it has not (a lease entry, applied before anything it decides). It
// returns the state to decide against.
func (p *Partition) leaseholder(st state) (state, error) {
	l, ok := p.log.(*replicatedLog)
	if !ok {
		return st, nil
	}
	leading, term := l.r.Leader()
	if !leading {
		return st, ErrNotLeaseholder
	}
	if st.Epoch == term {
		return st, nil
	}
	l.mu.Lock()
	take := l.taking
	l.mu.Unlock()
	if take != nil && take.term == term {
		<-take.done
		if st = *p.published.Load(); st.Epoch == term {
			return st, nil
		}
		// Not applied (lost with the leadership, or given up): the writer proposes its own.
	}
	if err := l.commit([]*entry{{kind: entryLease, lease: term, epoch: st.Epoch}})[0]; err != nil {
		if !errors.Is(err, errStaleLease) && !errors.Is(err, ErrAmbiguous) {
			return st, err
		}
		// Refused as stale: the lease SetLeader proposed for the same term may have been
		// applied first, which is this replica's lease all the same.
	}
	st = *p.published.Load()
	if st.Epoch != term {
		return st, ErrNotLeaseholder
	}
	return st, nil
}

// ReadBarrier waits until the partition holds every write acknowledged before the call (see
// readBarrier), for a read of what it publishes without reading storage: its statistics.
func (p *Partition) ReadBarrier() error { return p.readBarrier() }

// readBarrier waits, on a replicated partition, until the replica has applied everything a
// linearizable read must see: the read index the group's leadership was confirmed at. A
// follower asks its leader; a replica that knows no leader refuses.
func (p *Partition) readBarrier() error { return p.barrier(false) }

// leaseBarrier is readBarrier on the leader only, which also confirms that the replica still
// led its group after the decisions it is about to answer.
func (p *Partition) leaseBarrier() error { return p.barrier(true) }

func (p *Partition) barrier(leaderOnly bool) error {
	_, err := p.confirmedIndex(leaderOnly)
	return err
}

// confirmedIndex is barrier, which also returns the read index the replica applied.
func (p *Partition) confirmedIndex(leaderOnly bool) (uint64, error) {
	l, ok := p.log.(*replicatedLog)
	if !ok {
		return 0, nil
	}
	readIndex := l.r.ReadIndex
	if leaderOnly {
		readIndex = l.r.LeaderReadIndex
	}
	index, err := readIndex()
	// A follower that knows no leader yet (it just started, or an election runs) waits a
	// little for one rather than refuse at once.
	for wait := time.Now().Add(leaderWait); err != nil && !leaderOnly && time.Now().Before(wait); {
		select {
		case <-p.closing:
			return 0, errClosed
		case <-time.After(10 * time.Millisecond):
		}
		index, err = readIndex()
	}
	if err != nil {
		return 0, ErrNotLeaseholder
	}
	err = p.awaitApplied(l, proposalTimeout, func(st *state) bool { return st.Applied >= index })
	if err == errBehind {
		return 0, fault.New(fault.Unavailable, "The replica did not catch up with its group in time; retry the request")
	}
	return index, err
}

// AppliedIndex is the index and term of the last log entry the partition applied, and the
// group's descriptor as of it.
func (p *Partition) AppliedIndex() (index, term uint64, group []byte) {
	st := p.published.Load()
	return st.Applied, st.AppliedTerm, st.Group
}

// Spans are the key spans that hold the partition's whole state.
func (p *Partition) Spans() []storage.Span {
	return storage.PartitionSpans(p.container, p.id, string(p.rng.Min), string(p.rng.Max))
}

// ApplyLog applies committed entries of the group's log, in order, and answers the requests
// that proposed them here. Entries refused by their checks (a stale lease, a split already
// committed, ...) write nothing, but their index is applied all the same. A split's commit
// is staged in a batch of its own, so that what it reads of storage includes every entry
// before it. An error that is not a refusal stops the replica.
func (p *Partition) ApplyLog(ents []LogEntry) error {
	l, _ := p.log.(*replicatedLog)
	a := p.newApplyBatch()
	type outcome struct {
		id  uint64
		err error
	}
	var outcomes []outcome
	var leases []uint64
	staged := 0
	flush := func() error {
		if err := a.commit(false); err != nil {
			return err
		}
		if l != nil {
			for _, o := range outcomes {
				l.resolve(o.id, o.err)
			}
			for _, e := range leases {
				l.leaseApplied(e)
			}
			l.mu.Lock()
			close(l.applied)
			l.applied = make(chan struct{})
			l.mu.Unlock()
		}
		outcomes, leases, staged = nil, nil, 0
		return nil
	}
	for _, le := range ents {
		var e *entry
		if le.Data != nil {
			var err error
			if e, err = decodeEntryBytes(le.Data); err != nil {
				a.abandon()
				return err
			}
			if e.kind == entrySplitCommit && staged > 0 {
				if err := flush(); err != nil {
					return err
				}
				a = p.newApplyBatch()
			}
		}
		staged++
		a.st.Applied, a.st.AppliedTerm = le.Index, le.Term
		if le.Group != nil {
			a.st.Group = le.Group
		}
		if e == nil {
			continue
		}
		err := a.stage(e)
		if err != nil && !isRefusal(err) {
			a.abandon()
			p.fail(err)
			return err
		}
		outcomes = append(outcomes, outcome{e.proposal, errors.Unwrap(err)})
		if err == nil && e.kind == entryLease {
			leases = append(leases, e.lease)
		}
	}
	return flush()
}
