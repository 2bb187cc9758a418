// Package replica wires a physical partition to the replication host: a partition as a
// replication.StateMachine. Neither package knows the other; whoever opens partitions as
// replicas (the engine, the replication tests' harness) returns Of(p) from its Opener.
//
// It is also the one home of how a partition is named as a group (group.go): a group's ID
// holds its container's number and its partition's, and its descriptor (Meta) says which
// range of which container to open. Both are kept in every replica's descriptor and in the
// control plane's records, so neither changes between releases.
package replica
