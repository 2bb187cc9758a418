package masterkey

import (
	"encoding/base64"
	"net/url"
	"sync"
	"testing"
)

const emulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// Fixed vectors, computed once outside Go with
//
//	printf '<payload>' | openssl dgst -sha256 -mac HMAC -macopt hexkey:<key as hex> -binary | base64
//
// over the lower-cased payload. The second pins that verb, type and date are lower-cased and
// the link is not.
var vectors = []struct {
	verb, typ, link, date string
	sig                   string
}{
	{"get", "docs", "dbs/d/colls/c/docs/x", "sun, 22 nov 2026 08:00:00 gmt", "ktCwfR04gFc4Xez779/X55gnR6x7tPW2t2pJjEC3j7Y="},
	{"POST", "DOCS", "dbs/MyDb/colls/Items", "Mon, 01 Jan 2024 12:34:56 GMT", "2crUuv71KPIcQLjfhDsy9lO1dPuKli5uqEWHexjwZQ4="},
}

func TestVectors(t *testing.T) {
	k, err := Parse(emulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vectors {
		raw := k.AppendSignature([]byte("prefix"), v.verb, v.typ, v.link, v.date)
		if got := base64.StdEncoding.EncodeToString(raw[len("prefix"):]); got != v.sig || string(raw[:len("prefix")]) != "prefix" {
			t.Errorf("%s %s %s: signature %s, want %s", v.verb, v.typ, v.link, got, v.sig)
		}
		want := url.QueryEscape("type=master&ver=1.0&sig=" + v.sig)
		if got := k.Authorization(v.verb, v.typ, v.link, v.date); got != want {
			t.Errorf("%s %s %s: Authorization %s, want %s", v.verb, v.typ, v.link, got, want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, bad := range []string{"", "not base64!", "QUJD="} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

// Signers are shared between goroutines through the pool; each signature must stay its own.
func TestConcurrent(t *testing.T) {
	k, _ := Parse(emulatorKey)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				v := vectors[i%len(vectors)]
				if got := base64.StdEncoding.EncodeToString(k.AppendSignature(nil, v.verb, v.typ, v.link, v.date)); got != v.sig {
					t.Errorf("signature %s, want %s", got, v.sig)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// A derived key depends on the account key and the purpose, and is neither the key itself
// nor the signature of any request.
func TestDerive(t *testing.T) {
	k, _ := Parse(emulatorKey)
	other, _ := Parse("b3RoZXIga2V5")
	a, b := k.Derive("resource token v1"), k.Derive("something else")
	if len(a) != Size || string(a) == string(b) || string(a) == string(other.Derive("resource token v1")) || string(a) == string(k.secret) {
		t.Fatalf("derived keys %x %x", a, b)
	}
	if string(a) != string(k.Derive("resource token v1")) {
		t.Fatal("a derived key changes")
	}
}
