package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder stands in for a test, noting whether Path skipped or failed it.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestMissingSkipsOrFailsUnderCI(t *testing.T) {
	for _, ci := range []string{"", "1"} {
		t.Setenv("CI", ci)
		r := &recorder{}
		p := Path(r, "no-such-conformance-file.json")
		if p != filepath.Join(Dir(), "no-such-conformance-file.json") {
			t.Errorf("CI=%q: path %s", ci, p)
		}
		got, other := r.skipped, r.failed
		if ci != "" {
			got, other = r.failed, r.skipped
		}
		if got == "" || other != "" || !strings.Contains(got, p) || !strings.Contains(got, "shared/conformance beside the repository") {
			t.Errorf("CI=%q: skipped %q, failed %q", ci, r.skipped, r.failed)
		}
	}
}

// The root is found both from the file's path and, under -trimpath, from the working directory.
func TestRepoRoot(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join(repoRoot(), "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/partita-db/partita\n") {
		t.Fatalf("repoRoot() = %s is not the repository's root: %v", repoRoot(), err)
	}
}
