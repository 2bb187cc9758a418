// Package engine is the account: the catalog of databases, containers, users and their
// permissions, the partitions of each container and the routing of every item to the
// partition that owns its effective partition key. It is the one entry point for the front
// ends (the Cosmos DB REST API and CQL): they hand it parsed requests, items as JSON or as
// values (document.Source), and get back results and *fault.Error failures, never storage
// errors.
//
// Every item operation goes through one pipeline (pipeline.go): route, admit (request units),
// apply on the partition, charge, record, and maybe split. A new kind of request joins it by
// building partition.Operations and calling execute, never by writing those steps again.
//
// Partitions split when they outgrow their size or throughput (split.go), or on demand
// (SplitPartition, for tests); Options.MinPartitions gives new containers more partitions from
// the start, as Cosmos gives a container whose throughput needs them.
//
// Expired items (ttl.go, reaper.go) and the items of a partition key being deleted
// (keydelete.go) are gone for reads at once and deleted in the background by the partition's
// leader, with what its budget spares.
//
// For the partition key advisor a container also keeps, in memory only, a small log of the
// query texts it recently ran (querylog.go), and can sample its items (sample.go).
//
// How the node holds its partitions is a holding (holding.go), the one place the code differs
// by it: direct, each partition its own log; or, with Options.Replicated, every partition a
// Raft group on the node's replication host (replicas.go), which opens and owns the replicas. With Options.Cluster the engine is
// one node of a cluster (cluster.go): its catalog is the cluster's, its partitions have replicas
// on other nodes, and writes run on the node that leads their partition (forward.go). What it
// asks of other nodes, and answers them, are Go values of package nodecall, which it hands to
// Cluster.Call and takes in ServeCall: how they travel (package nodemsg's framing, the
// cluster transport) is the wiring's, not the engine's; nodecalls.go turns the engine's own
// types into the calls' and back. A
// call on one logical partition (a read, a patch, a batch, a procedure, a triggered write, a
// page of the change feed) runs where callsAt says (calls.go): here, on this node's replica,
// or, for a partition this node holds no replica of, on a node that holds one (remote.go;
// package distribution picks it and asks the next when one does not answer), the one place
// a method's locality is chosen. A node splits a
// partition through its leader (clustersplit.go). The placement loop (placement.go) keeps each
// group it leads where package placement decides, from a view of the cluster and the load
// figures the nodes gather from each other (load.go). Once the cluster's version allows it, a
// partition's replicas share its request-unit budget, its leader dividing it between them
// (shares.go), and every node describes every partition from the figures it gathers from the
// others (figures.go); status.go describes the cluster for `partita cluster status`.
//
// It owns the catalog's records (kept in a catalog.Backend: the node's own, or the cluster's)
// and the rules for partition key definitions and throughput. It must never know about HTTP
// or wire formats.
package engine
