package engine

import (
	"testing"

	"github.com/partita-db/partita/internal/epk"
)

// A logical partition's key value reads as the service writes it: a one-path key's value
// alone, a hierarchical key's as an array, an absent value as {}.
func TestKeyJSON(t *testing.T) {
	for _, c := range []struct {
		key  epk.Key
		want string
	}{
		{epk.Key{epk.String("tenant-42")}, `"tenant-42"`},
		{epk.Key{epk.Number(42)}, `42`},
		{epk.Key{{}}, `{}`},
		{epk.Key{epk.String("a"), epk.Bool(true), {Kind: epk.KindNull}}, `["a",true,null]`},
	} {
		if got := string(keyJSON(c.key)); got != c.want {
			t.Errorf("%v: %s, want %s", c.key, got, c.want)
		}
	}
}
