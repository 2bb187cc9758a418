package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/ru"
)

// One request-unit budget per partition, whichever of its replicas serves (issue 50). Every
// replica admits and charges the requests it serves on its own ru.Budget, as before: a
// request never waits for a message. What changes is how much of the partition's rate each
// replica may spend in a second: the leader of the partition's group owns the budget, keeps
// an ru.Ledger of its followers' parts, and spends what they leave (ru/share.go has the
// arithmetic and why it keeps the replicas within the rate together).
//
// Why the leader, and shares rather than reports of what was spent: the leader already
// serves the writes and Strong reads and knows its group's membership, and a share is
// decided before a second is spent, where a report comes after it; a follower that hears
// nothing still has its fallback, the rate over the replicas, so a node cut off from its
// leader never spends without bound and never stops serving.
//
// Every shareEvery, each node (shareOnce):
//
//   - shares the budget of every partition it holds among the group's members (ru.Budget.Share);
//   - for those it leads, sets the ledger's membership and rate, and what the followers
//     leave it (ru.Ledger.Apply);
//   - for those it follows, binds itself to its promise (ru.Budget.Bind) and asks the node
//     of their leader, one message per leader node for all its partitions (a forwarded
//     request, nodecall.ShareAsk), for a grant for the next second, which it records
//     (ru.Budget.Granted).
//
// The message is new in clusterversion.PartitionBudgets: before the cluster's active version
// reaches it (a node of the previous release would take it for a write), every replica keeps
// the partition's whole rate, as that release does. With rate limiting off there is nothing to
// share. A replica that gains or loses its group's leadership starts over from its fallback
// (ru.Budget.Reset), at its node's next pass: until then an old leader may still spend what
// its ledger left it, for at most shareEvery.

// shareEvery is the pause between two passes: twice a second, so that every second has an
// ask early enough to be granted before it begins.
const shareEvery = 500 * time.Millisecond

// shareTimeout bounds the wait for a leader's grants: a grant that comes later is for a
// second that has begun, and the follower keeps its promise for it.
const shareTimeout = 400 * time.Millisecond

// shareTable is what this node knows of the budgets of the partitions it holds, by group.
type shareTable struct {
	mu     sync.Mutex
	groups map[replication.GroupID]*groupShare
	// on says whether budgets were shared at the last pass (the version allowed it, rate
	// limiting is on): when it turns off, every budget is the replica's own again.
	on bool
}

// groupShare is one partition's.
type groupShare struct {
	p *partition.Partition
	// leading is whether this node's replica led the group at the last pass; ledger is its
	// ledger then, nil otherwise.
	leading bool
	ledger  *ru.Ledger
}

// sharing reports whether budgets are shared among replicas: the version allows it, and
// rate limiting is on.
func (e *Engine) sharing() bool {
	return e.cluster != nil && e.opts.RateLimit && e.cluster.active() >= clusterversion.PartitionBudgets
}

// shareLoop runs shareOnce every shareEvery until the engine closes.
func (e *Engine) shareLoop() { e.every(shareEvery, e.shareOnce) }

// shareOnce is one pass (see above).
func (e *Engine) shareOnce(now time.Time) {
	h := e.replicas.hostOf()
	if h == nil {
		return
	}
	parts := e.budgetsHeld()
	t := &e.shares
	if !e.sharing() {
		t.mu.Lock()
		was := t.on
		t.on, t.groups = false, nil
		t.mu.Unlock()
		if was {
			for _, x := range parts {
				x.p.Budget().Share(1)
			}
		}
		return
	}
	asks := map[replication.NodeID]*nodecall.ShareAsk{}
	following := map[replication.GroupID]*ru.Budget{}
	groups := map[replication.GroupID]*groupShare{}
	t.mu.Lock()
	old := t.groups
	t.mu.Unlock()
	for _, x := range parts {
		st, ok := h.Status(x.g)
		if !ok {
			continue
		}
		b := x.p.Budget()
		b.Share(len(st.Descriptor.Members))
		gs := &groupShare{p: x.p}
		if o := old[x.g]; o != nil && o.p == x.p {
			*gs = *o
		}
		if st.Leading != gs.leading {
			b.Reset()
			gs.leading, gs.ledger = st.Leading, nil
		}
		groups[x.g] = gs
		if len(st.Descriptor.Members) <= 1 || b.Rate() <= 0 {
			continue
		}
		if st.Leading {
			if gs.ledger == nil {
				gs.ledger = ru.NewLedger()
			}
			var followers []uint64
			for _, m := range st.Descriptor.Members {
				if m.Replica != st.Replica {
					followers = append(followers, uint64(m.Node))
				}
			}
			gs.ledger.Set(b.Rate(), followers)
			gs.ledger.Apply(b, now)
			continue
		}
		leader := e.replicas.leaderOf(x.g)
		if leader == 0 || leader == e.cluster.Node {
			continue // an election: the promises made stand, then the fallback
		}
		a := b.Bind(now)
		ask := asks[leader]
		if ask == nil {
			ask = &nodecall.ShareAsk{From: uint64(e.cluster.Node)}
			asks[leader] = ask
		}
		ask.Groups = append(ask.Groups, nodecall.GroupAsk{Group: uint64(x.g), From: a.From, To: a.To, Promise: a.Promise, Want: a.Want.RU, Hungry: a.Want.Hungry})
		following[x.g] = b
	}
	t.mu.Lock()
	t.on, t.groups = true, groups
	t.mu.Unlock()
	var wg sync.WaitGroup
	for node, ask := range asks {
		wg.Go(func() {
			ans, err := e.askShares(node, ask)
			if err != nil {
				e.log.Debug("budgets: a leader's grants", "node", fmt.Sprintf("%x", uint64(node)), "err", err)
				return
			}
			for _, g := range ans.Grants {
				if b := following[replication.GroupID(g.Group)]; b != nil {
					b.Granted(g.Second, g.PerSecond)
				}
			}
		})
	}
	wg.Wait()
}

// heldBudget is a partition this node holds a replica of.
type heldBudget struct {
	g replication.GroupID
	p *partition.Partition
}

// budgetsHeld lists the replicas this node holds, and sets each one's budget to its
// partition's rate again: a replica the host opened again on a snapshot, or a split's child
// another node ran, comes with a budget of its own that no change of the catalog has set yet
// (refreshBudgets), and would otherwise admit without bound until one does.
func (e *Engine) budgetsHeld() []heldBudget {
	var out []heldBudget
	now := time.Now()
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, d := range e.dbs {
		shared := sharedPartitions(d)
		for _, c := range d.containers {
			for _, p := range c.routes.Load().parts {
				e.setBudget(p, partitionRate(c, p.ID(), shared), now)
				out = append(out, heldBudget{replica.Group(c.num, p.ID()), p})
			}
		}
	}
	return out
}

// askShares sends ask to node and returns its grants. An answer without grants (an older
// answer, or a node that has not taken its leaderships yet) grants nothing.
func (e *Engine) askShares(node replication.NodeID, ask *nodecall.ShareAsk) (nodecall.ShareAnswer, error) {
	ctx, cancel := context.WithTimeout(e.stopped, shareTimeout)
	defer cancel()
	ans, err := e.cluster.Call(ctx, node, &nodecall.Request{Shares: ask})
	if err != nil {
		return nodecall.ShareAnswer{}, err
	}
	if ans.Err != nil {
		return nodecall.ShareAnswer{}, ans.Err
	}
	if ans.Shares == nil {
		return nodecall.ShareAnswer{}, nil
	}
	return *ans.Shares, nil
}

// serveShares grants a follower its parts of the partitions this node leads.
func (e *Engine) serveShares(ask *nodecall.ShareAsk) *nodecall.ShareAnswer {
	out := &nodecall.ShareAnswer{}
	if !e.sharing() {
		return out
	}
	for _, ga := range ask.Groups {
		e.shares.mu.Lock()
		gs := e.shares.groups[replication.GroupID(ga.Group)]
		var l *ru.Ledger
		var p *partition.Partition
		if gs != nil {
			l, p = gs.ledger, gs.p
		}
		e.shares.mu.Unlock()
		if l == nil || !p.Leading() {
			continue // not led here, or not since this node's last pass
		}
		sec, perSecond := l.Ask(ask.From, ru.Ask{From: ga.From, To: ga.To, Promise: ga.Promise,
			Want: ru.Want{RU: ga.Want, Hungry: ga.Hungry}}, p.Budget(), time.Now())
		out.Grants = append(out.Grants, nodecall.Grant{Group: ga.Group, Second: sec, PerSecond: perSecond})
	}
	return out
}
