package engine

import (
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/query"
)

// The engine's values as the calls between nodes carry them (package nodecall), and back.
// The two sides are kept apart so that the engine's types may change without changing what
// nodes send each other, which nodes of other releases read.

// patchToWire is p as it travels: its condition as text.
func patchToWire(p Patch) *nodecall.Patch {
	w := &nodecall.Patch{Ops: p.Ops}
	if p.Condition != nil {
		w.Condition = p.Condition.Text()
	}
	return w
}

// patchFromWire is the Patch w carries, its condition prepared.
func patchFromWire(w *nodecall.Patch) (Patch, error) {
	p := Patch{Ops: w.Ops}
	if w.Condition != "" {
		cond, err := query.PrepareCondition(w.Condition)
		if err != nil {
			return p, err
		}
		p.Condition = cond
	}
	return p, nil
}

func consistencyToWire(rc ReadConsistency) nodecall.Consistency {
	return nodecall.Consistency{Level: uint8(rc.Level), Session: rc.Session}
}

func consistencyFromWire(w nodecall.Consistency) ReadConsistency {
	return ReadConsistency{Level: Level(w.Level), Session: w.Session}
}

func feedPageToWire(pg FeedPage) *nodecall.FeedPage {
	w := &nodecall.FeedPage{Through: pg.Through, Partition: pg.Partition, LSN: pg.LSN, Charge: pg.Charge,
		Changes: make([]nodecall.FeedChange, len(pg.Changes))}
	for i, c := range pg.Changes {
		w.Changes[i] = nodecall.FeedChange{LSN: c.LSN, Op: uint8(c.Op), TS: c.TS, ID: c.ID, JSON: c.JSON, PrevLSN: c.PrevLSN,
			Prev: c.Prev, Key: c.Key, Expired: c.Expired}
	}
	return w
}

func feedPageFromWire(w *nodecall.FeedPage) FeedPage {
	pg := FeedPage{Through: w.Through, Partition: w.Partition, LSN: w.LSN, Charge: w.Charge, Changes: make([]FeedChange, len(w.Changes))}
	for i, c := range w.Changes {
		pg.Changes[i] = FeedChange{LSN: c.LSN, Op: ChangeOp(c.Op), TS: c.TS, ID: c.ID, JSON: c.JSON, PrevLSN: c.PrevLSN,
			Prev: c.Prev, Key: c.Key, Expired: c.Expired}
	}
	return pg
}
