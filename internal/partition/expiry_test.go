package partition

import "testing"

// An entry written before time to live existed decodes as it did; an expiry's delete keeps its
// flag, and the flag on anything but a delete is refused.
func TestLogEntryExpiredFlag(t *testing.T) {
	prev := logPos{lsn: 7, i: 0}
	old := appendEntry(nil, LogDelete, 3, 100, prev, "e", "id")
	e, err := decodeEntry(old)
	if err != nil || e.op != LogDelete || e.expired || e.seq != 3 || e.prev != prev {
		t.Fatalf("plain delete: %+v, %v", e, err)
	}
	flagged := append([]byte(nil), old...)
	flagged[0] |= logExpired
	e, err = decodeEntry(flagged)
	if err != nil || e.op != LogDelete || !e.expired || string(e.id) != "id" {
		t.Fatalf("expired delete: %+v, %v", e, err)
	}
	create := appendEntry(nil, LogCreate, 3, 100, logPos{}, "e", "id")
	create[0] |= logExpired
	if _, err := decodeEntry(create); err == nil {
		t.Fatal("an expired create decoded")
	}
}

func TestLiveness(t *testing.T) {
	doc := []byte(`{"id":"a","_ts":100}`)
	own := []byte(`{"id":"a","ttl":5,"_ts":100}`)
	never := []byte(`{"id":"a","ttl":-1,"_ts":100}`)
	for _, c := range []struct {
		l    liveness
		doc  []byte
		want bool
	}{
		{liveness{def: TTLOff, now: 1 << 40}, own, false},
		{liveness{def: TTLNoDefault, now: 1 << 40}, doc, false},
		{liveness{def: TTLNoDefault, now: 104}, own, false},
		{liveness{def: TTLNoDefault, now: 105}, own, true},
		{liveness{def: 10, now: 109}, doc, false},
		{liveness{def: 10, now: 110}, doc, true},
		{liveness{def: 10, now: 1 << 40}, never, false},
		{liveness{def: 1000, now: 105}, own, true}, // the item's own overrides a longer default
	} {
		if got := c.l.expired(c.doc); got != c.want {
			t.Errorf("%+v %s: expired %v, want %v", c.l, c.doc, got, c.want)
		}
	}
}
