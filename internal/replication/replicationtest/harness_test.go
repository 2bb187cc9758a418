package replicationtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
)

func create(t *testing.T, pk, id string, n int) partition.Operation {
	t.Helper()
	item, key, err := document.Parse([]byte(fmt.Sprintf(`{"id":%q,"pk":%q,"n":%d}`, id, pk, n)), [][]string{{"pk"}})
	if err != nil {
		t.Fatal(err)
	}
	return partition.Operation{Kind: partition.Create, EPK: epk.SchemeV2.Hash(key), ID: id, Item: item}
}

func TestThreeReplicas(t *testing.T) {
	h, err := New(3, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Bootstrap(1, epk.All, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	h.Node(1).Host.Campaign(Group(1))
	h.Stabilize()
	for i := range 20 {
		res, err := h.Execute(Group(1), 5*time.Second, create(t, fmt.Sprint("k", i%4), fmt.Sprint("i", i), i))
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		_ = res
	}
	h.Tick(3)
	h.Stabilize()
	var first uint64
	for _, n := range h.Nodes() {
		hash, applied, ok, err := n.StateHash(Group(1))
		if err != nil || !ok {
			t.Fatalf("node %d: %v %v", n.ID, ok, err)
		}
		t.Logf("node %d: applied %d hash %x", n.ID, applied, hash)
		if first == 0 {
			first = hash
		} else if hash != first {
			t.Errorf("node %d's state differs", n.ID)
		}
	}
}
