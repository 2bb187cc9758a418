package conformance

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Path returns the path of name (a file or folder) in the conformance data. When it is
// absent, it skips the test, or fails it when CI is set.
func Path(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Dir(), name)
	if _, err := os.Stat(p); err != nil {
		const where = "the conformance data lives in shared/conformance beside the repository"
		if os.Getenv("CI") != "" {
			t.Fatalf("conformance data missing: %s (%v); %s, and CI is set, so this is a failure", p, err, where)
		} else {
			t.Skipf("conformance data missing: %s; %s", p, where)
		}
	}
	return p
}

// Dir returns <repository root>/../shared/conformance, whether or not it exists.
func Dir() string {
	return filepath.Join(repoRoot(), "..", "shared", "conformance")
}

// repoRoot is found from this file's compile-time path, which works from any package's test
// directory. With -trimpath that path is not absolute; then the nearest go.mod above the
// working directory (a test runs in its package's folder) marks the root.
func repoRoot() string {
	if _, self, _, ok := runtime.Caller(0); ok && filepath.IsAbs(self) {
		return filepath.Join(filepath.Dir(self), "..", "..")
	}
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}
