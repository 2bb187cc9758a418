package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/partita-db/partita/internal/controlplane/controlplanetest"
)

// emulatorKey is the server's default key (the Cosmos emulator's public one).
const emulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

var partitaBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "partita-e2e")
	if err != nil {
		panic(err)
	}
	partitaBin = os.Getenv("PARTITA_BIN")
	if partitaBin == "" {
		partitaBin = filepath.Join(dir, "partita")
		build := exec.Command("go", "build", "-o", partitaBin, "../cmd/partita")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building partita:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// server is a running `partita serve` process.
type server struct {
	Endpoint string
	addr     string // the Cosmos API's host:port
	DataDir  string
	TLS      bool
	cmd      *exec.Cmd
	client   *http.Client
	// logs is everything the server wrote to stderr so far.
	logsMu sync.Mutex
	logs   strings.Builder
}

// Logs returns what the server has logged so far.
func (s *server) Logs() string {
	s.logsMu.Lock()
	defer s.logsMu.Unlock()
	return s.logs.String()
}

// startServer runs partita serve on a free loopback port with a fresh data directory and
// stops it when the test ends.
func startServer(t testing.TB, useTLS bool, extraArgs ...string) *server {
	t.Helper()
	if os.Getenv("PARTITA_E2E_CLUSTER") != "" {
		return startClusterServer(t, useTLS, extraArgs...)
	}
	return startServerIn(t, t.TempDir(), useTLS, extraArgs...)
}

// startClusterServer starts three nodes of a cluster, each with extraArgs (but the first's
// --cql-addr, which only it takes), and returns the second: the tests that run with
// PARTITA_E2E_CLUSTER set talk to one node of a cluster, as a client of a deployment would,
// and its writes go to whichever node leads their partition.
func startClusterServer(t testing.TB, useTLS bool, extraArgs ...string) *server {
	t.Helper()
	os.Setenv("PARTITA_CLUSTER_SECRET", clusterSecret) // t.Setenv refuses parallel tests
	nodes := launchCluster(t, 3, useTLS, func(i int) []string {
		if i != 1 {
			return append(slices.Clone(extraArgs), "--cql-addr=")
		}
		return extraArgs
	})
	return nodes[1].server
}

func startServerIn(t testing.TB, dataDir string, useTLS bool, extraArgs ...string) *server {
	t.Helper()
	s := launchServer(t, dataDir, useTLS, extraArgs...)
	s.waitListening(t, 10*time.Second)
	return s
}

// launchServer starts partita serve as startServerIn does, without waiting for it to listen
// (nodes of a cluster listen only once a majority of them is up).
func launchServer(t testing.TB, dataDir string, useTLS bool, extraArgs ...string) *server {
	t.Helper()
	return launchServerOf(t, partitaBin, dataDir, useTLS, extraArgs...)
}

// launchServerOf is launchServer with the partita binary bin (another release's).
func launchServerOf(t testing.TB, bin, dataDir string, useTLS bool, extraArgs ...string) *server {
	t.Helper()
	// Not a port of the kernel's choosing: those are in the ephemeral range, where another
	// server launched meanwhile may be given the same one, or a connection may take it.
	addr := controlplanetest.FreeAddr(t)
	// --cql-addr= keeps parallel servers off the Cassandra API's fixed default port; a test
	// that wants it passes its own --cql-addr in extraArgs (the last value wins).
	args := append([]string{"serve", "--data", dataDir, "--addr", addr, "--cql-addr=", fmt.Sprintf("--tls=%v", useTLS), "--log-level", "warn"}, extraArgs...)
	cmd := exec.Command(bin, args...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{DataDir: dataDir, TLS: useTLS, cmd: cmd}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Logf("server: %s", sc.Text())
			s.logsMu.Lock()
			s.logs.WriteString(sc.Text() + "\n")
			s.logsMu.Unlock()
		}
	}()
	t.Cleanup(func() { s.stop(t) })
	scheme := "http"
	if useTLS {
		scheme = "https"
	}
	s.Endpoint = scheme + "://" + addr + "/"
	s.addr = addr
	return s
}

// listensWithin waits until the server listens, up to timeout, or it failed to bind.
func (s *server) listensWithin(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", s.addr, 100*time.Millisecond); err == nil {
			c.Close()
			return true
		}
		if strings.Contains(s.Logs(), "address already in use") {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// waitDial waits until addr accepts connections, up to timeout.
func waitDial(t testing.TB, addr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitListening waits until the server listens, up to timeout.
func (s *server) waitListening(t testing.TB, timeout time.Duration) {
	t.Helper()
	waitDial(t, s.addr, timeout)
	s.client = &http.Client{Timeout: 30 * time.Second}
	if s.TLS {
		s.client.Transport = &http.Transport{TLSClientConfig: s.tlsConfig(t)}
	}
}

// tlsConfig trusts the server's self-signed certificate and nothing else.
func (s *server) tlsConfig(t testing.TB) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(s.DataDir, "tls-cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("the server's certificate is not valid PEM")
	}
	return &tls.Config{RootCAs: pool}
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop(t testing.TB) {
	if s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("server exited with %v", err)
		}
	case <-time.After(15 * time.Second):
		s.cmd.Process.Signal(syscall.SIGQUIT) // its goroutines' stacks, to the test's log
		time.Sleep(2 * time.Second)
		s.cmd.Process.Kill()
		t.Error("server did not stop within 15s of SIGTERM")
	}
}

// sdk returns an azcosmos client for the server, which retries twice.
func (s *server) sdk(t testing.TB) *azcosmos.Client {
	t.Helper()
	return s.sdkWith(t, azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: 2}})
}

// sdkWith returns an azcosmos client for the server with opts, over the server's transport
// (a zero Retry: the SDK's default retries).
func (s *server) sdkWith(t testing.TB, o azcore.ClientOptions) *azcosmos.Client {
	t.Helper()
	cred, err := azcosmos.NewKeyCredential(emulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	o.Transport = s.client
	opts := &azcosmos.ClientOptions{ClientOptions: o}
	c, err := azcosmos.NewClientWithKey(s.Endpoint, cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// forEachTransport runs fn against a fresh server over HTTP and over HTTPS.
func forEachTransport(t *testing.T, fn func(t *testing.T, s *server)) {
	for _, useTLS := range []bool{false, true} {
		name := "http"
		if useTLS {
			name = "https"
		}
		t.Run(name, func(t *testing.T) { fn(t, startServer(t, useTLS)) })
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// statusOf returns the HTTP status of an SDK error, or 0.
func statusOf(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}
