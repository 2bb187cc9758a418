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
// envelope larger than a megabyte (a snapshot's sstables sent inline) goes in several frames.
// Sending never blocks the host: an envelope finds a queue per node, and is dropped when the
// queue is full, the node's address is not known, or its stream broke. Dropping is what Raft
// expects of a network: it sends again whatever a replica still needs. A broken stream is
// replaced at the next envelope, no sooner than 200 ms after it broke.
//
// Snapshots are streamed (snapstream.go) when Config.StreamSnapshots says so: each on a
// stream of its own (the service's Snapshot method), on a connection to the node kept for
// snapshots, so that heartbeats and appends never wait behind one. The stream carries the
// MsgSnap's envelope as its header, waits for the receiving host to check it (a refusal costs
// one round trip), then the sstables' bytes as the sender's host writes them, in chunks of at
// most a megabyte, and ends with the receiver's verdict. gRPC's flow control, with a fixed
// window of a megabyte per stream and connection, holds the sender back while the receiver is
// behind, so each end holds a few megabytes of a snapshot whatever its size; a node streams at
// most 4 snapshots and receives at most 8 at once. The hook is off (nil) until every node
// runs a release that receives streams: a node of the release before answers the method with
// Unimplemented, and then gets its snapshots inline for a minute whatever the hook says.
// Every node receives both ways.
//
// The wire format of an envelope (envelope.go) starts with its version, and so does a
// snapshot stream's header; a receiver refuses versions it does not know and closes the
// stream of a peer that sends malformed bytes.
//
// Every stream and call also carries the newest cluster version the sender's release knows,
// and the sender's node id (version.go): once the cluster's active version has passed what a
// node's release knows, Config.Admit refuses it, with gRPC's FailedPrecondition and a message
// that says why, and the refusing node logs it (once in a while per node).
package raftrpc
