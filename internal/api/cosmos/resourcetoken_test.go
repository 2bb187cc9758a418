package cosmos

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/masterkey"
	"github.com/partita-db/partita/internal/rid"
)

func testTokens(t testing.TB, key string) *resourceTokens {
	k, err := masterkey.Parse(key)
	if err != nil {
		t.Fatal(err)
	}
	return newResourceTokens(k, nil)
}

func testGrant() engine.Grant {
	u := rid.ForUser(rid.ForDatabase(3), 7)
	return engine.Grant{Permission: rid.ForPermission(u, 9), Container: rid.ForContainer(rid.ForDatabase(3), 4), Mode: engine.ModeRead,
		PartitionKey: epk.Key{epk.String("a\"b"), epk.Number(math.Copysign(0, -1)), epk.Undefined()}}
}

// What a token says comes back as it was issued, and only from this key's tokens.
func TestIssueVerify(t *testing.T) {
	tokens := testTokens(t, testKey)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, g := range []engine.Grant{testGrant(), {Mode: engine.ModeAll}} {
		tok := tokens.issue(g, now, 90*time.Second)
		sig, ok := strings.CutPrefix(tok, "type=resource&ver=1.0&sig=")
		if !ok || strings.ContainsAny(sig, "+/=&% ") {
			t.Fatalf("token %q is not URL-safe in Cosmos's shape", tok)
		}
		c, err := tokens.verify([]byte(sig))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c.grant, g) {
			t.Errorf("claims %+v, want %+v", c.grant, g)
		}
		if !c.issued.Equal(now) || !c.expiry.Equal(now.Add(90*time.Second)) {
			t.Errorf("valid from %v to %v", c.issued, c.expiry)
		}
		if _, err := testTokens(t, "b3RoZXIga2V5").verify([]byte(sig)); statusOf(err) != 401 {
			t.Errorf("another key accepted the token: %v", err)
		}
	}
	// -0 survives: it is another logical partition than 0.
	c, _ := tokens.verify([]byte(strings.TrimPrefix(tokens.issue(testGrant(), now, time.Minute), "type=resource&ver=1.0&sig=")))
	if c.grant.PartitionKey.HasPrefix(epk.Key{epk.String("a\"b"), epk.Number(0)}) {
		t.Error("-0 came back as 0")
	}
}

// FuzzVerifyResourceToken feeds arbitrary sigs: none may panic, and only the issued claims
// (in whatever base64 spelling) may pass.
func FuzzVerifyResourceToken(f *testing.F) {
	tokens := testTokens(f, testKey)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	good := strings.TrimPrefix(tokens.issue(testGrant(), now, time.Hour), "type=resource&ver=1.0&sig=")
	want, err := tokens.verify([]byte(good))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(strings.Replace(good, ".", "..", 1))
	f.Add("AQ." + good[strings.IndexByte(good, '.')+1:])
	f.Fuzz(func(t *testing.T, sig string) {
		c, err := tokens.verify([]byte(sig))
		if err == nil && !reflect.DeepEqual(c, want) {
			t.Fatalf("accepted %q as %+v", sig, c)
		}
		if err != nil && statusOf(err) != 401 {
			t.Fatalf("status %d for %q", statusOf(err), sig)
		}
	})
}
