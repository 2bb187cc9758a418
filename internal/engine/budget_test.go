package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
)

// writeUntilThrottled writes to one logical partition until a write is refused.
func writeUntilThrottled(t *testing.T, c *Container, pk string) *fault.Error {
	t.Helper()
	for i := range 100000 {
		_, err := c.CreateItem(item(fmt.Sprintf("%s-%d", pk, i), pk, heavyPad), ItemOptions{})
		var se *fault.Error
		if errors.As(err, &se) {
			return se
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("never throttled")
	return nil
}

// heavyPad makes an item of 4 KB, whose create costs about 18 RU.
var heavyPad = `,"pad":"` + strings.Repeat("x", 4<<10) + `"`

// slowBudgets lowers the RU/s of a container's partitions to perSecond, so that a test runs
// out a budget within a few dozen writes however slowly the machine syncs them: a
// race-detector build on a busy machine syncs far fewer than the thousand writes a second
// that a budget of thousands of RU/s takes to run out. Budgets are set again, from the
// throughput, only when the partitions or the throughput change.
func slowBudgets(c *Container, perSecond float64) {
	for _, p := range c.partitions() {
		p.Budget().SetRate(perSecond)
	}
}

func TestThrottling(t *testing.T) {
	_, c := newContainer(t, Options{RateLimit: true}, ContainerSpec{})
	se := writeUntilThrottled(t, c, "hot")
	if se.Kind != fault.Throttled || se.RetryAfter <= 0 || se.RetryAfter > time.Second {
		t.Fatalf("throttled write: %+v", se)
	}
	time.Sleep(se.RetryAfter)
	if _, err := c.CreateItem(item("after", "hot", ""), ItemOptions{}); err != nil {
		t.Fatalf("write after the retry-after: %v", err)
	}
	if s := c.partitions()[0].Budget().Stats(); s.PerSecond != 400 || s.Throttled == 0 || s.NormalizedUse < 1 {
		t.Fatalf("budget stats %+v", s)
	}
}

// A hot partition is throttled while the container's other partitions are not.
func TestHotPartitionThrottledAlone(t *testing.T) {
	_, c := newContainer(t, Options{RateLimit: true}, ContainerSpec{Throughput: &Throughput{Manual: 12000}})
	parts := c.partitions()
	if len(parts) != 2 {
		t.Fatalf("%d partitions, want 2", len(parts))
	}
	keyIn := func(p *partition.Partition) string {
		for i := 0; ; i++ {
			k := fmt.Sprint("k", i)
			if e, _ := c.EPK(key(k)); p.Range().Contains(e) {
				return k
			}
		}
	}
	hot, cold := keyIn(parts[0]), keyIn(parts[1])
	for _, p := range parts {
		if s := p.Budget().Stats(); s.PerSecond != 6000 {
			t.Fatalf("partition %d has %v RU/s, want half of 12000", p.ID(), s.PerSecond)
		}
	}
	slowBudgets(c, 300)
	writeUntilThrottled(t, c, hot)
	if _, err := c.CreateItem(item("cold-item", cold, ""), ItemOptions{}); err != nil {
		t.Fatalf("a write to the cold partition: %v", err)
	}
	if s := parts[1].Budget().Stats(); s.Throttled != 0 {
		t.Fatalf("the cold partition: %+v", s)
	}
}

func TestRateLimitOffStillCharges(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	for i := range 200 {
		if _, err := c.CreateItem(item(fmt.Sprint(i), "p", ""), ItemOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if s := c.partitions()[0].Budget().Stats(); s.Total < 200*4.4 || s.Throttled != 0 {
		t.Fatalf("budget stats with rate limiting off: %+v", s)
	}
}
