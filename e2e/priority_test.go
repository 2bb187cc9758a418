package e2e

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Priority-based execution: on a 400 RU/s container that High and Low clients together ask far
// more of, the Low requests are the ones refused; a level that is neither is a 400. Measured
// over whole seconds after the first, in which neither level has a history yet.
func TestPriorityLevels(t *testing.T) {
	s := startServer(t, false)
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	c.throughputContainer(t, 400)
	code, _, b := c.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"x","pk":"p"}`),
		map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-cosmos-priority-level": "Medium"})
	if code != 400 || !strings.Contains(string(b), "priority") {
		t.Fatalf("a create at priority Medium: %d %s", code, b)
	}

	type tally struct{ ok, throttled atomic.Int64 }
	var high, low tally
	start := time.Now().Truncate(time.Second).Add(2 * time.Second) // counted from here
	stop := start.Add(4 * time.Second)
	var wg sync.WaitGroup
	for w := range 8 {
		level, tl := "High", &high
		if w%2 == 1 {
			level, tl = "Low", &low
		}
		wg.Go(func() {
			for i := 0; time.Now().Before(stop); i++ {
				pk := fmt.Sprintf("p%d", i%10)
				body := []byte(fmt.Sprintf(`{"id":"w%d-%d","pk":%q}`, w, i, pk))
				code, _, b := c.do(t, "POST", "/dbs/db/colls/c/docs", body,
					map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf(`[%q]`, pk), "x-ms-cosmos-priority-level": level})
				counted := time.Now().After(start)
				switch {
				case code == 201 && counted:
					tl.ok.Add(1)
				case code == 429 && counted:
					tl.throttled.Add(1)
				case code != 201 && code != 429:
					t.Errorf("create at %s: %d %s", level, code, b)
					return
				}
			}
		})
	}
	wg.Wait()
	h, hT, l, lT := high.ok.Load(), high.throttled.Load(), low.ok.Load(), low.throttled.Load()
	t.Logf("High: %d created, %d throttled; Low: %d created, %d throttled", h, hT, l, lT)
	if lT == 0 || h == 0 {
		t.Fatal("the load did not pass the budget, or High got nothing")
	}
	// High wants all of the budget: it gets nearly all of it, and Low nearly nothing.
	if l*5 > h {
		t.Fatalf("Low got %d creates against High's %d: Low requests were not refused first", l, h)
	}
}
