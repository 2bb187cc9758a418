package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/value"
)

// indexScenario runs the scenario commands about indexing policies:
//
//	index-paths
//	    the input's first line is a policy; every later line a term path ("/a/b", "/tags/[]"):
//	    prints whether the policy indexes it
//	create-indexed id=C
//	    creates a container (partition key /pk, one partition) with the input's policy
//	put container=C [directive=Include|Exclude] [upsert]
//	    creates (or upserts) the items given one per input line as JSON; prints each one's
//	    charge, which depends on the index entries it wrote
//	read-size container=C pk=K id=I
//	    reads one item by id (its size): point reads see items kept out of the index
//	explain container=C [noindex]
//	    runs the input SQL and prints its results (ids), which index reads served it (filter
//	    and order paths, or "scan"), the items it loaded, its charge and its index metrics
func indexScenario(t *testing.T, e *Engine, td *datadriven.TestData) (string, bool) {
	switch td.Cmd {
	case "index-paths":
		lines := strings.Split(strings.TrimSpace(td.Input), "\n")
		pol, err := indexing.Parse([]byte(lines[0]))
		if err != nil {
			return err.Error(), true
		}
		var b strings.Builder
		for _, path := range lines[1:] {
			state := "indexed"
			if !pol.Indexes(path) {
				state = "not indexed"
			}
			fmt.Fprintf(&b, "%s: %s\n", path, state)
		}
		return b.String(), true
	case "create-indexed":
		var id string
		td.ScanArgs(t, "id", &id)
		spec := ContainerSpec{ID: id, PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2},
			Throughput: &Throughput{Manual: 400}, Indexing: json.RawMessage(strings.TrimSpace(td.Input))}
		if _, err := e.CreateContainer("db", spec); err != nil {
			return err.Error(), true
		}
		return "ok", true
	case "put":
		var id, directive string
		td.ScanArgs(t, "container", &id)
		td.MaybeScanArgs(t, "directive", &directive)
		c, err := e.Container("db", id)
		if err != nil {
			t.Fatal(err)
		}
		kind := OpCreate
		if td.HasArg("upsert") {
			kind = OpUpsert
		}
		var b strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			res, err := c.WriteItem(kind, "", document.FromJSON([]byte(line)), ItemOptions{IndexingDirective: directive})
			if err != nil {
				fmt.Fprintf(&b, "%v\n", err)
				continue
			}
			v, _ := value.Parse(res.Doc)
			fmt.Fprintf(&b, "%s: %.2f RU\n", v.Get("id").Str(), res.Charge)
		}
		return b.String(), true
	case "read-size":
		var id, pk, itemID string
		td.ScanArgs(t, "container", &id)
		td.ScanArgs(t, "pk", &pk)
		td.ScanArgs(t, "id", &itemID)
		c, err := e.Container("db", id)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.ReadItem(key(pk), itemID)
		if err != nil {
			return err.Error(), true
		}
		return fmt.Sprintf("read %d bytes", len(res.Doc)), true
	case "explain":
		var id string
		td.ScanArgs(t, "container", &id)
		c, err := e.Container("db", id)
		if err != nil {
			t.Fatal(err)
		}
		p, err := query.Prepare(strings.TrimSpace(td.Input))
		if err != nil {
			return err.Error(), true
		}
		res, err := c.Query(p, epk.All, query.Options{MaxItems: 1000, NoIndex: td.HasArg("noindex")})
		if err != nil {
			return err.Error(), true
		}
		var ids []string
		for _, v := range res.Results {
			if v.Kind() == value.Object && v.Get("id").Kind() == value.String {
				ids = append(ids, v.Get("id").Str())
			} else {
				ids = append(ids, string(value.AppendJSON(nil, v)))
			}
		}
		if len(ids) == 0 {
			ids = []string{"(no results)"}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s\n", strings.Join(ids, " "))
		use := res.Stats.Index
		plan := []string{}
		if use.Filter != "" {
			plan = append(plan, "filter from index "+use.Filter)
		}
		if use.Order != "" {
			plan = append(plan, "order from index "+use.Order)
		}
		if len(plan) == 0 {
			plan = []string{"scan"}
		}
		fmt.Fprintf(&b, "plan: %s; loaded %d items; %.2f RU\n", strings.Join(plan, ", "), res.Stats.ItemsLoaded, res.Charge)
		m := c.IndexMetrics(p, use)
		list := func(name string, specs []string) {
			if len(specs) > 0 {
				fmt.Fprintf(&b, "%s: %s\n", name, strings.Join(specs, "; "))
			}
		}
		list("utilized single", m.UtilizedSingle)
		list("potential single", m.PotentialSingle)
		for _, c := range m.UtilizedComposite {
			list("utilized composite", []string{strings.Join(c, ", ")})
		}
		for _, c := range m.PotentialComposite {
			list("potential composite", []string{strings.Join(c, ", ")})
		}
		return b.String(), true
	}
	return "", false
}
