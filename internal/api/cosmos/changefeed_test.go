package cosmos

import (
	"net/http"
	"strconv"
	"strings"
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

func TestValidSessionTokens(t *testing.T) {
	for _, ok := range []string{"0:-1#12", "0:-1#12,3:1#7#1=20", "12", "5:0#3#0=1#2=9", " 1:-1#2 , 2:-1#3"} {
		if !validSessionTokens(ok) {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"0:-1#x", "x:-1#1", "0:-1", "0#1", "0:-1#1#2", "0:-1#1#=2", ",", "0:a#1", "-1", "0:+0#00"} {
		if validSessionTokens(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The conditional headers of a change feed request and session tokens come from clients:
// whatever they hold, parsing them never panics, and what is accepted is well formed.
func FuzzFeedHeaders(f *testing.F) {
	f.Add(`"42"`, "Wed, 01 Jan 2025 00:00:00 GMT", "0:-1#12")
	f.Add("*", "", "0:-1#12,3:1#7#1=20")
	f.Add("", "Wed, 01 Jan 2025 00:00:00 UTC", "12")
	f.Fuzz(func(t *testing.T, inm, ims, session string) {
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
		if validSessionTokens(session) && strings.Trim(session, "0123456789:#=-, \t") != "" {
			t.Fatalf("session token %q with other characters accepted", session)
		}
		for _, tok := range strings.Split(session, ",") {
			parseSessionToken(tok) // never panics, whatever the form
		}
	})
}

// A session token gives its range and its global LSN; a bare LSN holds for every range.
func TestParseSessionToken(t *testing.T) {
	for tok, want := range map[string][2]uint64{
		"0:-1#12": {0, 12}, "3:1#7#1=20": {3, 7}, "12": {uint64(anyRange), 12}, "5:0#3#0=1#2=9": {5, 3},
	} {
		id, lsn, ok := parseSessionToken(tok)
		if !ok || uint64(id) != want[0] || lsn != want[1] {
			t.Errorf("%q: range %d, LSN %d, %v; want %v", tok, id, lsn, ok, want)
		}
	}
	for _, bad := range []string{"0:-1", "x:-1#1", "99999999999:-1#1", ""} {
		if _, _, ok := parseSessionToken(bad); ok {
			t.Errorf("%q read as a token", bad)
		}
	}
}
