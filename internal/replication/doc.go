// Package replication runs replicated state machines: a node's replicas of many Raft groups
// (go.etcd.io/raft/v3), in the multi-raft way of CockroachDB and TiKV. A Host is the node's
// side of all of them: one RawNode per group, one Pebble (the node's storage.DB) for every
// group's log, hard state and truncated state, one transport, one clock. What a group
// replicates is a StateMachine; Partita's is a physical partition, but this package knows
// nothing of partitions, and a partition nothing of it (a small adapter wires the two).
//
// # Running a host
//
//	h, err := replication.New(replication.Config{
//		Node: 1, DB: db, Transport: t, // t delivers what h sends to the other hosts' Deliver
//		Open: func(g replication.GroupID, meta []byte, hd *replication.Handle) (replication.StateMachine, error) {
//			return openMyStateMachine(meta, hd) // hd proposes and reads for it
//		},
//	})
//	h.Start()      // or drive it by hand: Tick, and Process until it reports no work
//	defer h.Close()
//
// New opens every replica the store holds, and each state machine through Open. A new group
// is made by Bootstrap on each of its first members (then one campaigns, or elections start
// with the ticks); a replica on a node that did not have one comes from a membership change
// and a snapshot; a split makes two groups of one (see Splits).
//
// # The Ready loop
//
// Process first runs what other goroutines handed over (proposals, read requests, messages
// from Deliver, ticks), then handles the Ready of every group that has one, as the raft
// package documents, in this order:
//
//  1. persist: a snapshot handed over is ingested (see Snapshots); then the new entries and
//     hard states of every group go into one batch, synced once if any must be: one fsync
//     makes a round's appends of all groups durable, however many there are;
//  2. send the messages (only after they are durable: nothing is acknowledged before it is);
//  3. apply the committed entries (configuration changes to Raft first, then all of them to
//     the state machine, which records what it applied in the same unsynced batch: the log is
//     durable, and a crash replays from the state machine's applied index);
//  4. Advance. A single voter commits its own entries only at Advance (since etcd's fix of its
//     durability bug), so the next round applies what this one appended; rounds pipeline.
//
// # Proposing and reading
//
// A state machine that leads its group (StateMachine.Leader tells it) proposes through its
// Handle: Propose hands entries to Raft and returns; entries proposed together join the same
// round, so hand over a whole group of decisions at once (proposed one call at a time, each
// would wait for the round before to finish its sync). The state machine learns the fate of
// its proposal when it applies it, or applies a later entry that shows it was lost (Partita's
// partitions carry a lease epoch in every entry for that). A follower's Propose is refused
// (ErrNotLeader): proposals are not forwarded, so the replica that decides is the one that
// leads. Handle.ReadIndex returns the index a linearizable read must wait for, after a round
// of heartbeats confirms the leadership (Raft's ReadOnlySafe).
//
// # Snapshots
//
// A follower whose leader's log no longer holds what it needs (a new replica, a wiped one, one
// far behind: logs are truncated once every follower that is not far behind has an entry)
// receives a snapshot: sstables of the state machine's key spans, written from a Pebble
// snapshot taken where the state machine had applied. Raft's MsgSnap carries only the
// snapshot's index, term, configuration and the state machine's meta; the sstables go one of
// two ways (snapshot.go):
//
//   - streamed, when the transport streams to the receiving node (SnapshotStreamer; raftrpc's
//     Config.StreamSnapshots, on once every node of the cluster runs a release that receives
//     streams): the sender writes sstables of at most 32 MB as it iterates, and the transport
//     carries their bytes in chunks on a stream of its own, with flow control holding the
//     sender back while the receiver is behind; the receiver checks the MsgSnap first (the
//     stream's header), then appends the chunks to files in a directory of its store
//     (storage.SSTDir). Each end holds a few megabytes of it, whatever the replica's size,
//     and the envelopes between the two nodes do not wait behind it (snapstream.go);
//   - inline, one sstable per span built in memory and sent inside the MsgSnap's envelope:
//     what every release understands, and what a node of the release before receives.
//
// Once all of it arrived, the receiver steps the MsgSnap; when Raft hands the snapshot over
// it ingests the sstables, with one more that replaces its Raft state, in one atomic
// ingestion, and reopens the state machine on them. Nothing is ever half-applied: a stream
// that breaks, a sender or receiver that stops, a snapshot refused or made stale, removes
// the files received, and the sender reports the snapshot failed to Raft, which sends it
// again later; files a process that died left are removed when a host opens the store (New).
// A snapshot that overlaps another replica the node holds is refused (it comes again later).
//
// # Membership
//
// ChangeMembers adds a replica as a learner, promotes it to voter, removes a replica, or does
// several of those at once through a joint configuration (ConfChangeV2, left automatically).
// Replica ids are never reused; a replica removed from a node leaves a tombstone so that no
// late message creates it again, and a node whose disk was wiped comes back with another
// store identity, so that no message meant for its old replicas reaches its new ones. A
// replica removed while its node was away never applies its removal; when the group adds a
// replica on that store again, the message to the new (higher) id replaces the old one.
// Bootstrap refuses a group the node held before (ErrRemoved): only a leader brings it back.
// TransferLeader moves the leadership.
//
// # Splits
//
// A state machine that splits does so while it applies one entry, at the same index on every
// replica: its Apply calls SplitGroup, which writes the children's first Raft state in the
// same batch, and the host opens the children once Apply returns. The replica that led the
// parent campaigns in the children at once; a replica that has not applied the split yet
// keeps their vote requests for a few ticks, until it has. A replica that missed the split
// for good (cut off while the others split) is dropped for the children's snapshots.
//
// # Quiescence
//
// A leader that finds nothing to do for QuiesceTicks ticks (every entry applied everywhere,
// nothing in flight) tells its followers, and they all stop ticking the group: thousands of
// idle groups cost nothing. The first proposal or message wakes them. Hosts exchange one
// heartbeat per pair of nodes per tick, so that the followers of a quiesced group whose
// leader's node went silent wake and elect another.
package replication
