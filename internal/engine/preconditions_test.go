package engine

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/partita-db/partita/internal/fault"
)

// A change to a database, container or offer with a stale If-Match is refused with
// PreconditionFailed and changes nothing; with the current etag, or "*", it goes through.
func TestCatalogPreconditions(t *testing.T) {
	ttl := int64(60)
	e, _ := newContainer(t, Options{}, ContainerSpec{DefaultTTL: &ttl})
	const stale = "00000000-0000-0000-0000-000000000000"
	snapshot := func() (DatabaseInfo, ContainerInfo, []OfferInfo) {
		d, err := e.Database("db")
		if err != nil {
			t.Fatal(err)
		}
		c, err := e.ContainerInfo("db", "c")
		if err != nil {
			t.Fatal(err)
		}
		c.Partitions = nil // their statistics are not the catalog's
		return d, c, e.Offers()
	}
	d0, c0, o0 := snapshot()
	offer := o0[0]
	for name, err := range map[string]error{
		"delete database":  e.DeleteDatabase("db", stale),
		"delete container": e.DeleteContainer("db", "c", stale),
		"replace container": func() error {
			_, err := e.ReplaceContainer("db", "c", ContainerReplace{IfMatch: stale, Indexing: json.RawMessage(`{"includedPaths":[],"excludedPaths":[{"path":"/*"}]}`)})
			return err
		}(),
		"replace offer": func() error {
			_, err := e.ReplaceOffer(offer.ID, OfferReplace{Throughput: Throughput{Manual: 800}, IfMatch: stale})
			return err
		}(),
		"replace offer of another resource": func() error {
			_, err := e.ReplaceOffer(offer.ID, OfferReplace{Throughput: Throughput{Manual: 800}, ResourceRID: "other"})
			return err
		}(),
	} {
		want := fault.PreconditionFailed
		if name == "replace offer of another resource" {
			want = fault.BadRequest
		}
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	if d, c, o := snapshot(); !reflect.DeepEqual(d, d0) || !reflect.DeepEqual(c, c0) || !reflect.DeepEqual(o, o0) {
		t.Fatalf("refused changes changed the catalog:\n%+v\n%+v\n%+v", d, c, o)
	}
	// The current etag, or "*", lets each through.
	info, err := e.ReplaceContainer("db", "c", ContainerReplace{IfMatch: c0.ETag, DefaultTTL: &ttl})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ReplaceOffer(offer.ID, OfferReplace{Throughput: Throughput{Manual: 800}, IfMatch: "*", Resource: offer.ResourceSelf, ResourceRID: offer.ResourceRID}); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteContainer("db", "c", info.ETag); !errors.Is(err, fault.PreconditionFailed) {
		t.Fatalf("the offer's change changed the container's etag too, so its old etag is stale: %v", err)
	}
	info, _ = e.ContainerInfo("db", "c")
	if err := e.DeleteContainer("db", "c", info.ETag); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteDatabase("db", d0.ETag); err != nil {
		t.Fatal(err)
	}
}
