package cosmos

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/tracing"
)

// An internal failure answers a generic message naming the request's activity id, never the
// text of the error behind it, which goes to the log under that id. Other failures keep
// their message: it tells the client what to change.
func TestFailHidesInternalCauses(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		shown  string
	}{
		{fault.New(fault.Internal, "pebble: checksum mismatch in 000123.sst"), 500, "An unexpected error occurred while processing the request. ActivityId: act-1"},
		{fault.New(fault.Unavailable, "The partition is being split; retry"), 503, "The partition is being split; retry"},
		{fault.New(fault.BadRequest, "The id is too long"), 400, "The id is too long"},
	} {
		var logged bytes.Buffer
		h := &Handler{log: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		w := httptest.NewRecorder()
		c := &call{h: h, w: w, r: httptest.NewRequest(http.MethodGet, "/dbs/db", nil), ctx: tracing.WithActivity(context.Background(), "act-1")}
		c.fail(tc.err)
		var body struct{ Message string }
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if w.Code != tc.status || body.Message != tc.shown {
			t.Errorf("%v: answered %d %q, want %d %q", tc.err, w.Code, body.Message, tc.status, tc.shown)
		}
		cause := fault.From(tc.err).Message
		if !strings.Contains(logged.String(), cause) || !strings.Contains(logged.String(), "activity=act-1") {
			t.Errorf("%v: the log does not hold the cause under the activity id:\n%s", tc.err, logged.String())
		}
	}
}
