// Package replicationtest runs replicated partitions in one process, for tests: a Harness of
// nodes, each with its own Pebble on an in-memory file system that can lose power, its own
// replication host and its replicas of physical partitions (partition.Partition as the
// state machine, joined by package replica), over a Network that can cut, delay, drop and
// reorder what the hosts send, with a manual clock for Raft's ticks and the items' times.
//
// It is where replication's behaviour is tested deterministically: a test (or a datadriven
// scenario under testdata/scenarios, run by Interaction in the manner of etcd raft's
// interaction tests) bootstraps groups, ticks, writes through whichever replica holds a
// group's lease, cuts links, crashes, restarts and wipes nodes, changes membership and splits,
// then checks what each replica applied; the linearizability test records histories under
// random faults and checks them with porcupine. NewOverTransport runs the same harness over
// real transports (raftrpc on loopback TCP), and NewOnDisk keeps the nodes' stores in
// directories.
//
//	h, err := replicationtest.New(3, seed, log)
//	defer h.Close()
//	g := replicationtest.Group(0)
//	err = h.StartGroup(0, epk.All, 1, 2, 3)        // partition 0 on nodes 1-3; node 1 campaigns
//	leader := h.WaitLeader(g, 50)
//	res, err := h.Execute(g, time.Second, ops...) // on the leaseholder, wherever it is now
//	h.Net.Cut([]replication.NodeID{1}, []replication.NodeID{2, 3})
//	leader.Crash(0, seed)                          // then Restart, Wipe; h.Tick, h.Stabilize
package replicationtest
