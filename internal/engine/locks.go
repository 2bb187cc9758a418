package engine

import (
	"sync"

	"github.com/partita-db/partita/internal/epk"
)

// lockTable serializes a transaction (a script's, or a CQL statement's read-modify-write,
// MutateRows) against every other write to its logical partition, and against other
// transactions there. Plain writes share a logical partition with each other (the partition's
// writer orders them); a transaction holds it alone from its first read to its commit. Writes
// to other logical partitions never wait.
//
// Only logical partitions with a write or a script in flight have an entry, so the table
// stays as small as the work in flight. It is sharded so that concurrent writers seldom
// meet on one mutex.
type lockTable struct {
	shards [64]lockShard
}

type lockShard struct {
	mu   sync.Mutex
	cond *sync.Cond
	lps  map[epk.EPK]*lpLock
}

// lpLock is the state of one logical partition. Invariant: an entry exists only while one
// of its counts is non-zero or script is set.
type lpLock struct {
	writers int  // plain writes in flight
	waiting int  // scripts waiting: new plain writes queue behind them, so scripts are not starved
	script  bool // a script's transaction holds the logical partition
}

func (t *lockTable) shard(e epk.EPK) *lockShard {
	h := uint32(2166136261)
	for i := 0; i < len(e); i++ {
		h = (h ^ uint32(e[i])) * 16777619
	}
	s := &t.shards[h%uint32(len(t.shards))]
	s.mu.Lock()
	if s.lps == nil {
		s.lps = map[epk.EPK]*lpLock{}
		s.cond = sync.NewCond(&s.mu)
	}
	return s
}

// entry returns e's state, made if absent. Callers hold s.mu.
func (s *lockShard) entry(e epk.EPK) *lpLock {
	l := s.lps[e]
	if l == nil {
		l = &lpLock{}
		s.lps[e] = l
	}
	return l
}

// release drops e's entry when nothing holds or awaits it, and wakes the waiters.
func (s *lockShard) release(e epk.EPK, l *lpLock) {
	if l.writers == 0 && l.waiting == 0 && !l.script {
		delete(s.lps, e)
	}
	s.cond.Broadcast()
	s.mu.Unlock()
}

// lockWrite waits while a script holds or awaits e, then counts a plain write in.
func (t *lockTable) lockWrite(e epk.EPK) {
	s := t.shard(e)
	for {
		l := s.lps[e]
		if l == nil || !l.script && l.waiting == 0 {
			break
		}
		s.cond.Wait()
	}
	s.entry(e).writers++
	s.mu.Unlock()
}

func (t *lockTable) unlockWrite(e epk.EPK) {
	s := t.shard(e)
	l := s.lps[e]
	l.writers--
	s.release(e, l)
}

// lockScript waits until no write and no other script holds e, then holds it.
func (t *lockTable) lockScript(e epk.EPK) {
	s := t.shard(e)
	l := s.entry(e)
	l.waiting++
	for l.script || l.writers > 0 {
		s.cond.Wait()
	}
	l.waiting--
	l.script = true
	s.mu.Unlock()
}

func (t *lockTable) unlockScript(e epk.EPK) {
	s := t.shard(e)
	l := s.lps[e]
	l.script = false
	s.release(e, l)
}
