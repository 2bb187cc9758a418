package engine

import (
	"strings"
	"testing"
)

// TestMinPartitionsBounds: a minimum outside 0..MaxMinPartitions is refused when the engine
// opens, rather than creating containers with a surprising number of partitions.
func TestMinPartitionsBounds(t *testing.T) {
	for _, n := range []int{-1, MaxMinPartitions + 1} {
		e, err := Open(Options{Dir: t.TempDir(), MinPartitions: n})
		if err == nil {
			e.Close()
			t.Fatalf("MinPartitions %d: opened", n)
		}
		if !strings.Contains(err.Error(), "from 1 to 64") {
			t.Errorf("MinPartitions %d: %v", n, err)
		}
	}
	e := openEngine(t, t.TempDir(), Options{MinPartitions: MaxMinPartitions})
	defer e.Close()
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	info, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Partitions) != MaxMinPartitions {
		t.Fatalf("%d partitions, want %d", len(info.Partitions), MaxMinPartitions)
	}
}
