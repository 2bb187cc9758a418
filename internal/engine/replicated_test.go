package engine

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// The engine's suite runs once, with each partition its own log (direct). What changes when
// every partition is a Raft group instead (Options.Replicated, the path a cluster's nodes
// take) is below the partition's log seam and in the engine's replicas (replicas.go): splits
// become replicated commands, a partition's log and state are a group's, a restart replays
// the group. TestReplicatedPartitions runs the engine's tests of those behaviours again over
// replicated partitions; replicas_test.go tests the replicas themselves, and the cluster's
// tests (cluster_test.go and the others that start a testCluster) replicate across nodes.

// replicatedSuite names the test whose subtests open their engines with Options.Replicated.
const replicatedSuite = "TestReplicatedPartitions"

// replicated reports whether t runs under TestReplicatedPartitions.
func replicated(t testing.TB) bool { return strings.HasPrefix(t.Name(), replicatedSuite+"/") }

func TestReplicatedPartitions(t *testing.T) {
	t.Run("Replicated", func(t *testing.T) {
		if e, _ := newContainer(t, Options{}, ContainerSpec{}); e.replicas == nil {
			t.Fatal("a test under TestReplicatedPartitions opened an engine without replicated partitions")
		}
	})
	for _, test := range []func(*testing.T){
		TestScenarios,
		TestItemLifecycle,
		TestItemsLandInTheirPartition,
		TestConcurrentWriters,
		TestReadsNeverGoBackInTime,
		TestSplitWhileWriting,
		TestSplitKeepsIndexExactUnderWrites,
		TestThroughputSplitOfAVersion1Container,
		TestThrottling,
		TestTriggersAndUDFs,
		TestProcedureSerializesItsLogicalPartitionOnly,
		TestChangeFeedPurgeBesideWrites,
		TestChangeFeedAfterLargestLSN,
		TestTTLSurvivesRestart,
		TestVectorIndexPowerLoss,
	} {
		name := runtime.FuncForPC(reflect.ValueOf(test).Pointer()).Name()
		t.Run(strings.TrimPrefix(name[strings.LastIndex(name, ".")+1:], "Test"), test)
	}
}
