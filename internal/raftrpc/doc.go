// Package raftrpc carries the replication hosts' envelopes (Raft messages, snapshots,
// heartbeats and quiescence notices) between the nodes of a cluster, and the calls one node's
// engine makes to another's (forwarded writes, Call), over gRPC with mutual TLS from the
// cluster's secret (package nodetls).
//
// Each node runs one Transport: it is the host's replication.Transport, and it serves other
// nodes' streams.
//
//	t := raftrpc.New(raftrpc.Config{Node: id, TLS: tlsID, Resolve: addrOf, Deliver: host.Deliver})
//	go t.Serve(listener)
//	host, err := replication.New(replication.Config{Node: id, Transport: t, ...})
//
// A node sends to another over one client stream, which carries envelopes in order; an
// envelope larger than a megabyte (a snapshot's sstables) goes in several frames. Sending
// never blocks the host: an envelope finds a queue per node, and is dropped when the queue is
// full, the node's address is not known, or its stream broke. Dropping is what Raft expects
// of a network: it sends again whatever a replica still needs. A broken stream is replaced at
// the next envelope, no sooner than 200 ms after it broke.
//
// The wire format of an envelope (envelope.go) starts with its version; a receiver refuses
// versions it does not know and closes the stream of a peer that sends malformed bytes.
package raftrpc
