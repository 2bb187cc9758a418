package cosmos

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

func TestFeedStart(t *testing.T) {
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		inm, ims string
		after    uint64 // with HasAfter
		now      bool
		since    time.Time
		bad      bool
	}{
		{},
		{inm: "*", now: true},
		{inm: `"42"`, after: 42},
		{inm: "42", after: 42},
		{ims: "Wed, 01 Jan 2025 00:00:00 GMT", since: at},            // JS
		{ims: "Wed, 01 Jan 2025 00:00:00 UTC", since: at},            // Go
		{inm: `"7"`, ims: "Wed, 01 Jan 2025 00:00:00 GMT", after: 7}, // a continuation wins
		{inm: `"x"`, bad: true},
		{inm: `"-1"`, bad: true},
		{ims: "yesterday", bad: true},
	} {
		h := http.Header{}
		if tc.inm != "" {
			h.Set("If-None-Match", tc.inm)
		}
		if tc.ims != "" {
			h.Set("If-Modified-Since", tc.ims)
		}
		s, err := feedStart(h)
		if (err != nil) != tc.bad {
			t.Fatalf("%q %q: error %v", tc.inm, tc.ims, err)
		}
		if tc.bad {
			continue
		}
		if s.Now != tc.now || s.HasAfter != (tc.after != 0) || s.After != tc.after || !s.Since.Equal(tc.since) {
			t.Fatalf("%q %q: got %+v", tc.inm, tc.ims, s)
		}
	}
}

func TestWithLSN(t *testing.T) {
	for in, want := range map[string]string{
		`{"id":"a"}`: `{"id":"a","_lsn":9}`,
		`{}`:         `{"_lsn":9}`,
		`{ }`:        `{ "_lsn":9}`,
	} {
		if got := string(withLSN([]byte(in), 9)); got != want {
			t.Fatalf("withLSN(%s) = %s, want %s", in, got, want)
		}
	}
}

// The conditional headers of a change feed request come from clients: whatever they hold,
// parsing them never panics, and what is accepted is well formed. (Session tokens have their
// own target, FuzzSessionTokens.)
func FuzzFeedHeaders(f *testing.F) {
	f.Add(`"42"`, "Wed, 01 Jan 2025 00:00:00 GMT")
	f.Add("*", "")
	f.Add("", "Wed, 01 Jan 2025 00:00:00 UTC")
	f.Fuzz(func(t *testing.T, inm, ims string) {
		h := http.Header{}
		h.Set("If-None-Match", inm)
		h.Set("If-Modified-Since", ims)
		s, err := feedStart(h)
		if err == nil && s.HasAfter {
			// An accepted etag is an LSN: the etag of that LSN reads back the same.
			h.Set("If-None-Match", quoted(strconv.FormatUint(s.After, 10)))
			if again, err := feedStart(h); err != nil || again.After != s.After || s.Now {
				t.Fatalf("%q: read as %+v, its own etag as %+v, %v", inm, s, again, err)
			}
		}
	})
}
