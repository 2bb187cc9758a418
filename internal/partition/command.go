package partition

import (
	"encoding/json"

	"github.com/partita-db/partita/internal/epk"
)

// The log of a partition is a sequence of entries, each fully decided before it is appended:
// applying one reads nothing that every replica does not hold alike, so replicas that apply
// the same entries in the same order hold the same bytes. Most entries are Commands (item
// writes); the others are the partition's own steps that change its state: a lease, a policy
// change, a step of an index rebuild, a purge of old changes, and the three steps of a split.
// Each is decided on the partition's writer against the state as of every entry applied so
// far, and carries the lease it was decided under, so that an entry decided by a writer that
// lost its lease meanwhile is refused where it is applied (replicated.go).
//
// On a single node the log is the batch that applies them (locallog.go); a replicated
// partition appends the encoded entries (codec.go) to its Raft group's log and applies them
// once committed (replicated.go).

// entryKind is what an entry does.
type entryKind uint8

const (
	entryWrite       entryKind = iota + 1 // a Command
	entryLease                            // a replica's writer takes the lease
	entryPolicy                           // the index follows another indexing policy
	entryReindex                          // a step of an index rebuild
	entryPurge                            // retention removes changes that hold no current version
	entrySplitStart                       // a split begins: the children's entries are built
	entrySplitCommit                      // the split ends: the children own the items
	entrySplitAbort                       // the split is abandoned
	entryVectorBuild                      // a step of a vector index's graph build
	entryRecheck                          // every item's entries of the system paths are rebuilt once more
	entryKinds                            // one past the last kind
)

var entryKindNames = [entryKinds]string{"", "write", "lease", "policy", "reindex", "purge", "split-start", "split-commit", "split-abort", "vector-build", "recheck"}

func (k entryKind) String() string {
	if k < entryKinds {
		return entryKindNames[k]
	}
	return "unknown"
}

// entry is one decided step of a partition's log; exactly the field of its kind is set.
type entry struct {
	kind entryKind
	// epoch is the lease the entry was decided under (state.Epoch); 0 on a single node.
	epoch uint64
	// proposal names the entry among the proposals of the replica that proposed it, so that
	// the replica finds whom to answer when it applies it; 0 on a single node.
	proposal uint64
	cmd      *Command
	lease    uint64 // entryLease: the epoch the lease starts
	policy   *policyChange
	reindex  *reindexStep
	purge    *purgeStep
	split    *splitPlan // entrySplitStart
	build    *vectorBuildStep
	// sync is whether a single node must sync the entry before it answers; steps that are
	// redone after a crash (index rebuild, purge) need not. Not part of the encoding: a
	// replicated log syncs every entry.
	sync bool
}

// A Command is one atomic change to a partition's items, with every choice already made: the
// LSN, the time, the stored bytes, the index and unique key entries, the statistics.
type Command struct {
	LSN     uint64
	TS      int64 // when it was decided, in Unix seconds: the items' _ts and the log's time
	Changes []Change
	// Images is set when the log keeps the versions that changes replace (the all-versions
	// change feed): each change's PrevJSON is written as its previous entry's image.
	Images bool
	// After is the partition's LSN and totals once the command is applied. The writer
	// persists it once per group of commands, as of the group's last.
	After state
}

// A Change writes or deletes one item and records the new statistics of its logical partition.
type Change struct {
	EPK string
	ID  string
	// Renamed is the id the item had before this change, when a replace gave it a new one
	// (ID); empty otherwise. The item keeps its document and creation sequence: only its item
	// key moves.
	Renamed string
	// Seq is the item's creation sequence, the last part of its document's key.
	Seq uint64
	// New is set when the change creates the item: its item and order keys are written.
	New    bool
	Delete bool
	// Value is the stored value (see value.go); nil when Delete.
	Value []byte
	// Logical is the item's logical partition's statistics after the change; zero items
	// deletes the record.
	Logical counts
	// Prev names the log entry of the version the change replaces or deletes (zero for a
	// create), and PrevJSON is that version, written as the entry's image when the command
	// keeps images (see changelog.go).
	Prev     logPos
	PrevJSON []byte
	// dropPrev is set when the change is staged if Prev is at or before the purge point: that
	// entry was kept past retention only while its version was current, and the change removes
	// it (changelog.go). A split's children replay the removal; not part of what is proposed.
	dropPrev bool
	// IndexDel and IndexAdd are the index terms the change removes and adds.
	IndexDel, IndexAdd [][]byte
	// terms are all the index terms of Value, for later commands of the group that replace
	// it again; not part of what is applied.
	terms [][]byte
	// Expired marks a Delete made because the item's time to live ran out; its log entry
	// says so (the change feed's timeToLiveExpired).
	Expired bool
	// UniqueDel and UniqueAdd are the unique key entries the change removes and adds (none
	// in a container without unique keys), and uniq all the entries of Value, like terms.
	UniqueDel, UniqueAdd [][]byte
	uniq                 [][]byte
}

// policyChange makes the index follow another policy (reindex.go).
type policyChange struct {
	Policy json.RawMessage // the policy, as the container's record holds it
}

// reindexStep rebuilds the index entries of some items (reindex.go).
type reindexStep struct {
	Items []reindexed
	// Cursor and Done are the rebuild's progress after the step; End says it is complete.
	Cursor uint64
	Done   int64
	End    bool
}

// reindexed is one item a step rebuilds, and the entries to change.
type reindexed struct {
	EPK      string
	Seq      uint64
	Del, Add [][]byte
}

// vectorBuildStep inserts items into the graph of a vector index being built (vectorbuild.go).
type vectorBuildStep struct {
	Path  string // the index's path, in term-path form
	Items []builtVector
	// Started and From are the build as the step found it: whether its record existed, and
	// its cursor. A step applied to another state (one the index was dropped and added again
	// since, say) does nothing.
	Started bool
	From    uint64
	// Cursor and Done are the build's progress after the step; End says it is complete.
	Cursor uint64
	Done   int64
	End    bool
}

// builtVector is an item's vector, as its current version held it when the step was decided.
type builtVector struct {
	Seq uint64
	Vec []float32
}

// purgeStep removes changes from the log (changelog.go).
type purgeStep struct {
	// Through is the LSN up to which the log is purged once the step is applied.
	Through uint64
	Refs    []logRef
}

// logRef names a log entry by its position, with its item's EPK, under which the entry's
// image is kept.
type logRef struct {
	EPK string
	logPos
}

// Child describes one of the two partitions a split makes.
type Child struct {
	ID    uint32
	Range epk.Range
}
