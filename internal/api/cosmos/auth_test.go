package cosmos

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/masterkey"
)

const testKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// token is the Authorization value a client sends, unescaped. The signature itself is checked
// against fixed vectors in package masterkey.
func token(key *masterkey.Key, verb, typ, link, date string) string {
	tok, err := url.QueryUnescape(key.Authorization(verb, typ, link, date))
	if err != nil {
		panic(err)
	}
	return tok
}

func authRequest(auth, date string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/dbs/d/colls/c/docs/x", nil)
	r.Header.Set("Authorization", auth)
	r.Header.Set("x-ms-date", date)
	return r
}

// authFixture is a keyring, a clock, and the true signature of a read of item x at that time.
func authFixture(t testing.TB) (k keyring, now time.Time, date string, res resource, good string) {
	k, err := newKeyring(testKey, "")
	if err != nil {
		t.Fatal(err)
	}
	now = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	res, _ = parseResource("/dbs/d/colls/c/docs/x")
	good = token(k.primary, "get", "docs", "dbs/d/colls/c/docs/x", "sun, 22 nov 2026 08:00:00 gmt")
	return k, now, now.Format(http.TimeFormat), res, good
}

func TestAuthenticate(t *testing.T) {
	k, now, date, res, good := authFixture(t)
	for _, tc := range []struct {
		name, auth, date string
		status           int
	}{
		{"plain", good, date, 0},
		{"url-encoded", url.QueryEscape(good), date, 0},
		{"wrong link", token(k.primary, "get", "docs", "dbs/d/colls/c/docs/y", "sun, 22 nov 2026 08:00:00 gmt"), date, 401},
		{"wrong verb", token(k.primary, "put", "docs", "dbs/d/colls/c/docs/x", "sun, 22 nov 2026 08:00:00 gmt"), date, 401},
		{"resource token", "type=resource&ver=1.0&sig=abc", date, 401},
		{"bad base64", "type=master&ver=1.0&sig=!!!", date, 401},
		{"long signature", "type=master&ver=1.0&sig=" + base64.StdEncoding.EncodeToString(make([]byte, 200)), date, 401},
		{"empty", "", date, 401},
		{"stale date", good, now.Add(-16 * time.Minute).Format(http.TimeFormat), 403},
	} {
		err := k.authenticate(authRequest(tc.auth, tc.date), res, now)
		if got := statusOf(err); got != tc.status {
			t.Errorf("%s: status %d (%v), want %d", tc.name, got, err, tc.status)
		}
	}
}

func statusOf(err error) int {
	if err == nil {
		return 0
	}
	w, _ := toWire(err)
	return w.status
}

// FuzzAuthenticate feeds arbitrary Authorization headers: none may panic, and only the one
// true signature (in any escaping) may pass.
func FuzzAuthenticate(f *testing.F) {
	k, now, date, res, good := authFixture(f)
	f.Add(good)
	f.Add(url.QueryEscape(good))
	f.Add("type=master&sig=%ZZ&ver=%")
	f.Add("type=master&ver=1.0&sig=" + base64.StdEncoding.EncodeToString(make([]byte, 64)))
	f.Fuzz(func(t *testing.T, auth string) {
		err := k.authenticate(authRequest(auth, date), res, now)
		if err == nil {
			// An HMAC cannot be guessed: whatever passed must carry the true signature (base64
			// decoding skips line breaks, which HTTP headers cannot carry anyway).
			tok := strings.NewReplacer("\r", "", "\n", "").Replace(string(appendUnescaped(nil, auth)))
			if !strings.Contains(tok, good[strings.Index(good, "sig="):]) {
				t.Fatalf("accepted %q", auth)
			}
		} else if s := statusOf(err); s != 401 {
			t.Fatalf("status %d for %q", s, auth)
		}
	})
}
