package cqlexec

import (
	"slices"
	"strconv"
	"testing"
)

// Each node of a cluster owns eight tokens, dealt out in turn around the ring: no token twice,
// and every node's slices spread over the whole ring.
func TestRingTokens(t *testing.T) {
	ids := []uint64{3, 17, 40}
	owner := map[int64]uint64{}
	for _, id := range ids {
		ts := ringTokens(ids, id)
		if len(ts) != 8 {
			t.Fatalf("node %d owns %d tokens", id, len(ts))
		}
		for _, b := range ts {
			v, err := strconv.ParseInt(string(b), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if _, dup := owner[v]; dup {
				t.Fatalf("token %d owned twice", v)
			}
			owner[v] = id
		}
	}
	var all []int64
	for v := range owner {
		all = append(all, v)
	}
	slices.Sort(all)
	for i, v := range all {
		if want := ids[i%len(ids)]; owner[v] != want {
			t.Fatalf("token %d (the %dth around the ring) is node %d's, want node %d's", v, i, owner[v], want)
		}
	}
	if all[0] > -(1<<62) || all[len(all)-1] < 1<<62 {
		t.Fatalf("the tokens span %d to %d, not the ring", all[0], all[len(all)-1])
	}
}
