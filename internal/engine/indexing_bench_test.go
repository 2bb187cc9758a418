package engine

import (
	"fmt"
	"strings"
	"testing"
)

// body1KBFields is a 1 KB item of 20 short properties besides id and pk: the shape that makes
// the index matter (the 1 KB item of body1KB has one long property, so one index entry).
func body1KBFields(id, pk string, n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"id":%q,"pk":%q,"name":"item %d"`, id, pk, n)
	for f := range 19 {
		fmt.Fprintf(&b, `,"f%02d":"value %d of field %d, padded to about fifty bytes"`, f, n, f)
	}
	b.WriteString("}")
	return []byte(b.String())
}

// BenchmarkWriteIndexingPolicy creates the same 1 KB items under the default policy (every
// path indexed: 22 entries per item) and under a lean one (only /name: 1 entry), side by
// side: the charge (RU/op) and the time per write both follow the index entries written.
func BenchmarkWriteIndexingPolicy(b *testing.B) {
	for _, pc := range []struct {
		name   string
		policy string
	}{
		{"default", ""},
		{"lean", `{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/name/?"}],"excludedPaths":[{"path":"/*"}]}`},
	} {
		b.Run(pc.name, func(b *testing.B) {
			_, c := newContainer(b, Options{}, ContainerSpec{Indexing: []byte(pc.policy), Throughput: &Throughput{Manual: 100000}})
			b.ReportAllocs()
			var charge float64
			n := 0
			for i := 0; b.Loop(); i++ {
				res, err := c.CreateItem(body1KBFields(fmt.Sprint(i), fmt.Sprint(i%100), i), ItemOptions{})
				if err != nil {
					b.Fatal(err)
				}
				charge += res.Charge
				n++
			}
			b.ReportMetric(charge/float64(n), "RU/op")
		})
	}
}
