package e2e

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/partita-db/partita/internal/controlplane/controlplanetest"
)

// python3With is Debian's Python 3 when it can import every module named; the test is skipped
// otherwise, unless CI is set (.ci/run installs the packages).
func python3With(t *testing.T, modules ...string) string {
	t.Helper()
	const py = "/usr/bin/python3"
	for _, m := range modules {
		if err := exec.Command(py, "-c", "import "+m).Run(); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s cannot import %s (Debian: apt-get install python3-azure-cosmos python3-cassandra): %v", py, m, err)
			}
			t.Skipf("%s cannot import %s: %v", py, m, err)
		}
	}
	return py
}

// The Azure Cosmos Python SDK 3.x, as Debian packages it (python3-azure-cosmos 3.1.1), against
// a server alone: it joins the endpoint and its paths with a doubled slash, looks response
// headers up in lower case, and addresses resources by their _self links (resource ids), so
// each of these is exercised by an ordinary session: databases, containers, items by name and
// by _self, a query paged by continuation, a stored procedure, 409 and 404.
func TestPythonSDK3(t *testing.T) {
	py := python3With(t, "azure.cosmos.cosmos_client")
	srv := startServer(t, false)
	got, out := runPython(t, py, "cosmos_sdk3.py", srv.Endpoint, emulatorKey)
	want := map[string]any{
		"database": "py", "container": "items",
		"read_by_name": 3.0, "read_by_self": 4.0, "replaced_by_self": 40.0,
		"read_database_by_self": "py", "read_container_by_self": "items",
		"query":         []any{0.0, 1.0, 2.0, 3.0, 5.0, 6.0, 40.0},
		"query_by_self": []any{"i1", "i3", "i5"},
		"session_token": true, "sproc": 4.0,
		"duplicate_status": 409.0, "missing_status": 404.0, "count_after_delete": 6.0,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the Python SDK saw\n%s\nwant\n%v", out, want)
	}
}

// runPython runs a script of testdata/python and reads the JSON object it prints.
func runPython(t *testing.T, py, script string, args ...string) (map[string]any, []byte) {
	t.Helper()
	cmd := exec.Command(py, append([]string{filepath.Join("testdata", "python", script)}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s failed: %v\n%s\n%s", script, err, out, stderr.Bytes())
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v: %s\n%s", script, err, out, stderr.Bytes())
	}
	return got, out
}

// The DataStax Python driver (Debian's python3-cassandra 3.25), the one cqlsh is built on,
// against the Cassandra API: it negotiates the protocol down to v4, reads Partita as a
// Cassandra 4.0 node, USEs a system keyspace and reads the description of its tables, runs
// DESCRIBE on the server as cqlsh 6 does (and the CREATE TABLE it returns, which describes the
// same table again), and builds its own metadata from system_schema.
func TestPythonCassandraDriver(t *testing.T) {
	py := python3With(t, "cassandra.cluster")
	cqlAddr := controlplanetest.FreeAddr(t)
	startServer(t, false, "--cql-addr", cqlAddr)
	host, port, _ := net.SplitHostPort(cqlAddr)
	got, out := runPython(t, py, "cassandra_driver.py", host, port, emulatorKey)
	want := map[string]any{
		"release_version":     "4.0.13",
		"rows":                []any{"item2", "item1", "item0"},
		"use_system":          "local",
		"system_columns":      []any{"bootstrapped", "broadcast_address", "cluster_name"},
		"describe_keyspaces":  []any{"system", "system_schema", "system_auth", "system_distributed", "system_traces", "shop"},
		"describe_table_head": "CREATE TABLE shop.orders (",
		"describe_replays":    true,
		"describe_keyspace":   []any{[]any{"keyspace", "shop"}, []any{"table", "orders"}},
		"metadata_key":        []any{"customer", "placed"},
		"metadata_comment":    "orders",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the Python driver saw\n%s\nwant\n%v", out, want)
	}
}
