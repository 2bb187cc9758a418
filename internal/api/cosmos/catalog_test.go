package cosmos

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/fault"
)

// headerCall is a call carrying only the headers given, for the gateway's header readers.
func headerCall(hdr map[string]string) *call {
	r := httptest.NewRequest(http.MethodGet, "/dbs", nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	return &call{w: httptest.NewRecorder(), r: r}
}

// The throughput of a create request comes in headers: whatever they hold, reading them never
// panics, every refusal is a 400, and what is accepted is one positive throughput, manual or
// autoscale, as the header that gave it says.
func FuzzThroughputHeaders(f *testing.F) {
	for _, s := range [][2]string{
		{"400", ""}, {"", `{"maxThroughput":4000}`}, {"400", `{"maxThroughput":4000}`}, {"0", ""}, {"-400", ""}, {"4e2", ""},
		{"400.0", ""}, {" 400", ""}, {"+400", ""}, {"0x190", ""}, {strings.Repeat("9", 400), ""}, {"9223372036854775807", ""},
		{"", `{"maxThroughput":0}`}, {"", `{"maxThroughput":-1}`}, {"", `{"maxThroughput":1e400}`}, {"", `{"maxThroughput":"4000"}`},
		{"", `{"maxThroughput":4000.5}`}, {"", `{}`}, {"", `null`}, {"", `[]`}, {"", `{"maxThroughput":4000,"maxThroughput":0}`},
		{"", "\xef\xbb\xbf{\"maxThroughput\":4000}"}, {"", `{"maxThroughput":4000`}, {"", `{"autoUpgradePolicy":{}}`}, {"\xff", "\xff"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, manual, auto string) {
		c := headerCall(map[string]string{"X-Ms-Offer-Throughput": manual, "X-Ms-Cosmos-Offer-Autopilot-Settings": auto})
		tp, err := c.throughputHeaders()
		if err != nil {
			if !errors.Is(err, fault.BadRequest) {
				t.Fatalf("%q %q: failure is not a 400: %v", manual, auto, err)
			}
			return
		}
		switch {
		case manual == "" && auto == "":
			if tp != nil {
				t.Fatalf("no headers read as %+v", *tp)
			}
		case tp == nil:
			t.Fatalf("%q %q read as no throughput", manual, auto)
		case manual != "" && (tp.Manual <= 0 || tp.AutoscaleMax != 0),
			auto != "" && (tp.AutoscaleMax <= 0 || tp.Manual != 0):
			t.Fatalf("%q %q read as %+v", manual, auto, *tp)
		}
	})
}

// Lists of databases, containers and scripts are paged by x-ms-max-item-count and a
// continuation naming the last id of the previous page, both from the client: whatever they
// hold, paging never panics, every refusal is a 400, and a page is the ids after the token's,
// at most as many as asked for, with a continuation naming its last one when more follow.
func FuzzListPage(f *testing.F) {
	tok := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, s := range []struct {
		n        uint8
		max, tok string
	}{
		{10, "", ""}, {10, "3", ""}, {10, "3", tok("id002")}, {10, "-1", tok("id009")}, {10, "1", tok("zzz")}, {10, "1", tok("")},
		{0, "5", tok("id000")}, {10, "0", ""}, {10, "-2", ""}, {10, "1e3", ""}, {10, strings.Repeat("9", 400), ""},
		{10, "9223372036854775807", ""}, {10, " 3", ""}, {10, "", "!!"}, {10, "", tok("id002") + "="}, {10, "", "aWQwMDI="},
		{10, "", tok("id\xff")}, {10, "", tok(strings.Repeat("z", 3000))}, {255, "7", tok("id100")},
	} {
		f.Add(s.n, s.max, s.tok)
	}
	f.Fuzz(func(t *testing.T, n uint8, max, token string) {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("id%03d", i)
		}
		c := headerCall(map[string]string{"X-Ms-Max-Item-Count": max, "X-Ms-Continuation": token})
		lo, hi, err := c.page(len(ids), func(i int) string { return ids[i] })
		if err != nil {
			if !errors.Is(err, fault.BadRequest) {
				t.Fatalf("%q %q: failure is not a 400: %v", max, token, err)
			}
			return
		}
		if lo < 0 || lo > hi || hi > len(ids) {
			t.Fatalf("%q %q: page [%d, %d) of %d", max, token, lo, hi, len(ids))
		}
		if token != "" {
			last, _ := base64.RawURLEncoding.DecodeString(token)
			if lo < hi && ids[lo] <= string(last) || lo > 0 && ids[lo-1] > string(last) {
				t.Fatalf("%q: page starts at %d, after %q", token, lo, last)
			}
		}
		if m, err := strconv.Atoi(max); err == nil && m > 0 && hi-lo > m {
			t.Fatalf("%q: %d ids on the page", max, hi-lo)
		}
		next := received(c.w.(*httptest.ResponseRecorder)).Header().Get("X-Ms-Continuation")
		if (next != "") != (hi < len(ids)) {
			t.Fatalf("%q %q: page [%d, %d) of %d with continuation %q", max, token, lo, hi, len(ids), next)
		}
		if next != "" {
			if last, err := base64.RawURLEncoding.DecodeString(next); err != nil || string(last) != ids[hi-1] {
				t.Fatalf("continuation %q after page [%d, %d): %q, %v", next, lo, hi, last, err)
			}
		}
	})
}
