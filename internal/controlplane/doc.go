// Package controlplane runs a cluster's control plane: an etcd embedded in the nodes named by
// the join list, which holds the cluster's membership and each node's liveness.
//
// Every node is started with the same join list, the cluster addresses of the nodes that
// found the cluster (three or five). A node whose own address is on the list runs a member of
// the embedded etcd; the members form the etcd cluster as soon as a majority of them is up,
// with no separate init step. Every node, member or not, is a client of it.
//
//	cp, err := controlplane.Start(ctx, controlplane.Config{Dir: dataDir + "/control", Addr: "127.0.0.1:7001",
//		Join: []string{"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003"}, TLS: tlsID})
//	err = cp.Register(ctx, controlplane.Node{Addr: "127.0.0.1:7001", API: "127.0.0.1:8081"})
//	nodes, err := cp.Nodes(ctx) // the live ones
//
// Ports: a node's cluster address (host:port) is its replication transport's; its etcd
// member, if it runs one, listens for peers on port+1 and for clients on port+2. Both speak
// mutual TLS with the cluster's authority (package nodetls): a process without the cluster's
// secret can neither join the etcd cluster nor read or write it.
//
// Liveness is a lease: a registered node's record lives as long as the node keeps the lease
// alive (every LeaseTTL/3), and disappears LeaseTTL after it stops. A lease that lapses while
// the node runs (the control plane had no leader, the node was paused or cut off) is replaced:
// the node registers again by itself, for as long as it runs (registration.go; Registered
// tells whether it is registered now). Every node that ever registered is also kept in a
// directory without leases (Members), by which peers address a node that is not live.
//
// A founding node that lost its member's data replaces its etcd member with a new one at the
// same address (member.go), as etcd's runbook replaces a failed member; it starts no member
// before another founding node tells it whether the cluster formed (Config.HasData and the
// members' own views), since a member started as the one it was, without its log and votes,
// would break the control plane's Raft. The cluster's active version (package clusterversion)
// is kept here too (ClusterVersion, RaiseClusterVersion), with the version each node's record
// states.
//
// This package must never decide what a node's absence means for the data: it says who is
// live, and the engine's placement decides (with what Raft itself knows) what to do about it.
package controlplane
