// Package placement decides where a cluster's replicas go: pure functions over a View of the
// cluster (its live nodes, which missing nodes are gone for good, the load each node carries)
// and one group's Raft status, answering with a Decision for that group's leader to carry out.
// Nothing here reads a clock, a network or a disk; the engine's placement loop gathers the
// view once a second, asks for each group it leads, and applies the answers through the
// replication host. Its decisions are tested as scenarios (testdata/, run by datadriven) over
// views written by hand, in the manner of PD's checkers over a mock cluster.
//
// # The rules
//
// Every partition has Policy.Replicas voters on as many live nodes that are not being
// drained, or (Replicas 0) one on every such node. A new container's groups start on the
// nodes Initial picks; afterwards each group's leader keeps its membership so by itself, one
// change at a time (Next):
//
//   - a live node without a replica of the group gets one (with Replicas, while the group
//     has fewer, on the least loaded node), added as a learner that receives a snapshot, and
//     promoted to a voter once it has caught up (within PromoteLag entries of the commit);
//   - a replica on a node being drained, on a store that is no longer its node's (the disk
//     was wiped: the replica lost its votes and its log), or on a node gone for good (missing
//     from the control plane for longer than the cluster's dead-after) whose replica the
//     leader no longer hears from, is removed, once the voters it leaves are a majority that
//     is live and that the leader hears from (Raft's RecentActive): no removal leaves a group
//     unable to make progress. When the replica to remove is the leader's own, the leadership
//     is handed away first;
//   - with Replicas, a group with one voter too many (a move's newcomer caught up) loses the
//     one on the busiest node, and in a node's turn (Turn) one replica moves from a group's
//     busiest node to the least busy one, when that evens out the nodes' load;
//   - a node that leads more than its share of the groups hands a leadership to the node that
//     leads fewest (LeaderTransfers).
//
// New replicas come before removals, so that a group replacing a lost replica never runs with
// fewer than it had; and a newcomer that has caught up is promoted in the same joint change
// that removes the voter it replaces, so that the group never runs with a voter too many, a
// dead one among them, where one more failure would leave it without a quorum for good.
//
// # Load
//
// A node's load is what the voters it holds weigh: one each, plus its partition's bytes and
// request units over the mean partition's (the engine's load figures). A pass keeps
// Policy.Load current with the changes it decides, so that the groups decided later in the
// same pass see them. A move must bring the two nodes closer by more than the replica weighs
// and a tenth, so that figures that wobble do not move a replica back and forth.
package placement
