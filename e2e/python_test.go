package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
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
	out, err := exec.Command(py, filepath.Join("testdata", "python", "cosmos_sdk3.py"), srv.Endpoint, emulatorKey).CombinedOutput()
	if err != nil {
		t.Fatalf("the Python SDK's session failed: %v\n%s", err, out)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
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
