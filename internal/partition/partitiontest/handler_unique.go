package partitiontest

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/uniquekey"
	"github.com/partita-db/partita/internal/value"
)

// parseUnique reads open's unique=(/a,/b+/c) as a unique key policy; nil without unique=.
func parseUnique(t testing.TB, d *datadriven.TestData) *uniquekey.Policy {
	arg, ok := d.Arg("unique")
	if !ok {
		return nil
	}
	var keys []string
	for _, k := range arg.Vals {
		keys = append(keys, `{"paths":["`+strings.ReplaceAll(k, "+", `","`)+`"]}`)
	}
	pol, err := uniquekey.Parse([]byte(`{"uniqueKeys":[` + strings.Join(keys, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// handleUniqueEntries prints the container's unique key entries in storage and checks them
// against the items of the open partitions: each item holds exactly the entries of its
// current values.
//
//	unique-entries
func (env *Env) handleUniqueEntries(t *testing.T, _ *datadriven.TestData) string {
	want := map[string]string{} // storage key -> id
	for _, p := range env.parts {
		err := p.Scan([]epk.Range{epk.All}, 0, func(d partition.Doc) bool {
			v, err := value.Parse(d.JSON)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range env.unique.Entries(v) {
				want[string(storage.UniqueKey(nil, container, string(d.EPK()), e))] = d.ID()
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	lo, hi := storage.UniqueContainerSpan(container)
	it, err := env.db.NewIter(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	var lines, problems []string
	for it.First(); it.Valid(); it.Next() {
		e, entry, err := storage.ParseUniqueKey(it.Key())
		if err != nil {
			t.Fatal(err)
		}
		id := string(it.Value())
		line := fmt.Sprintf("%s: %d(%s) -> %s", env.items.PKName(epk.EPK(e)), uniquekey.Key(entry), decodeUniqueEntry(entry[1:]), id)
		lines = append(lines, line)
		switch w, ok := want[string(it.Key())]; {
		case !ok:
			problems = append(problems, "EXTRA "+line)
		case w != id:
			problems = append(problems, "WRONG HOLDER "+line+", the item is "+w)
		}
		delete(want, string(it.Key()))
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		t.Fatal(err)
	}
	for k, id := range want {
		e, entry, _ := storage.ParseUniqueKey([]byte(k))
		problems = append(problems, fmt.Sprintf("MISSING %s: %d(%s) -> %s", env.items.PKName(epk.EPK(e)), uniquekey.Key(entry), decodeUniqueEntry(entry[1:]), id))
	}
	sort.Strings(lines)
	sort.Strings(problems)
	if len(lines) == 0 {
		lines = []string{"none"}
	}
	return strings.Join(append(lines, problems...), "\n")
}

// decodeUniqueEntry prints the values of an entry (after its key number), comma-separated.
func decodeUniqueEntry(b []byte) string {
	var out []string
	for len(b) > 0 {
		n := 1
		switch b[0] {
		case 0x04:
			n = 9
		case 0x05, 0x06, 0x07:
			end := bytes.Index(b, []byte{0, 1})
			if end < 0 {
				return "?" + fmt.Sprintf("%x", b)
			}
			n = end + 2
		}
		if n > len(b) {
			return "?"
		}
		out = append(out, decodeOrdered(b[:n])) // arrays and objects print as [...] and {...}
		b = b[n:]
	}
	return strings.Join(out, ",")
}
