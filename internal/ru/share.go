package ru

import (
	"maps"
	"math"
	"slices"
	"sync"
	"time"
)

// Sharing a partition's budget among its replicas, in a cluster.
//
// On the service a partition's budget is the partition's, whichever replica serves a request.
// Here every replica admits and charges the requests it serves on its own Budget, so that no
// request waits for a message, and the replicas divide the partition's rate between them
// second by second, so that what they allow together in any second stays within it. The
// leader of the partition's group owns the budget: it keeps a Ledger of what each follower
// may spend in each of the next seconds, and spends what they leave.
//
//   - A follower that holds nothing for a second may spend its fallback in it, the rate over
//     the replicas: replicas that hear nothing from their leader allow the rate between them,
//     and none stops serving.
//   - Twice a second a follower binds itself, for the next PromiseSeconds seconds, to spend
//     no more than it wants (at most its fallback: its promise), and only then tells the
//     leader, asking for a grant for the next second. A promise binds whether or not it
//     arrives, so the leader counts on it as soon as it does; one that is lost leaves the
//     leader counting the fallback.
//   - The leader divides the rate among the replicas by what they want (Divide: the least
//     needy get what they want, the others equal parts of the rest), and grants the follower
//     its part for the next second, as far as what the others may spend in it leaves room. A
//     grant only raises what a follower may spend, and only for a second that has not begun
//     where the leader is: once a second begins, what the leader allowed itself in it stands.
//   - The leader allows itself, in each second, the rate less what every follower may spend
//     in it: the larger of its promise and its grant, or its fallback when the ledger holds
//     neither (Ledger.Own). It keeps at least a small floor.
//
// So in every second, as the leader's clock counts them, the limits of the replicas add up to
// at most the rate, plus what a request that crosses a limit takes beyond it (as on one
// node). A lost message leaves a follower at its promise or its fallback, which the leader
// counts either way. What this trusts: that the nodes' clocks agree to a fraction of a second
// (a follower's seconds are the leader's shifted by their skew), and that a replica that
// learns it no longer leads forgets at once what it allowed itself (Reset); a follower may
// still hold a grant of the former leader for the second after a leadership moves.

// PromiseSeconds is how many seconds ahead a follower's promise binds it: the leader counts a
// follower that went quiet at its last promise for that long, then at its fallback.
const PromiseSeconds = 3

// slotLen is how many seconds of limits a budget or a ledger keeps, by second % slotLen: the
// current one, those promised ahead, and one behind for a message that comes late.
const slotLen = 8

// idleShare is the part of the rate that every replica keeps at least, whatever the others
// want (a floor, at most its fallback): a follower that has been idle serves a sudden read at
// once, and asks for more for the next second.
const idleShare = 0.05

// slot is what one replica may spend in one second.
type slot struct {
	second int64 // the slot holds nothing for other seconds
	// cap is the most the replica may spend in the second when capped: its promise, or, on the
	// leader, what its followers leave it. Not capped: its fallback.
	cap    float64
	capped bool
	// grant is what the leader granted for the second; the replica may spend the larger of
	// it and its cap.
	grant float64
}

func slotOf(slots *[slotLen]slot, second int64) *slot {
	s := &slots[uint64(second)%slotLen]
	if s.second != second {
		*s = slot{second: second}
	}
	return s
}

// limitOf is what a replica may spend in second by its slots, fallback when they hold
// nothing for it.
func limitOf(slots *[slotLen]slot, second int64, fallback float64) float64 {
	s := &slots[uint64(second)%slotLen]
	if s.second != second {
		return fallback
	}
	l := fallback
	if s.capped {
		l = s.cap
	}
	return max(l, s.grant)
}

// limit is what this replica may spend in second. Callers hold b.mu.
func (b *Budget) limit(second int64) float64 {
	if b.replicas <= 1 {
		return b.perSecond
	}
	return limitOf(&b.slots, second, b.fallback())
}

// Limit is what this replica may spend in now's second: the rate when it is its own, its part
// of it when shared.
func (b *Budget) Limit(now time.Time) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit(now.Unix())
}

// fallback is what this replica may spend in a second it holds nothing for. Callers hold b.mu.
func (b *Budget) fallback() float64 { return b.perSecond / float64(max(b.replicas, 1)) }

// Share makes the budget this replica's part of a budget shared by replicas replicas (one or
// zero: its own, as on a node alone). What the replica promised or was granted stands: the
// leader counts on it whatever the group's membership (a change of the rate, which the leader
// forgets them on, forgets them here too: SetRate).
func (b *Budget) Share(replicas int) {
	b.mu.Lock()
	b.replicas = replicas
	b.mu.Unlock()
}

// Reset forgets what the replica held or allowed itself, when its part changes (it gained or
// lost its group's leadership): from now on, its fallback.
func (b *Budget) Reset() {
	b.mu.Lock()
	b.slots = [slotLen]slot{}
	b.mu.Unlock()
}

// Want is what a replica would spend in a second: RU, or without a bound when Hungry (it
// refused requests in the last second or this one).
type Want struct {
	RU     float64
	Hungry bool
}

// need is w as a number: +Inf when hungry.
func (w Want) need() float64 {
	if w.Hungry {
		return math.Inf(1)
	}
	return w.RU
}

// Ask is what a follower tells its leader: what it wants, and what it promised for the
// seconds From to To.
type Ask struct {
	From, To int64
	Want     Want
	Promise  float64
}

// Bind is a follower's step, at now: it binds itself to its promise for the next
// PromiseSeconds seconds (what it wants, at most its fallback; a hungry one promises its
// fallback), and returns what to tell its leader. A promise only ever lowers what a second
// allows.
func (b *Budget) Bind(now time.Time) Ask {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(now)
	w := b.want()
	a := Ask{From: b.second + 1, To: b.second + PromiseSeconds, Want: w, Promise: min(w.need(), b.fallback())}
	for sec := a.From; sec <= a.To; sec++ {
		s := slotOf(&b.slots, sec)
		if !s.capped || a.Promise < s.cap {
			s.cap, s.capped = a.Promise, true
		}
	}
	return a
}

// Granted records the leader's grant of perSecond for second.
func (b *Budget) Granted(second int64, perSecond float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := slotOf(&b.slots, second)
	s.grant = max(s.grant, perSecond)
}

// Own sets what the leader allows itself in second: what its followers leave it (Ledger.Own).
func (b *Budget) Own(second int64, perSecond float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	*slotOf(&b.slots, second) = slot{second: second, cap: perSecond, capped: true}
}

// Wants is what this replica would spend, at now: the busier of the last second and this one
// so far, and half as much again (at least the floor) to grow into; hungry when it refused a
// request in either.
func (b *Budget) Wants(now time.Time) Want {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(now)
	return b.want()
}

// want is Wants; callers hold b.mu and rolled the budget.
func (b *Budget) want() Want {
	spent := b.spent
	if h := b.history[uint64(b.second-1)%60]; h.second == b.second-1 {
		spent = max(spent, h.spent)
	}
	floor := floorOf(b.perSecond, b.replicas)
	return Want{RU: spent + max(spent/2, floor), Hungry: b.refusedAt >= b.second-1 && b.refusedAt > 0}
}

// floorOf is the least a replica keeps of rate shared by n replicas.
func floorOf(rate float64, n int) float64 {
	return min(rate*idleShare, rate/float64(max(n, 1)))
}

// Divide divides rate among replicas by what they want, max-min fairly: each keeps at least
// the floor; the least needy get what they want, the others equal parts of what is left; and
// what nobody wants goes to all evenly, as room for a sudden load anywhere. The parts add up
// to rate.
func Divide(rate float64, wants []Want) []float64 {
	n := len(wants)
	out := make([]float64, n)
	if n == 0 || rate <= 0 {
		return out
	}
	floor := floorOf(rate, n)
	left := rate - floor*float64(n)
	order := make([]int, n)
	for i := range order {
		order[i], out[i] = i, floor
	}
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := wants[i].need(), wants[j].need()
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
	for k, i := range order {
		give := min(max(wants[i].need()-floor, 0), left/float64(n-k))
		out[i] += give
		left -= give
	}
	for i := range out {
		out[i] += left / float64(n)
	}
	return out
}

// Ledger is a leader's record of what its followers may spend of its partition's budget, by
// second: their promises and its grants. Followers are named by their nodes.
type Ledger struct {
	mu   sync.Mutex
	rate float64
	// followers are the group's other replicas, by node: the leader counts each at its
	// fallback for a second it holds nothing of it for.
	followers map[uint64]*account
}

// account is one follower's: what it last said it wanted, and its slots (its promises as
// caps, the leader's grants).
type account struct {
	want   Want
	wantAt int64 // the second the follower said so; 0: never
	slots  [slotLen]slot
}

// NewLedger is the ledger of a leader that has just taken its group's leadership: it knows
// nothing of its followers yet.
func NewLedger() *Ledger { return &Ledger{followers: map[uint64]*account{}} }

// Set sets the partition's rate and the followers' nodes, as the group's membership names
// them. A follower no longer named is forgotten; a change of rate forgets every promise and
// grant (they were parts of the old one).
func (l *Ledger) Set(rate float64, followers []uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if rate != l.rate {
		l.rate = rate
		clear(l.followers)
	}
	for n := range l.followers {
		if !slices.Contains(followers, n) {
			delete(l.followers, n)
		}
	}
	for _, n := range followers {
		if l.followers[n] == nil {
			l.followers[n] = &account{}
		}
	}
}

// fallback is what a follower may spend in a second the ledger holds nothing of it for.
// Callers hold l.mu.
func (l *Ledger) fallback() float64 { return l.rate / float64(len(l.followers)+1) }

// reserved is what follower a may spend in second. Callers hold l.mu.
func (l *Ledger) reserved(a *account, second int64) float64 {
	return limitOf(&a.slots, second, l.fallback())
}

// account is node's account, made for a follower the membership did not name yet (it was
// added since the last Set). Callers hold l.mu.
func (l *Ledger) account(node uint64) *account {
	a := l.followers[node]
	if a == nil {
		a = &account{}
		l.followers[node] = a
	}
	return a
}

// Ask records what follower node told (its promise for the seconds it names, what it
// wants), grants it its part of the second after now, as far as the others leave room, and
// returns the second granted and what the follower may spend in it. own is the leader's
// budget: what it wants counts in the division, and what the grant leaves it is set there
// before the ledger is unlocked (Apply), so that no second begins with the leader allowed
// more than the grant left. now is the leader's clock as the ask is served.
func (l *Ledger) Ask(node uint64, ask Ask, own *Budget, now time.Time) (second int64, perSecond float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := now.Unix()
	defer l.apply(own, cur)
	a := l.account(node)
	for sec := ask.From; sec <= ask.To; sec++ {
		if sec < cur-1 {
			continue // gone by: the slot may hold a second to come
		}
		s := slotOf(&a.slots, sec)
		if !s.capped || ask.Promise < s.cap {
			s.cap, s.capped = ask.Promise, true
		}
	}
	a.want, a.wantAt = ask.Want, cur
	second = cur + 1
	if l.rate <= 0 {
		return second, 0
	}
	// Every replica's want: the leader's first, then the followers', each as it last said, or,
	// for one that has not said for a while, what it may spend anyway.
	nodes := []uint64{0}
	wants := []Want{own.Wants(now)}
	for _, n := range l.nodes() {
		f := l.followers[n]
		nodes = append(nodes, n)
		if f.wantAt >= cur-PromiseSeconds {
			wants = append(wants, f.want)
		} else {
			wants = append(wants, Want{RU: l.reserved(f, second)})
		}
	}
	parts := Divide(l.rate, wants)
	room := l.rate - floorOf(l.rate, len(nodes))
	for _, n := range l.nodes() {
		if n != node {
			room -= l.reserved(l.followers[n], second)
		}
	}
	part := parts[slices.Index(nodes, node)]
	s := slotOf(&a.slots, second)
	s.grant = max(s.grant, min(part, room), 0)
	return second, l.reserved(a, second)
}

// Own is what the leader may spend in second: the rate less what every follower may.
func (l *Ledger) Own(second int64) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.own(second)
}

func (l *Ledger) own(second int64) float64 {
	own := l.rate
	for _, n := range l.nodes() {
		own -= l.reserved(l.followers[n], second)
	}
	return max(own, 0)
}

// nodes are the followers' nodes in order: sums over them are made in one order, so that a
// second's figures come out the same to the last bit however often they are computed (the
// budget's, set by Apply, and Own's). Callers hold l.mu.
func (l *Ledger) nodes() []uint64 { return slices.Sorted(maps.Keys(l.followers)) }

// Apply sets what the leader's budget b allows it from now's second to the furthest a
// promise reaches, under the ledger's lock, so that what one caller computed is never set
// after what a later one did.
func (l *Ledger) Apply(b *Budget, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.apply(b, now.Unix())
}

func (l *Ledger) apply(b *Budget, now int64) {
	for sec := now; sec <= now+PromiseSeconds+1; sec++ {
		b.Own(sec, l.own(sec))
	}
}
