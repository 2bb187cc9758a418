package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/value"
)

// nokeyScenario runs the commands of containers created without a partition key
// (testdata/scenarios/non-partitioned):
//
//	nokey-container id=C [throughput=N]
//	    creates C without a partition key (the system key), printing its partitions
//	nokey-put container=C [size=BYTES]
//	    creates one item per input line "KEY id": KEY none leaves _partitionKey out, null
//	    sets it null, anything else is its string value; prints each refusal
//	nokey-read container=C
//	    reads one item per input line "HEADER id", HEADER the partition key as the SDKs send
//	    it ([], [{}], [null], ["v"]), printing its n or the error
//	nokey-spread container=C
//	    how many items each partition holds, with and without a _partitionKey value
func nokeyScenario(t *testing.T, e *Engine, td *datadriven.TestData) (string, bool) {
	switch td.Cmd {
	case "nokey-container":
		var id string
		var rus int
		td.ScanArgs(t, "id", &id)
		td.MaybeScanArgs(t, "throughput", &rus)
		spec := ContainerSpec{ID: id, PartitionKey: SystemKey()}
		if rus > 0 {
			spec.Throughput = &Throughput{Manual: rus}
		}
		info, err := e.CreateContainer("db", spec)
		if err != nil {
			return err.Error(), true
		}
		return fmt.Sprintf("%d partitions, key %v (system key: %v)", len(info.Partitions), info.PartitionKey.Paths, info.PartitionKey.SystemKey), true
	case "nokey-put":
		c := scenarioContainer(t, e, td)
		size := 0
		td.MaybeScanArgs(t, "size", &size)
		var out []string
		for i, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			f := strings.Fields(line)
			body := fmt.Sprintf(`{"id":%q,"n":%d,"pad":%q`, f[1], i, strings.Repeat("x", size))
			switch f[0] {
			case "none":
			case "null":
				body += `,"_partitionKey":null`
			default:
				body += fmt.Sprintf(`,"_partitionKey":%q`, f[0])
			}
			if _, err := c.CreateItem([]byte(body+"}"), ItemOptions{}); err != nil {
				out = append(out, fmt.Sprintf("%s: %v", f[1], err))
			}
		}
		if len(out) == 0 {
			return "ok", true
		}
		return strings.Join(out, "\n"), true
	case "nokey-read":
		c := scenarioContainer(t, e, td)
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			f := strings.Fields(line)
			r, err := c.ReadItem(headerKey(t, f[0]), f[1])
			if err != nil {
				out = append(out, fmt.Sprintf("%s %s: %v", f[0], f[1], err))
				continue
			}
			v, _ := value.Parse(r.Doc)
			out = append(out, fmt.Sprintf("%s %s: n=%v", f[0], f[1], v.Get("n")))
		}
		return strings.Join(out, "\n"), true
	case "nokey-spread":
		c := scenarioContainer(t, e, td)
		var out []string
		for _, p := range c.partitions() {
			with, without := 0, 0
			p.Scan([]epk.Range{epk.All}, 0, func(d partitionDoc) bool {
				if v, _ := value.Parse(d.JSON); v.Get("_partitionKey").Kind() == value.String {
					with++
				} else {
					without++
				}
				return true
			})
			out = append(out, fmt.Sprintf("partition %d: %d with a key, %d without", p.ID(), with, without))
		}
		slices.Sort(out)
		return strings.Join(out, "\n"), true
	}
	return "", false
}

// headerKey reads a partition key header of the forms the scenarios use.
func headerKey(t *testing.T, h string) epk.Key {
	switch h {
	case "[]":
		return epk.Key{}
	case "[{}]":
		return epk.Key{epk.Undefined()}
	case "[null]":
		return epk.Key{epk.Null()}
	}
	if !strings.HasPrefix(h, `["`) || !strings.HasSuffix(h, `"]`) {
		t.Fatalf("a partition key header the scenarios do not read: %s", h)
	}
	return epk.Key{epk.String(h[2 : len(h)-2])}
}
