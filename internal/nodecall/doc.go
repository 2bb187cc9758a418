// Package nodecall is what one node of a cluster asks another, and what it answers, as Go
// values: the vocabulary the engine speaks to the ranges held on other nodes. The engine
// builds a Request, hands it to its cluster's Call, and reads the Answer; on the node asked,
// the engine serves the Request it is given and returns the Answer. Neither side sees bytes.
//
// How a Request travels is the business of package nodemsg, which the node's wiring (package
// server) calls: typed protobuf messages from cluster version v3 (clusterversion.NodeMessages),
// and before it the JSON of these types, which the releases before v3 send and read. The JSON
// tags below are therefore a format that is kept: a field is never renamed, and a field a
// previous release does not know is one it ignores.
//
// A Request is one of six kinds, told apart by which of its fields is set:
//
//   - a write: Ops on the logical partition EPK of a container, for its partition's leader
//     (with Admit false for a transaction's commit, already admitted where it ran);
//   - Split: split a partition at a key, for its leader;
//   - Call: a call on one logical partition that a node with no replica of its partition
//     delegates whole (item reads and writes, batches, procedures, change feed pages);
//   - Read: a batch of a partition's items for a query, a read feed or a scan;
//   - Figures: the asked node's replicas' load figures, for placement and metrics;
//   - Shares: a follower's ask for budget grants of the partitions the asked node leads.
//
// Answer carries every kind's answer; Err is the request's failure, in the one error
// vocabulary (package fault), and Retry and Moved say what the asking node may do next.
package nodecall
