package storage

import (
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// stallInterval is the least time between two log lines about write stalls.
const stallInterval = 10 * time.Second

// stallLog reports Pebble's write stalls, the times when writes wait because flushes or
// compactions have fallen behind: the cause of sudden write latencies of hundreds of
// milliseconds, which an operator should be able to see. Under sustained overload stalls come
// many times a second, so it writes the first at once and then at most one line per
// stallInterval, counting the stalls since its last line (those after the last line are told
// with the next stall).
type stallLog struct {
	log *slog.Logger
	now func() time.Time

	mu     sync.Mutex
	began  time.Time // of the stall in progress
	reason string    // of the latest stall
	// count and waited sum the stalls that ended since the last line.
	count  int
	waited time.Duration
	logged time.Time // when the last line was written; zero before the first
}

func (s *stallLog) listener() *pebble.EventListener {
	return &pebble.EventListener{WriteStallBegin: s.begin, WriteStallEnd: s.end}
}

func (s *stallLog) begin(info pebble.WriteStallBeginInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.began, s.reason = s.now(), info.Reason
}

func (s *stallLog) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.count++
	s.waited += now.Sub(s.began)
	if !s.logged.IsZero() && now.Sub(s.logged) < stallInterval {
		return
	}
	s.log.Warn("storage write stalls: writes waited for flushes or compactions to catch up",
		"stalls", s.count, "waited", s.waited.Round(time.Millisecond), "reason", s.reason)
	s.count, s.waited, s.logged = 0, 0, now
}
