package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/partita-db/partita/internal/fault"
)

// An indexing policy replaced through one node of a cluster: every node follows it for its
// writes and reports it, every partition records it and rebuilds its index, and queries on
// every node answer as a full scan would, before and after writes made through the others.
func TestClusterIndexingPolicy(t *testing.T) {
	tc := startTestCluster(t, 3)
	tc.createContainer(json.RawMessage(`{"indexingMode":"consistent","includedPaths":[{"path":"/pk/?"}],"excludedPaths":[{"path":"/*"}]}`))
	create := func(via, i int) {
		t.Helper()
		c, err := tc.node(via).Container("db", "c")
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, fmt.Sprint("create ", i), func() error {
			_, err := c.CreateItem(item(fmt.Sprint(i), fmt.Sprint("k", i%9), fmt.Sprintf(`,"n":%d`, i%10)), ItemOptions{})
			if errors.Is(err, fault.Conflict) {
				return nil
			}
			return err
		})
	}
	for i := range 300 {
		create(i%3+1, i)
	}
	policy := json.RawMessage(`{"indexingMode":"consistent","includedPaths":[{"path":"/*"}],"excludedPaths":[]}`)
	info, err := tc.node(3).ReplaceContainer("db", "c", ContainerReplace{Indexing: policy})
	if err != nil {
		t.Fatal(err)
	}
	if string(info.Indexing) != string(policy) {
		t.Fatalf("the answer's policy is %s", info.Indexing)
	}
	for i := 300; i < 360; i++ {
		create(i%3+1, i)
	}
	eventually(t, "every node rebuilt its index", func() error {
		for id := 1; id <= 3; id++ {
			info, err := tc.node(id).ContainerInfo("db", "c")
			if err != nil {
				return err
			}
			if string(info.Indexing) != string(policy) || info.IndexProgress != 100 {
				return fmt.Errorf("node %d: policy %s, %d%% indexed", id, info.Indexing, info.IndexProgress)
			}
		}
		return nil
	})
	for id := 1; id <= 3; id++ {
		c, _ := tc.node(id).Container("db", "c")
		for _, p := range c.routes.Load().parts {
			if !p.Policy().Equal(c.policy()) {
				t.Fatalf("node %d: partition %d follows %s", id, p.ID(), p.PolicyJSON())
			}
		}
		if got := itemCount(t, c, "SELECT VALUE COUNT(1) FROM c WHERE c.n = 3"); got != "36" {
			t.Fatalf("node %d counts %s items with n = 3, want 36", id, got)
		}
	}
}
