package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func testConfig(t *testing.T, addr string) Config {
	return Config{DataDir: t.TempDir(), CosmosAddr: addr, Key: EmulatorKey, CacheSize: 8 << 20}
}

var quiet = slog.New(slog.DiscardHandler)

func TestStartServesCosmosAndMetrics(t *testing.T) {
	s, err := Start(testConfig(t, "127.0.0.1:0"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + s.Addr().String()
	if got := s.Addrs()["cosmos"]; got != s.Addr() {
		t.Fatalf("Addrs()[cosmos] = %v, Addr() = %v", got, s.Addr())
	}
	res, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), `"code":"Unauthorized"`) {
		t.Fatalf("unsigned GET / = %d %s, want 401 with a Cosmos error body", res.StatusCode, body)
	}
	res, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d", res.StatusCode)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	select {
	case err := <-s.Done():
		if !errors.Is(err, http.ErrServerClosed) {
			t.Fatalf("Done after Shutdown = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Done yielded nothing after Shutdown")
	}
}

// A listener that cannot be bound fails Start and leaves the data directory free to open again.
func TestStartBindFailureClosesEngine(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := testConfig(t, taken.Addr().String())
	if s, err := Start(cfg, quiet); err == nil {
		s.Shutdown(context.Background())
		t.Fatal("Start on a taken port succeeded")
	}
	cfg.CosmosAddr = "127.0.0.1:0"
	s, err := Start(cfg, quiet)
	if err != nil {
		t.Fatalf("restarting on the same data directory: %v", err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	err := testConfig(t, "8081").Validate()
	if err == nil || !strings.HasPrefix(err.Error(), "--addr ") {
		t.Fatalf("Validate with a bad address = %v", err)
	}
}

func TestValidateMinPartitions(t *testing.T) {
	for _, n := range []int{-1, 65} {
		cfg := testConfig(t, "127.0.0.1:8081")
		cfg.MinPartitions = n
		if err := cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), "--min-partitions ") {
			t.Errorf("Validate with --min-partitions %d = %v", n, err)
		}
	}
	cfg := testConfig(t, "127.0.0.1:8081")
	cfg.MinPartitions = 64
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate with --min-partitions 64 = %v", err)
	}
}

// fake is a front end that serves until shut down, or fails when told to.
type fake struct {
	n       string
	fail    chan error
	stop    chan struct{}
	stopped atomic.Bool
}

func newFake(name string) *fake {
	return &fake{n: name, fail: make(chan error, 1), stop: make(chan struct{})}
}

func (f *fake) name() string                  { return f.n }
func (f *fake) endpoint(a net.Addr) slog.Attr { return slog.String(f.n, a.String()) }
func (f *fake) serve(ln net.Listener) error {
	select {
	case err := <-f.fail:
		return err
	case <-f.stop:
		return nil
	}
}
func (f *fake) shutdown(context.Context) error {
	f.stopped.Store(true)
	close(f.stop)
	return nil
}

// When one listener cannot be bound, the ones bound before it are closed.
func TestBindClosesWhatItOpened(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ls := []listener{{fe: newFake("a"), addr: "127.0.0.1:0"}, {fe: newFake("b"), addr: taken.Addr().String()}}
	if err := bind(ls); err == nil {
		t.Fatal("bind succeeded on a taken port")
	}
	if _, err := ls[0].ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("first listener still open after the second failed to bind: %v", err)
	}
}

// Shutdown stops every front end, and Done reports the first that failed on its own.
func TestServerRunsEveryFrontend(t *testing.T) {
	s, err := Start(testConfig(t, "127.0.0.1:0"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	a, b := newFake("a"), newFake("b")
	extra := []listener{{fe: a, addr: "127.0.0.1:0"}, {fe: b, addr: "127.0.0.1:0"}}
	if err := bind(extra); err != nil {
		t.Fatal(err)
	}
	s.listeners = append(s.listeners, extra...)
	for _, l := range extra {
		go s.run(l)
	}
	if n := len(s.Addrs()); n != 3 {
		t.Fatalf("Addrs has %d entries, want 3", n)
	}
	boom := errors.New("boom")
	b.fail <- boom
	select {
	case err := <-s.Done():
		if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "b: ") {
			t.Fatalf("Done = %v, want b's failure", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Done did not report the failed front end")
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !a.stopped.Load() || !b.stopped.Load() {
		t.Fatal("Shutdown left a front end running")
	}
}

// With --cql-addr the Cassandra API is served too, its address in Addrs, and shut down with
// the rest.
func TestStartServesCQL(t *testing.T) {
	cfg := testConfig(t, "127.0.0.1:0")
	cfg.CQLAddr = "127.0.0.1:0"
	s, err := Start(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	addr := s.Addrs()["cql"]
	if addr == nil {
		t.Fatal("no cql address")
	}
	nc, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// OPTIONS on stream 1; the answer is a v4 SUPPORTED on stream 1.
	if _, err := nc.Write([]byte{4, 0, 0, 1, 5, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	h := make([]byte, 9)
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(nc, h); err != nil || h[0] != 0x84 || h[3] != 1 || h[4] != 6 {
		t.Fatalf("OPTIONS answered header % x, %v; want a v4 SUPPORTED on stream 1", h, err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestCQLAddrValidated(t *testing.T) {
	cfg := testConfig(t, "127.0.0.1:0")
	cfg.CQLAddr = "9042"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--cql-addr") {
		t.Fatalf("Validate with --cql-addr 9042 = %v", err)
	}
}
