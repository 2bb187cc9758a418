package clusterversion

import "fmt"

// Version is a cluster version. Versions only grow; each release knows those up to Latest.
type Version uint32

// The cluster versions, each with what it lets the cluster use.
const (
	// Base is the version of the releases that kept no version (up to 4a8e4d4): a node whose
	// record states no version runs one of them.
	Base Version = 1
	// V2 lets the nodes stream snapshots over a stream of their own (StreamedSnapshots), and
	// share a partition's request-unit budget between its replicas (PartitionBudgets); at V2
	// every node indexes id and _ts whatever the policy.
	V2 Version = 2
	// V3 lets the nodes send each other typed messages (package nodemsg) where they sent
	// JSON (NodeMessages), a partition's leader log a recheck of the entries of id and _ts
	// (SystemPathsRecheck), an entry the releases before do not know, and a container's
	// throughput be redistributed among its partitions (PartitionThroughput) and the items of
	// a partition key be deleted in the background (KeyDeletes), both of which the releases
	// before would drop from a container's record when they wrote it.
	V3 Version = 3

	// Latest is the newest version this release knows.
	Latest = V3
)

// Features, each the version that introduced it.
const (
	StreamedSnapshots   = V2
	PartitionBudgets    = V2
	NodeMessages        = V3
	SystemPathsRecheck  = V3
	PartitionThroughput = V3
	KeyDeletes          = V3
)

func (v Version) String() string { return fmt.Sprintf("v%d", uint32(v)) }

// Of is the version a node's record states: Base for a record that states none.
func Of(stated uint32) Version {
	if stated == 0 {
		return Base
	}
	return Version(stated)
}
