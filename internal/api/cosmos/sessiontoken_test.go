package cosmos

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestValidSessionTokens(t *testing.T) {
	for _, ok := range []string{"0:-1#12", "0:-1#12,3:1#7#1=20", "12", "5:0#3#0=1#2=9", " 1:-1#2 , 2:-1#3",
		"0:1", "0:1,3:17", "2:5, 0:-1#7", "0:0"} {
		if !validSessionTokens(ok) {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"0:-1#x", "x:-1#1", "0:-1", "0#1", "0:-1#1#2", "0:-1#1#=2", ",", "0:a#1", "-1", "0:+0#00",
		"0:", ":1", "0:+1", "0:1:2", "0:1#", "0: 1"} {
		if validSessionTokens(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A session token gives its range and its global LSN, in every form; a bare LSN holds for
// every range.
func TestParseSessionToken(t *testing.T) {
	for tok, want := range map[string][2]uint64{
		"0:-1#12": {0, 12}, "3:1#7#1=20": {3, 7}, "12": {uint64(anyRange), 12}, "5:0#3#0=1#2=9": {5, 3},
		"0:1": {0, 1}, "7:42": {7, 42},
	} {
		id, lsn, ok := parseSessionToken(tok)
		if !ok || uint64(id) != want[0] || lsn != want[1] {
			t.Errorf("%q: range %d, LSN %d, %v; want %v", tok, id, lsn, ok, want)
		}
	}
	for _, bad := range []string{"0:-1", "x:-1#1", "99999999999:-1#1", "", "0:", "0:x"} {
		if _, _, ok := parseSessionToken(bad); ok {
			t.Errorf("%q read as a token", bad)
		}
	}
}

// The form follows the request's API version: simple up to 2018-06-18, as the service
// answers the SDKs of those versions, vector after it and without a version.
func TestSessionTokenForm(t *testing.T) {
	for version, want := range map[string]string{
		"": "3:-1#9", "2020-11-05": "3:-1#9", "2020-07-15": "3:-1#9", "2018-08-31": "3:-1#9",
		"2018-06-18": "3:9", "2017-11-15": "3:9", "2017-02-22": "3:9", "2015-12-16": "3:9", "2015-04-08": "3:9",
	} {
		r := httptest.NewRequest("GET", "/dbs/d/colls/c/docs/x", nil)
		if version != "" {
			r.Header.Set("x-ms-version", version)
		}
		c := &call{r: r}
		if got := c.sessionToken(3, 9); got != want {
			t.Errorf("x-ms-version %q: token %q, want %q", version, got, want)
		}
		joined := c.sessionTokens(map[uint32]uint64{3: 9, 4: 1})
		if parts := strings.Split(joined, ","); len(parts) != 2 || !validSessionTokens(joined) {
			t.Errorf("x-ms-version %q: tokens %q", version, joined)
		}
	}
}

// Session tokens come from clients: whatever a header holds, reading it never panics and
// what is accepted is well formed and reads back; every token Partita writes, in either form,
// is accepted and reads back as the range and LSN it was made of.
func FuzzSessionTokens(f *testing.F) {
	f.Add("0:-1#12", false, uint32(0), uint64(12))
	f.Add("0:-1#12,3:1#7#1=20", true, uint32(3), uint64(7))
	f.Add("12", false, uint32(1), uint64(0))
	f.Add("0:1,2:5", true, uint32(2), uint64(1<<63))
	f.Fuzz(func(t *testing.T, h string, simple bool, rangeID uint32, lsn uint64) {
		valid := validSessionTokens(h)
		if valid && strings.Trim(h, "0123456789:#=-, \t") != "" {
			t.Fatalf("session token %q with other characters accepted", h)
		}
		for _, tok := range strings.Split(h, ",") {
			_, _, ok := parseSessionToken(strings.Trim(tok, " \t")) // never panics, whatever the form
			if valid && !ok {
				t.Fatalf("%q accepted, but its token %q does not read", h, tok)
			}
		}
		if rangeID == anyRange {
			return // no range has that id: it keys a bare LSN
		}
		form := vectorToken
		if simple {
			form = simpleToken
		}
		tok := formatSessionToken(form, rangeID, lsn)
		if !validSessionTokens(tok) {
			t.Fatalf("our own token %q refused", tok)
		}
		if id, n, ok := parseSessionToken(tok); !ok || id != rangeID || n != lsn {
			t.Fatalf("our own token %q read as range %d, LSN %d, %v", tok, id, n, ok)
		}
	})
}
