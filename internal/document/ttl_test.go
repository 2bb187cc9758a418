package document

import "testing"

func TestExpiryFields(t *testing.T) {
	for _, c := range []struct {
		json   string
		ts     int64
		ttl    int64
		hasTTL bool
	}{
		{`{"id":"a","_ts":100}`, 100, 0, false},
		{`{"id":"a","ttl":5,"_ts":100}`, 100, 5, true},
		{`{"id":"a","ttl":-1,"_ts":100}`, 100, -1, true},
		{`{"id":"a","ttl":5.0,"_ts":100}`, 100, 5, true},
		{`{"id":"a","ttl":0,"_ts":100}`, 100, 0, false},
		{`{"id":"a","ttl":1.5,"_ts":100}`, 100, 0, false},
		{`{"id":"a","ttl":"5","_ts":100}`, 100, 0, false},
		{`{"id":"a","ttl":null,"_ts":100}`, 100, 0, false},
		{`{"id":"a","ttl":-2,"_ts":100}`, 100, 0, false},
		{`{"id":"a","ttl":2147483648,"_ts":100}`, 100, 0, false},
		{`{"n":{"ttl":5,"_ts":1},"_ts":100}`, 100, 0, false}, // nested ones are not the item's
	} {
		ts, ttl, has := ExpiryFields([]byte(c.json))
		if ts != c.ts || ttl != c.ttl || has != c.hasTTL {
			t.Errorf("%s: got %d %d %v, want %d %d %v", c.json, ts, ttl, has, c.ts, c.ttl, c.hasTTL)
		}
	}
}
