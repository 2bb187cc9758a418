package replicationtest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replication"
)

func create(t *testing.T, pk, id string, n int) partition.Operation {
	t.Helper()
	item, key, err := document.Parse([]byte(fmt.Sprintf(`{"id":%q,"pk":%q,"n":%d}`, id, pk, n)), [][]string{{"pk"}})
	if err != nil {
		t.Fatal(err)
	}
	return partition.Operation{Kind: partition.Create, EPK: epk.SchemeV2.Hash(key), ID: id, Item: item}
}

// startCluster starts a harness of n nodes, closed when the test ends, with group 1 over the
// whole EPK space on nodes 1 to 3, led by node 1.
func startCluster(t *testing.T, n int, seed uint64) *Harness {
	t.Helper()
	h, err := New(n, seed, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	if err := h.StartGroup(1, epk.All, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	h.Stabilize()
	return h
}

func TestThreeReplicas(t *testing.T) {
	h := startCluster(t, 3, 1)
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

// checkAgreement stabilizes the cluster and checks that every replica of g holds the same
// state at the same applied index.
func checkAgreement(t *testing.T, h *Harness, g uint32) {
	t.Helper()
	h.Tick(3)
	h.Stabilize()
	hashes := map[uint64]uint64{}
	for _, n := range h.Nodes() {
		hash, applied, ok, err := n.StateHash(Group(g))
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			continue
		}
		if prev, seen := hashes[applied]; seen && prev != hash {
			t.Fatalf("node %d's replica of group %d differs from another's at applied index %d", n.ID, g, applied)
		}
		hashes[applied] = hash
		t.Logf("node %d: group %d applied %d hash %x", n.ID, g, applied, hash)
	}
	if len(hashes) != 1 {
		t.Fatalf("the replicas of group %d applied different indexes after stabilizing: %v", g, hashes)
	}
}

func read(t *testing.T, h *Harness, g uint32, pk, id string) (partition.Doc, error) {
	t.Helper()
	e := epk.SchemeV2.Hash(epk.Key{epk.String(pk)})
	deadline := time.Now().Add(5 * time.Second)
	for {
		if n := h.Leader(Group(g)); n != nil {
			if p := n.Replica(Group(g)); p != nil {
				d, err := p.Read(e, id, nil)
				if err == nil || !retryable(err) {
					return d, err
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no leader served the read of %s/%s", pk, id)
		}
		h.Tick(1)
	}
}

func TestLeaderPowerLoss(t *testing.T) {
	h := startCluster(t, 3, 2)
	for i := range 10 {
		if _, err := h.Execute(Group(1), 5*time.Second, create(t, "a", fmt.Sprint("i", i), i)); err != nil {
			t.Fatal(err)
		}
	}
	leader := h.Leader(Group(1))
	leader.Crash(0, 1)
	if l := h.WaitLeader(Group(1), 200); l == nil || l == leader { // the others elect another
		t.Fatalf("no new leader: %v", l)
	}
	for i := 10; i < 20; i++ {
		if _, err := h.Execute(Group(1), 5*time.Second, create(t, "a", fmt.Sprint("i", i), i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := leader.Restart(); err != nil {
		t.Fatal(err)
	}
	checkAgreement(t, h, 1)
	for i := range 20 {
		if _, err := read(t, h, 1, "a", fmt.Sprint("i", i)); err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
	}
}

// changeMembers runs a membership change on g's leader.
func changeMembers(t *testing.T, h *Harness, g uint32, changes ...replication.Change) []replication.Member {
	t.Helper()
	for range 50 {
		l := h.Leader(Group(g))
		if l == nil {
			h.Tick(1)
			continue
		}
		added, err := l.Host.ChangeMembers(Group(g), changes)
		if err == nil {
			return added
		}
		if !errors.Is(err, replication.ErrNotLeader) {
			t.Fatalf("changing group %d's members: %v", g, err)
		}
		h.Tick(1)
	}
	t.Fatalf("no leader of group %d took the change", g)
	return nil
}

func TestSnapshotToNewReplicaAndWipedReplica(t *testing.T) {
	h := startCluster(t, 4, 3)
	for i := range 30 {
		if _, err := h.Execute(Group(1), 5*time.Second, create(t, fmt.Sprint("k", i%5), fmt.Sprint("i", i), i)); err != nil {
			t.Fatal(err)
		}
	}
	// A learner on node 4 gets the state by snapshot, then votes.
	added := changeMembers(t, h, 1, replication.Change{Kind: replication.AddLearner, Node: 4, Store: h.Node(4).Member().Store})
	h.Tick(3)
	checkAgreement(t, h, 1)
	changeMembers(t, h, 1, replication.Change{Kind: replication.AddVoter, Replica: added[0].Replica})
	// Node 3 loses its disk: its replica is replaced by a new one, which gets a snapshot.
	if err := h.Node(3).Wipe(); err != nil {
		t.Fatal(err)
	}
	for i := 30; i < 40; i++ {
		if _, err := h.Execute(Group(1), 5*time.Second, create(t, fmt.Sprint("k", i%5), fmt.Sprint("i", i), i)); err != nil {
			t.Fatal(err)
		}
	}
	added = changeMembers(t, h, 1, replication.Change{Kind: replication.Remove, Replica: 3},
		replication.Change{Kind: replication.AddLearner, Node: 3, Store: h.Node(3).Member().Store})
	changeMembers(t, h, 1, replication.Change{Kind: replication.AddVoter, Replica: added[0].Replica})
	checkAgreement(t, h, 1)
	for _, n := range h.Nodes() {
		if n.Replica(Group(1)) == nil {
			t.Fatalf("node %d holds no replica", n.ID)
		}
	}
	for i := range 40 {
		if _, err := read(t, h, 1, fmt.Sprint("k", i%5), fmt.Sprint("i", i)); err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
	}
}

// owner is the group among gs whose range holds pk's EPK.
func owner(h *Harness, pk string, gs ...uint32) uint32 {
	e := epk.SchemeV2.Hash(epk.Key{epk.String(pk)})
	for _, g := range gs {
		for _, n := range h.Nodes() {
			if p := n.Replica(Group(g)); p != nil && p.Range().Contains(e) {
				return g
			}
		}
	}
	return 0
}

func TestSplitThenMoveAChild(t *testing.T) {
	h := startCluster(t, 4, 4)
	const items = 60
	for i := range items {
		if _, err := h.Execute(Group(1), 5*time.Second, create(t, fmt.Sprint("k", i%12), fmt.Sprint("i", i), i)); err != nil {
			t.Fatal(err)
		}
	}
	p := h.Leader(Group(1)).Replica(Group(1))
	at, ok, err := p.SplitPoint()
	if err != nil || !ok {
		t.Fatalf("split point: %v %v", ok, err)
	}
	s, err := p.StartSplit(at, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Writes go on while the children are built.
	for i := items; i < items+10; i++ {
		if _, err := h.Execute(Group(1), 5*time.Second, create(t, fmt.Sprint("k", i%12), fmt.Sprint("i", i), i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Backfill(); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(nil); err != nil {
		t.Fatal(err)
	}
	h.Stabilize()
	checkAgreement(t, h, 2)
	checkAgreement(t, h, 3)
	// Move group 3's replica from node 3 to node 4.
	added := changeMembers(t, h, 3, replication.Change{Kind: replication.AddLearner, Node: 4, Store: h.Node(4).Member().Store})
	changeMembers(t, h, 3, replication.Change{Kind: replication.AddVoter, Replica: added[0].Replica},
		replication.Change{Kind: replication.Remove, Replica: 3})
	checkAgreement(t, h, 3)
	if h.Node(3).Replica(Group(3)) != nil || h.Node(4).Replica(Group(3)) == nil {
		t.Fatal("group 3's replica did not move from node 3 to node 4")
	}
	for i := range items + 10 {
		pk := fmt.Sprint("k", i%12)
		if _, err := read(t, h, owner(h, pk, 2, 3), pk, fmt.Sprint("i", i)); err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
	}
	// The moved replica's data is gone from node 3.
	if hash, _, ok, _ := h.Node(3).StateHash(Group(3)); ok {
		t.Fatalf("node 3 still holds group 3: %x", hash)
	}
}

func TestTransferLeaderAndQuiesce(t *testing.T) {
	h, err := New(3, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for id := uint32(1); id <= 20; id++ {
		lo, hi := epk.EPK(fmt.Sprintf("%02d", id)), epk.EPK(fmt.Sprintf("%02d", id+1))
		if err := h.StartGroup(id, epk.Range{Min: lo, Max: hi}, 1, 2, 3); err != nil {
			t.Fatal(err)
		}
	}
	h.Stabilize()
	if err := h.Node(1).Host.TransferLeader(Group(7), 3); err != nil {
		t.Fatal(err)
	}
	h.Tick(2)
	if l := h.Leader(Group(7)); l == nil || l.ID != 3 {
		t.Fatalf("the leader of group 7 is %v, not node 3", l)
	}
	// Idle, every group quiesces on every node: nothing is ticked.
	h.Tick(10)
	for _, n := range h.Nodes() {
		if a := n.Host.Awake(); a != 0 {
			t.Fatalf("node %d ticks %d idle groups", n.ID, a)
		}
	}
	// The leader of group 7 dies: its followers notice through the nodes' heartbeats, wake,
	// and elect another; the other groups, led by node 1, stay asleep.
	h.Node(3).Crash(100, 0)
	if l := h.WaitLeader(Group(7), 200); l == nil || l.ID == 3 {
		t.Fatalf("no new leader for group 7: %v", l)
	}
	if a := h.Node(2).Host.Awake(); a > 1 {
		t.Fatalf("node 2 ticks %d groups; only group 7 had to wake", a)
	}
}

// Every node loses its power at once, keeping nothing that was not synced: every write that
// was acknowledged is there after the restart, and the replicas agree.
func TestWholeClusterPowerLoss(t *testing.T) {
	h := startCluster(t, 3, 6)
	for i := range 25 {
		if _, err := h.Execute(Group(1), 5*time.Second, create(t, fmt.Sprint("k", i%3), fmt.Sprint("i", i), i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range h.Nodes() {
		n.Crash(0, 7)
	}
	for _, n := range h.Nodes() {
		if err := n.Restart(); err != nil {
			t.Fatal(err)
		}
	}
	h.WaitLeader(Group(1), 200)
	checkAgreement(t, h, 1)
	for i := range 25 {
		if _, err := read(t, h, 1, fmt.Sprint("k", i%3), fmt.Sprint("i", i)); err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
	}
}

// The leader loses its power while writers keep it busy, so that it dies with groups of
// commands proposed, appended on some replicas and not others, applied on some and answered to
// none: every transactional batch it acknowledged is there after the failover, one that was
// refused is not, and one of unknown outcome is there whole or not at all.
func TestLeaderKilledMidBatch(t *testing.T) {
	h := startCluster(t, 3, 8)

	const writers, size = 8, 3
	type outcome int
	const (
		acked outcome = iota
		refused
		unknown
	)
	type batch struct {
		pk  string
		ids []string
		out outcome
	}
	var (
		mu      sync.Mutex
		batches []batch
		acks    atomic.Int64
		stop    atomic.Bool
		wg      sync.WaitGroup
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; !stop.Load(); j++ {
				b := batch{pk: fmt.Sprint("w", w)}
				var ops []partition.Operation
				for k := range size {
					id := fmt.Sprintf("w%d-%d-%d", w, j, k)
					b.ids = append(b.ids, id)
					ops = append(ops, create(t, b.pk, id, j))
				}
				_, err := h.Execute(Group(1), time.Second, ops...)
				switch {
				case err == nil:
					b.out = acked
					acks.Add(1)
				case partition.Ambiguous(err):
					b.out = unknown
				default:
					b.out = refused
				}
				mu.Lock()
				batches = append(batches, b)
				mu.Unlock()
			}
		}()
	}
	for acks.Load() < 50 {
		time.Sleep(time.Millisecond)
	}
	leader := h.Leader(Group(1))
	leader.Crash(0, 9)
	for range 1000 { // the others elect another (Tick would wait for a quiet the writers deny)
		if l := h.Leader(Group(1)); l != nil && l != leader {
			break
		}
		h.TickAsync()
		time.Sleep(time.Millisecond)
	}
	for n := acks.Load(); acks.Load() < n+50; { // and take writes again
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if err := leader.Restart(); err != nil {
		t.Fatal(err)
	}
	checkAgreement(t, h, 1)
	counts := map[outcome]int{}
	for _, b := range batches {
		counts[b.out]++
		found := 0
		for _, id := range b.ids {
			_, err := read(t, h, 1, b.pk, id)
			switch {
			case err == nil:
				found++
			case fault.KindOf(err) != fault.NotFound:
				t.Fatalf("reading %s: %v", id, err)
			}
		}
		switch {
		case b.out == acked && found != size:
			t.Errorf("acknowledged batch %v: %d of its items found", b.ids, found)
		case b.out == refused && found != 0:
			t.Errorf("refused batch %v: %d of its items found", b.ids, found)
		case found != 0 && found != size:
			t.Errorf("batch %v of unknown outcome: %d of its items found", b.ids, found)
		}
	}
	t.Logf("%d batches acknowledged, %d refused, %d of unknown outcome", counts[acked], counts[refused], counts[unknown])
}

// A follower's read asks its leader for a read index again when the request or the answer is
// lost, rather than wait for an answer that never comes until the read times out.
func TestFollowerReadsWhenMessagesAreLost(t *testing.T) {
	h := startCluster(t, 3, 7)
	leader := h.WaitLeader(Group(1), 50)
	e := epk.SchemeV2.Hash(epk.Key{epk.String("k")})
	if _, err := h.Execute(Group(1), 5*time.Second, create(t, "k", "i0", 0)); err != nil {
		t.Fatal(err)
	}
	h.Stabilize()
	h.Net.SetFaults(0.2, 0, 0, 0, false) // no ticks meanwhile: the leader stays
	start := time.Now()
	for _, n := range h.Nodes() {
		if n == leader {
			continue
		}
		for i := range 5 {
			if _, err := n.Replica(Group(1)).Read(e, "i0", nil); err != nil {
				t.Fatalf("node %d, read %d, with 20%% of the messages lost: %v", n.ID, i, err)
			}
		}
	}
	t.Logf("10 reads in %v", time.Since(start))
}

// A follower serves linearizable reads: its ReadIndex comes from the leader, and it answers
// once it has applied that index, so every write acknowledged before the read is in it. Cut
// off from the leader it knows no index, and refuses.
func TestFollowerReadsThroughReadIndex(t *testing.T) {
	h := startCluster(t, 3, 1)
	leader := h.WaitLeader(Group(1), 50)
	e := epk.SchemeV2.Hash(epk.Key{epk.String("k")})
	for i := range 10 {
		if _, err := h.Execute(Group(1), 5*time.Second, create(t, "k", fmt.Sprint("i", i), i)); err != nil {
			t.Fatal(err)
		}
		for _, n := range h.Nodes() {
			if n == leader {
				continue
			}
			d, err := n.Replica(Group(1)).Read(e, fmt.Sprint("i", i), nil)
			if err != nil {
				t.Fatalf("node %d reads item %d: %v", n.ID, i, err)
			}
			if len(d.JSON) == 0 {
				t.Fatalf("node %d reads item %d as empty", n.ID, i)
			}
		}
	}
	var follower *Node
	for _, n := range h.Nodes() {
		if n != leader {
			follower = n
		}
	}
	var others []replication.NodeID
	for _, n := range h.Nodes() {
		if n != follower {
			others = append(others, n.ID)
		}
	}
	h.Net.Cut([]replication.NodeID{follower.ID}, others)
	h.Tick(30) // it loses its leader: its election timeout passes with no word from it
	if _, err := follower.Replica(Group(1)).Read(e, "i0", nil); err == nil {
		t.Fatal("a follower cut off from its group served a read")
	}
}

// The node of a quiesced group's leader restarts before the followers count it as gone. Its
// replica, a follower now, campaigns; the followers, asleep under the leader they knew, grant
// its votes at once rather than keep that leader's lease until they time out awake (a read on
// the restarted node waited for a leader longer than its clients would).
func TestLeaderNodeRestartsWhileQuiesced(t *testing.T) {
	for seed := range uint64(5) {
		// The restarted replica campaigns after one election timeout (10 to 19 ticks); the
		// followers' own timeouts, counted only once its votes woke them, would add another.
		if ticks := leaderAfterQuickRestart(t, seed); ticks >= 20 {
			t.Fatalf("seed %d: a leader after %d ticks, want one election timeout (under 20)", seed, ticks)
		}
	}
}

// leaderAfterQuickRestart quiesces a group of three replicas, crashes and restarts its
// leader's node at once, and returns the ticks until a replica leads again.
func leaderAfterQuickRestart(t *testing.T, seed uint64) int {
	t.Helper()
	h, err := New(3, seed, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.StartGroup(1, epk.Range{Min: "", Max: epk.EPK("\xff")}, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	h.Stabilize()
	l := h.WaitLeader(Group(1), 100)
	if l == nil {
		t.Fatal("no leader")
	}
	h.Tick(10)
	for _, n := range h.Nodes() {
		if a := n.Host.Awake(); a != 0 {
			t.Fatalf("node %d ticks %d idle groups", n.ID, a)
		}
	}
	l.Crash(100, 0)
	if err := l.Restart(); err != nil {
		t.Fatal(err)
	}
	ticks := 0
	for ; h.Leader(Group(1)) == nil && ticks < 100; ticks++ {
		h.Tick(1)
	}
	return ticks
}
