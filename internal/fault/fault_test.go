package fault

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestKindsMatchWithErrorsIs(t *testing.T) {
	err := fmt.Errorf("reading: %w", New(NotFound, "item %q does not exist", "a"))
	if !errors.Is(err, NotFound) {
		t.Fatalf("errors.Is(%v, NotFound) = false", err)
	}
	if errors.Is(err, Conflict) {
		t.Fatalf("errors.Is(%v, Conflict) = true", err)
	}
	if got := From(err); got.Kind != NotFound || got.Message != `item "a" does not exist` {
		t.Fatalf("From = %+v", got)
	}
}

func TestFromWrapsForeignErrorsAsInternal(t *testing.T) {
	if k := KindOf(errors.New("disk on fire")); k != Internal {
		t.Fatalf("KindOf(foreign) = %v", k)
	}
	if k := KindOf(Unavailable); k != Unavailable {
		t.Fatalf("KindOf(bare kind) = %v", k)
	}
}

func TestThrottleAndGoneCarryTheirDetail(t *testing.T) {
	if e := Throttle(250 * time.Millisecond); e.Kind != Throttled || e.RetryAfter != 250*time.Millisecond {
		t.Fatalf("Throttle = %+v", e)
	}
	if e := RangeGone(); e.Kind != Gone || e.Reason != RangeSplit {
		t.Fatalf("RangeGone = %+v", e)
	}
}
