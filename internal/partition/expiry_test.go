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
		if got := c.l.expiredJSON(c.doc); got != c.want {
			t.Errorf("%+v %s: expired %v, want %v", c.l, c.doc, got, c.want)
		}
	}
	// A logical partition being deleted: its versions at or below the bound are gone, those
	// written after are not, and other logical partitions keep theirs; time to live still
	// judges what the deletion leaves.
	at := func(lsn uint64, doc []byte) stored { return stored{log: logPos{lsn: lsn}, json: doc} }
	for _, c := range []struct {
		l    liveness
		e    string
		d    stored
		want bool
	}{
		{liveness{gone: keyDeletes{"k": 10}}, "k", at(10, doc), true},
		{liveness{gone: keyDeletes{"k": 10}}, "k", at(11, doc), false},
		{liveness{gone: keyDeletes{"k": 10}}, "j", at(3, doc), false},
		{liveness{def: 10, now: 110, gone: keyDeletes{"k": 10}}, "k", at(11, doc), true},
		{liveness{}, "k", at(1, doc), false},
	} {
		if got, gotIn := c.l.expired([]byte(c.e), c.d), c.l.expiredIn(c.e, c.d); got != c.want || gotIn != c.want {
			t.Errorf("%+v %s at %d: expired %v and %v, want %v", c.l, c.e, c.d.lsn(), got, gotIn, c.want)
		}
	}
}
