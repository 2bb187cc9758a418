package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/masterkey"
)

const testKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// The client signs what it sends with the key, for the link and type it was given, on the
// escaped path.
func TestDoSigns(t *testing.T) {
	k, _ := masterkey.Parse(testKey)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		want := k.Authorization(r.Method, "docs", "dbs/d 1/colls/c", r.Header.Get("x-ms-date"))
		if r.Header.Get("Authorization") != want || r.URL.EscapedPath() != "/dbs/d%201/colls/c/docs" {
			http.Error(w, `{"code":"Unauthorized","message":"bad signature"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("x-ms-request-charge", "5.5")
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	c, err := New(srv.URL+"/", Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(context.Background(), Request{Method: "POST", Type: "docs", Link: "dbs/d 1/colls/c", Feed: true, Body: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusCreated || resp.Charge != 5.5 {
		t.Fatalf("got %d, charge %v", resp.Status, resp.Charge)
	}
}

// A 429 is retried after the server's retry-after; other failures come back as *Error with the
// server's code and message.
func TestDoRetriesThrottles(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1, 2:
			w.Header().Set("x-ms-retry-after-ms", "5")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"code":"TooManyRequests","message":"slow down"}`))
		case 3:
			w.Write([]byte(`{}`))
		default:
			w.Header().Set("x-ms-substatus", "1002")
			w.WriteHeader(http.StatusGone)
			w.Write([]byte(`{"code":"Gone","message":"split"}`))
		}
	}))
	defer srv.Close()
	var waits []time.Duration
	c, _ := New(srv.URL, Options{Key: testKey, OnThrottle: func(d time.Duration) { waits = append(waits, d) }})
	resp, err := c.Do(context.Background(), Request{Method: "GET", Type: "dbs", Link: ""})
	if err != nil || resp.Throttled != 2 || len(waits) != 2 || waits[0] != 5*time.Millisecond {
		t.Fatalf("resp %+v, err %v, waits %v", resp, err, waits)
	}
	_, err = c.Do(context.Background(), Request{Method: "GET", Type: "dbs", Link: ""})
	var e *Error
	if !errors.As(err, &e) || e.Status != 410 || e.SubStatus != 1002 || e.Code != "Gone" || !strings.Contains(err.Error(), "split") {
		t.Fatalf("err %v", err)
	}
	// With retries off the 429 itself comes back.
	calls.Store(0)
	c, _ = New(srv.URL, Options{Key: testKey, MaxThrottleRetries: -1})
	if _, err := c.Do(context.Background(), Request{Method: "GET", Type: "dbs"}); StatusOf(err) != 429 {
		t.Fatalf("err %v", err)
	}
}

func TestNewRefusesBadInput(t *testing.T) {
	if _, err := New("127.0.0.1:8081", Options{Key: testKey}); err == nil {
		t.Fatal("endpoint without scheme accepted")
	}
	if _, err := New("https://127.0.0.1:8081/", Options{Key: "not base64!"}); err == nil {
		t.Fatal("bad key accepted")
	}
}
