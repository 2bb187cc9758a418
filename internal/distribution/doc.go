// Package distribution reaches the partitions a node of a cluster does not hold, or does not
// lead: it knows where a partition's replicas are, and how to ask them.
//
// A cluster places each partition's replicas on some of its nodes (the cluster's
// --replicas), so most nodes hold no replica of most partitions, and a node that holds one
// leads it only if its replica won the group's election. What a request asks of a partition
// is then done by another node: a write by the partition's leader, which admits, applies and
// charges it; a read, a delegated call or a page of a scan by any node that holds a replica.
// The engine decides what to ask (package nodecall's values); this package decides whom, and
// what to do when the answer does not come:
//
//   - Directory: where a group's replicas are, as its leader recorded them (GroupMap: the
//     control plane's records, which the leader keeps current), cached until a node it names
//     no longer holds the group. A node asks the record's leader first, then its other voters.
//   - Asker: asks the holders of a range in turn, until one answers or Timeout passes. A
//     holder that no longer holds the range (Moved), or that could not be reached (ErrNotSent),
//     is passed over; after a round with no answer the caller's records are read again and,
//     after Backoff, asked again. A request that may have been applied where its answer was
//     lost (a write, a delegated call that writes) is not sent again: its outcome is unknown
//     (partition.ErrAmbiguous), and saying so is the only honest answer. A read that got no
//     answer is asked of the next holder.
//
// Time is a Clock, the real one unless a test gives a manual one: every retry decision in
// this package can be driven deterministically (testdata/ask), where the same behaviour
// through real nodes takes seconds of real time and a loaded machine's luck.
//
// The package knows nothing of the engine's containers or partitions, nor of how a request
// travels (package nodemsg's framing and the cluster transport are the node's wiring's): the
// engine hands it group IDs, Go values and a function that calls another node.
package distribution
