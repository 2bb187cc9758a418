// Package replica wires a physical partition to the replication host: a partition as a
// replication.StateMachine. Neither package knows the other; whoever opens partitions as
// replicas (the engine, the replication tests' harness) returns Of(p) from its Opener.
package replica
