package placement

import (
	"maps"
	"slices"
	"time"

	"github.com/partita-db/partita/internal/replication"
)

// MoveTurn is how long each live node in turn may move replicas to even out the load: one
// node at a time, so that the leaders of many groups do not move theirs to the same node at
// once (the records they decide by lag their groups by a pass).
const MoveTurn = 3 * time.Second

// Turn reports whether node self may move replicas at now: the live nodes take turns of
// MoveTurn in the order of their ids.
func Turn(v View, self replication.NodeID, now time.Time) bool {
	ids := slices.Sorted(maps.Keys(v.Live))
	if len(ids) == 0 {
		return false
	}
	return ids[int(now.UnixNano()/int64(MoveTurn))%len(ids)] == self
}
