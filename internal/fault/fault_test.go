package fault

import (
	"errors"
	"fmt"
	"io/fs"
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

// An Error keeps what its message wrapped with %w, so errors.Is and errors.As find a storage
// error behind it, and its kind still answers errors.Is.
func TestErrorUnwrapsItsCause(t *testing.T) {
	cause := fs.ErrNotExist
	e := New(Internal, "reading %s: %w", "000123.sst", cause)
	if !errors.Is(e, fs.ErrNotExist) || !errors.Is(e, Internal) || errors.Is(e, NotFound) {
		t.Errorf("errors.Is does not see %v's cause and kind", e)
	}
	if e.Message != "reading 000123.sst: file does not exist" {
		t.Errorf("message %q", e.Message)
	}
	wrapped := fmt.Errorf("outer: %w", e)
	var pe *Error
	if !errors.As(wrapped, &pe) || pe != e || !errors.Is(wrapped, fs.ErrNotExist) {
		t.Errorf("the chain through %v is broken", wrapped)
	}
	if New(BadRequest, "plain %v", cause).Unwrap() != nil {
		t.Error("a plain (non-%w) argument is wrapped")
	}
}
