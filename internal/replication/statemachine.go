package replication

import (
	"errors"

	"github.com/partita-db/partita/internal/storage"
)

// StateMachine is what a group replicates. The host calls its methods from one goroutine at a
// time, the one that drives the group.
type StateMachine interface {
	// Applied is the index and term of the last entry the state machine applied, and the
	// group's descriptor as of it (nil for a state machine that never applied one), as it
	// holds them in storage: a restarted replica starts from them, and the log replays what
	// follows.
	Applied() (index, term uint64, desc []byte)
	// Apply applies committed entries, in order. Each is applied once, and what it applied is
	// recorded with its index in the same batch, which need not be synced: the log is, and
	// replays what a crash lost. An error stops the replica: it applies nothing more.
	Apply(ents []Committed) error
	// Spans are the key spans that hold the state machine's whole state, its record of what it
	// applied included: a snapshot is what they hold.
	Spans() []storage.Span
	// Leader tells the state machine that its replica leads the group in term, or no longer
	// leads it. A leader's state machine may propose (Handle.Propose) and serve reads.
	Leader(leading bool, term uint64)
	// Close releases the state machine when its replica split or the host stops.
	Close()
	// Discard releases the state machine when the host is about to delete its state (the
	// replica was removed) or replace it (a snapshot): from then on its reads must refuse
	// rather than look at storage, which may no longer hold what they would read.
	Discard()
}

// Committed is one committed entry, as the state machine applies it.
type Committed struct {
	Index, Term uint64
	// Data is a proposal's data; nil for the empty entry a new leader appends and for a
	// configuration change.
	Data []byte
	// Desc, after a configuration change, is the group's new descriptor, for the state machine
	// to keep with its state; nil otherwise.
	Desc []byte
}

// Opener opens the state machine of a replica that this node holds: at start-up for every
// replica it held, for a group it bootstraps or a split's children, and for a replica created
// by a snapshot. meta is what the replica was created with (Bootstrap's, a split's child's, or
// the snapshot sender's), opaque to the host. h is the replica's handle, through which the
// state machine proposes and reads.
type Opener func(g GroupID, meta []byte, h *Handle) (StateMachine, error)

// ErrGone is what an Opener returns, at start-up, for a replica whose state machine no longer
// exists (its owner deleted it, or stopped before it finished creating it): the host deletes
// the replica's Raft state and leaves a tombstone, instead of failing to start.
var ErrGone = errors.New("replication: the replica's state machine is gone")
