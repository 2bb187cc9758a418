package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/partita-db/partita/internal/client"
	"github.com/partita-db/partita/internal/server"
)

// testServer starts a real Partita server in the test process, on a free loopback port, over
// plain HTTP, with the rate limit on or off, and stops it when the test ends.
func testServer(t *testing.T, rateLimit bool) string {
	t.Helper()
	s, err := server.Start(server.Config{DataDir: t.TempDir(), CosmosAddr: "127.0.0.1:0", Key: server.EmulatorKey, RateLimit: rateLimit},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return "http://" + s.Addr().String() + "/"
}

// run runs one of partita's commands in-process with args and stdin, as the binary would.
func run(t *testing.T, cmd *cobra.Command, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func testClient(t *testing.T, endpoint string) *client.Client {
	t.Helper()
	c, err := client.New(endpoint, client.Options{Key: server.EmulatorKey})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// count is how many items the container holds.
func count(t *testing.T, endpoint, container string) int {
	t.Helper()
	out, _, err := run(t, sqlCommand(), "", "--endpoint", endpoint, "--db", "db", "--container", container, "--format", "json",
		"-e", "SELECT VALUE COUNT(1) FROM c")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if _, err := fmt.Sscanf(strings.Trim(out, "[] \n"), "%d", &n); err != nil {
		t.Fatalf("count: %q", out)
	}
	return n
}

// writeItems writes n items as JSON lines: ids i00000..., 20 partition key values, a number
// and a nested object.
func writeItems(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"i%05d","pk":"p%d","n":%d,"nested":{"x":%g,"tags":["a","b"]}}`+"\n", i, i%20, i, float64(i)*1.5)
	}
	path := filepath.Join(t.TempDir(), "items.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// load imports the items file into a new container.
func load(t *testing.T, endpoint, container, file string, extra ...string) (stderr string, err error) {
	t.Helper()
	args := append([]string{"--endpoint", endpoint, "--db", "db", "--container", container,
		"--create-container", "--partition-key", "/pk", file}, extra...)
	_, stderr, err = run(t, importCommand(), "", args...)
	return stderr, err
}
