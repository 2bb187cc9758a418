package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/value"
)

// scenarioPolicies are the indexing policies scenarios name.
var scenarioPolicies = map[string]string{
	"none":     `{"indexingMode":"consistent","automatic":true,"includedPaths":[],"excludedPaths":[{"path":"/*"}]}`,
	"only-n":   `{"includedPaths":[{"path":"/n/?"}],"excludedPaths":[{"path":"/*"}]}`,
	"only-tag": `{"includedPaths":[{"path":"/tag/?"}],"excludedPaths":[{"path":"/*"}]}`,
	"no-n":     `{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/n/?"}]}`,
	"all":      `{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[]}`,
	// What the Go SDK's TestContainerCRUD replaces a policy with.
	"off": `{"indexingMode":"none","automatic":false,"includedPaths":[],"excludedPaths":[]}`,
}

// trustPaths are the paths the progress command reports trust in.
var trustPaths = []string{"/n", "/tag"}

func scenarioReindex(t *testing.T, e *Engine, td *datadriven.TestData, written map[string]map[string]string) string {
	var id string
	td.ScanArgs(t, "container", &id)
	c, err := e.Container("db", id)
	if err != nil {
		t.Fatal(err)
	}
	switch td.Cmd {
	case "docs":
		var from, to, shift int
		keys := 4
		td.ScanArgs(t, "from", &from)
		td.ScanArgs(t, "to", &to)
		td.MaybeScanArgs(t, "keys", &keys)
		td.MaybeScanArgs(t, "shift", &shift)
		for i := from; i < to; i++ {
			itemID, pk := fmt.Sprintf("d%d", i), fmt.Sprintf("k%d", i%keys)
			body := item(itemID, pk, fmt.Sprintf(`,"n":%d,"tag":"t%d"`, i+shift, i%5))
			if _, err := c.UpsertItem(body, ItemOptions{}); err != nil {
				return err.Error()
			}
			written[id][itemID] = pk
		}
		return "ok"
	case "replace-policy":
		var name string
		td.ScanArgs(t, "policy", &name)
		raw, ok := scenarioPolicies[name]
		if !ok {
			t.Fatalf("no policy %q", name)
		}
		info, err := e.ReplaceContainer("db", id, ContainerReplace{Indexing: json.RawMessage(raw)})
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("policy %s, progress %d%%", info.Indexing, info.IndexProgress)
	case "reindex":
		items, steps := 256, 1
		td.MaybeScanArgs(t, "items", &items)
		td.MaybeScanArgs(t, "steps", &steps)
		for range steps {
			finished, _, _, err := e.reindexStep(c, items, 1<<30)
			if err != nil {
				return err.Error()
			}
			if finished {
				break
			}
		}
		return scenarioProgress(t, e, c)
	case "progress":
		return scenarioProgress(t, e, c)
	case "check":
		return scenarioCheck(t, c, td.Input)
	}
	t.Fatalf("unknown command %s", td.Cmd)
	return ""
}

func scenarioProgress(t *testing.T, e *Engine, c *Container) string {
	info, err := e.ContainerInfo("db", c.rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "progress %d%%", info.IndexProgress)
	for _, p := range c.partitions() {
		done, items, settled := p.ReindexProgress()
		state := "settled"
		if !settled {
			state = fmt.Sprintf("rebuilt %d of %d", min(done, items), items)
		}
		var trusted []string
		for _, path := range trustPaths {
			if p.IndexTrusted(path) {
				trusted = append(trusted, path)
			}
		}
		fmt.Fprintf(&b, "\npartition %d: %s; index trusted for [%s]", p.ID(), state, strings.Join(trusted, " "))
	}
	return b.String()
}

// scenarioCheck runs each query with the index and as a full scan (which no policy affects);
// the two must agree, in order, and every partition's index must hold the invariant.
func scenarioCheck(t *testing.T, c *Container, input string) string {
	var b strings.Builder
	for _, sql := range strings.Split(strings.TrimSpace(input), "\n") {
		prep, err := query.Prepare(sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		var refused error // the policy in force refuses the query (an ORDER BY on an excluded path)
		run := func(noIndex bool) (out []string, loaded int) {
			tok := ""
			for {
				res, err := c.Query(prep, epk.All, query.Options{Continuation: tok, NoIndex: noIndex, MaxItems: 7})
				if err != nil {
					refused = err
					return nil, 0
				}
				loaded += res.Stats.ItemsLoaded
				for _, v := range res.Results {
					out = append(out, string(value.AppendJSON(nil, v)))
				}
				if tok = res.Next; tok == "" {
					return out, loaded
				}
			}
		}
		got, loaded := run(false)
		if refused != nil {
			fmt.Fprintf(&b, "%s: %v\n", sql, refused)
			continue
		}
		want, scanned := run(true)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			fmt.Fprintf(&b, "%s: MISMATCH\n  index: %v\n  scan:  %v\n", sql, got, want)
			continue
		}
		how := "scanned"
		if loaded < scanned {
			how = "narrowed by the index"
		}
		fmt.Fprintf(&b, "%s: %d results, as a scan; %s\n", sql, len(got), how)
	}
	for _, p := range c.partitions() {
		if err := p.CheckIndex(); err != nil {
			fmt.Fprintf(&b, "index: %v\n", err)
		}
	}
	return b.String()
}
