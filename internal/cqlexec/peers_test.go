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

// The ring dealt by leadership: each arc goes to its leader in most tables (the lower id among
// as many), a node's runs of arcs end at its tokens, an arc without a live leader joins the
// next, and a node that leads nothing owns one token only.
func TestDealRing(t *testing.T) {
	const max = 1<<63 - 1
	tables := [][]arc{
		{{end: -100, leader: 1}, {end: 0, leader: 2}, {end: 100, leader: 2}, {end: max, leader: 1}},
		{{end: -100, leader: 2}, {end: 0, leader: 2}, {end: max, leader: 3}},
		{{end: -50, leader: 9}, {end: max, leader: 3}}, // 9 is not live
	}
	got, ok := dealRing(tables, []uint64{1, 2, 3, 4})
	if !ok {
		t.Fatal("no ring")
	}
	// Arcs: ..-100: 1 and 2 (a tie: 1); -99..-50: 2, 2 (9 does not count); -49..0: 2, 2, 3;
	// 1..100: 2, 3, 3; 101..max: 1, 3, 3. Node 4 leads nothing.
	want := map[uint64][]string{1: {"-100"}, 2: {"0"}, 3: {strconv.FormatInt(max, 10)}, 4: {strconv.FormatInt(-max, 10)}}
	for id, ts := range want {
		var g []string
		for _, b := range got[id] {
			g = append(g, string(b))
		}
		if !slices.Equal(g, ts) {
			t.Errorf("node %d owns %v, want %v", id, g, ts)
		}
	}
	if _, ok := dealRing([][]arc{{{end: max, leader: 9}}}, []uint64{1, 2}); ok {
		t.Error("a ring from leaders none of which is live")
	}
	// One partition: its leader owns the ring but for the lowest tokens, one per other node.
	got, _ = dealRing([][]arc{{{end: max, leader: 2}}}, []uint64{1, 2, 3})
	if len(got[1]) != 1 || string(got[1][0]) != strconv.FormatInt(-max, 10) || len(got[3]) != 1 || string(got[3][0]) != strconv.FormatInt(1-max, 10) {
		t.Errorf("one partition led by node 2: %v", got)
	}
}
