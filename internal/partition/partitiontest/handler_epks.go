package partitiontest

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/epk"
)

// handleEPKs prints partition keys in EPK order, with their EPKs.
//
//	epks pks=(a,b,...)
func (env *Env) handleEPKs(_ *testing.T, d *datadriven.TestData) string {
	arg, _ := d.Arg("pks")
	type kv struct {
		pk string
		e  epk.EPK
	}
	var kvs []kv
	for _, pk := range arg.Vals {
		kvs = append(kvs, kv{pk, env.items.EPK(pk)})
	}
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].e < kvs[j].e })
	var b strings.Builder
	for _, x := range kvs {
		fmt.Fprintf(&b, "%s %s\n", x.pk, x.e.Hex())
	}
	return b.String()
}
