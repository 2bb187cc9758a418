// Package internal_test holds the rules of the layer picture (docs/design/README.md) as tests:
// they fail when an import breaks a layer's boundary.
package internal_test

import (
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/partita-db/partita"

// packages lists every package of the module with its imports, test imports included.
func packages(t *testing.T) map[string]*build.Package {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]*build.Package{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			return nil
		}
		p, err := build.ImportDir(path, build.ImportComment)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		pkgs[filepath.ToSlash(filepath.Join(module, rel))] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages under %s", len(pkgs), root)
	}
	return pkgs
}

// Below the API, failures are fault kinds and nothing speaks HTTP: no package under internal/
// other than the front ends (internal/api/...), the process that runs them (internal/server),
// the tools' client (internal/client) and the control plane (internal/controlplane, which
// reads an etcd member's view of the membership from its peer port, the one place etcd
// answers without a quorum) may import net/http, directly or through another package of
// Partita.
func TestNothingBelowTheAPIImportsHTTP(t *testing.T) {
	pkgs := packages(t)
	frontEnd := func(path string) bool {
		return strings.HasPrefix(path, module+"/internal/api/") || path == module+"/internal/server" ||
			path == module+"/internal/client" || strings.HasPrefix(path, module+"/internal/controlplane")
	}
	var reaches func(path string, seen map[string]bool) []string
	reaches = func(path string, seen map[string]bool) []string {
		if seen[path] {
			return nil
		}
		seen[path] = true
		for _, imp := range pkgs[path].Imports {
			if imp == "net/http" || strings.HasPrefix(imp, "net/http/") {
				return []string{path, imp}
			}
			if _, ok := pkgs[imp]; ok {
				if chain := reaches(imp, seen); chain != nil {
					return append([]string{path}, chain...)
				}
			}
		}
		return nil
	}
	checked := 0
	for path := range pkgs {
		if !strings.HasPrefix(path, module+"/internal/") || frontEnd(path) {
			continue
		}
		checked++
		if chain := reaches(path, map[string]bool{}); chain != nil {
			t.Errorf("%s reaches net/http: %s", path, strings.Join(chain, " -> "))
		}
	}
	if checked < 8 {
		t.Fatalf("checked only %d packages", checked)
	}
}

// Only internal/storage talks to Pebble; everything else uses its Batch, Iter and Snapshot.
func TestOnlyStorageImportsPebble(t *testing.T) {
	for path, p := range packages(t) {
		if path == module+"/internal/storage" {
			continue
		}
		for _, imps := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			for _, imp := range imps {
				if strings.HasPrefix(imp, "github.com/cockroachdb/pebble") {
					t.Errorf("%s imports %s: only internal/storage may use Pebble", path, imp)
				}
			}
		}
	}
}

// The tools' client is for the tools (cmd/...) and tests: no layer of the server uses it.
func TestOnlyToolsImportTheClient(t *testing.T) {
	for path, p := range packages(t) {
		if !strings.HasPrefix(path, module+"/internal/") || path == module+"/internal/client" {
			continue
		}
		for _, imp := range p.Imports {
			if imp == module+"/internal/client" {
				t.Errorf("%s imports the tools' client", path)
			}
		}
	}
}

// The front ends see the engine's types only: what a physical partition is inside (its
// operations, statistics, log records), how it is replicated, and what nodes say to each other
// stay behind the engine, which may change them without the front ends knowing.
func TestFrontEndsSeeTheEngineOnly(t *testing.T) {
	behind := []string{"partition", "replication", "replica", "raftrpc", "nodemsg", "nodecall", "distribution", "placement", "controlplane"}
	for path, p := range packages(t) {
		if !strings.HasPrefix(path, module+"/internal/api/") {
			continue
		}
		for _, imps := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			for _, imp := range imps {
				for _, b := range behind {
					if imp == module+"/internal/"+b || strings.HasPrefix(imp, module+"/internal/"+b+"/") {
						t.Errorf("%s imports %s: front ends use the engine's types", path, imp)
					}
				}
			}
		}
	}
}

// Replication and the partition know nothing of each other: the partition is a state machine
// with an interface of its own (partition.Replication) and the replication host runs any
// state machine (replication.StateMachine); only the code that wires them (a test harness,
// later the cluster) imports both.
func TestReplicationAndPartitionAreApart(t *testing.T) {
	pkgs := packages(t)
	for from, to := range map[string]string{"partition": "replication", "replication": "partition"} {
		p, ok := pkgs[module+"/internal/"+from]
		if !ok {
			t.Fatalf("internal/%s not found", from)
		}
		for _, imp := range append(p.Imports, p.TestImports...) {
			if imp == module+"/internal/"+to {
				t.Errorf("internal/%s imports internal/%s", from, to)
			}
		}
	}
}

// Some packages are pure: of Partita each imports only the one package named, and nothing
// that reads a network (or, for placement, a disk or the control plane).
//
//   - The CQL language package imports only internal/fault, so that the parser can be used
//     (and fuzzed) without an engine, and no part of the engine leaks into it.
//   - Placement decides and does nothing else: it imports only internal/replication (for the
//     types of a group's status and of a change), so that every decision can be tested over a
//     view written by hand.
func TestPurePackages(t *testing.T) {
	pkgs := packages(t)
	for pkg, allowed := range map[string]string{"internal/cql": "internal/fault", "internal/placement": "internal/replication"} {
		p, ok := pkgs[module+"/"+pkg]
		if !ok {
			t.Fatalf("%s not found", pkg)
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module+"/") && imp != module+"/"+allowed {
				t.Errorf("%s imports %s: it may import only %s", pkg, imp, allowed)
			}
			if strings.HasPrefix(imp, "net") || imp == "os" || strings.HasPrefix(imp, "go.etcd.io/") {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
}

// The engine speaks to other nodes in Go values (internal/nodecall) and never sees how they
// travel: the framing (internal/nodemsg) and the transport (internal/raftrpc) are the node's
// wiring's (internal/server). The vocabulary itself stands below the engine, the partition
// and replication, so that every side can use it without taking in the others. Whom to ask
// and how to retry (internal/distribution) stands between: below the engine, above the
// vocabulary, and as blind to the framing and the control plane as the engine.
func TestEngineSeesNoFraming(t *testing.T) {
	pkgs := packages(t)
	for pkg, banned := range map[string][]string{
		"internal/engine":       {"internal/nodemsg", "internal/raftrpc"},
		"internal/nodecall":     {"internal/engine", "internal/partition", "internal/replication", "internal/nodemsg"},
		"internal/distribution": {"internal/engine", "internal/nodemsg", "internal/raftrpc", "internal/controlplane"},
	} {
		p, ok := pkgs[module+"/"+pkg]
		if !ok {
			t.Fatalf("%s not found", pkg)
		}
		for _, imp := range p.Imports {
			for _, b := range banned {
				if imp == module+"/"+b {
					t.Errorf("%s imports %s", pkg, imp)
				}
			}
		}
	}
}
