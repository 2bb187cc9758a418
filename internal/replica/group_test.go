package replica_test

import (
	"testing"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/replica"
)

// A group's ID and its descriptor's bytes are kept on disk and in the control plane: the
// same as every release before wrote them.
func TestGroupFormat(t *testing.T) {
	g := replica.Group(7, 3)
	if uint64(g) != 7<<32|3 || replica.ContainerOf(g) != 7 {
		t.Fatalf("Group(7, 3) = %#x, ContainerOf = %d", uint64(g), replica.ContainerOf(g))
	}
	r := epk.Range{Min: epk.EPK("\x01\x02"), Max: epk.EPK("\xff")}
	raw := replica.MetaOf(7, 3, r)
	if want := `{"container":7,"id":3,"min":"0102","max":"FF"}`; string(raw) != want {
		t.Fatalf("MetaOf = %s, want %s", raw, want)
	}
	m, err := replica.ParseMeta(g, raw)
	if err != nil || m != (replica.Meta{Container: 7, ID: 3, Min: "0102", Max: "FF"}) {
		t.Fatalf("ParseMeta = %+v, %v", m, err)
	}
	if _, err := replica.ParseMeta(g, []byte("{")); err == nil {
		t.Fatal("ParseMeta of broken bytes succeeded")
	}
}
