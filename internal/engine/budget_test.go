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

// heavyPad makes an item of 64 KB, whose create costs about 280 RU: a partition's budget of
// a few thousand RU/s runs out within a few dozen writes, however slowly the machine syncs
// (a race-detector build on a busy machine syncs a few hundred small writes a second, which
// a budget priced per 1 KB item never ran out under).
var heavyPad = `,"pad":"` + strings.Repeat("x", 64<<10) + `"`

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
	if s := c.Partitions()[0].Budget().Stats(); s.PerSecond != 400 || s.Throttled == 0 || s.NormalizedUse < 1 {
		t.Fatalf("budget stats %+v", s)
	}
}

// A hot partition is throttled while the container's other partitions are not.
func TestHotPartitionThrottledAlone(t *testing.T) {
	_, c := newContainer(t, Options{RateLimit: true}, ContainerSpec{Throughput: &Throughput{Manual: 12000}})
	parts := c.Partitions()
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
	writeUntilThrottled(t, c, hot)
	if _, err := c.CreateItem(item("cold-item", cold, ""), ItemOptions{}); err != nil {
		t.Fatalf("a write to the cold partition: %v", err)
	}
	if s := parts[1].Budget().Stats(); s.Throttled != 0 || s.PerSecond != 6000 {
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
	if s := c.Partitions()[0].Budget().Stats(); s.Total < 200*4.4 || s.Throttled != 0 {
		t.Fatalf("budget stats with rate limiting off: %+v", s)
	}
}
