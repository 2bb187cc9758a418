package engine

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/fault"
)

// An offer is the throughput of a database (shared) or of a container (its own), as a
// resource of its own. Its id encodes what it belongs to: the top bit set for a container,
// then the database's or container's number.
type OfferInfo struct {
	ID           string // also the offer's rid
	ResourceRID  string // the database's or container's rid
	ResourceSelf string
	Throughput   Throughput
	Version      uint64 // the owner's catalog version; the etag derives from it
	TS           int64
}

// ETag is the offer's etag.
func (o OfferInfo) ETag() string { return versionETag(o.Version) }

func offerID(container bool, num uint32) string {
	n := num &^ (1 << 31)
	if container {
		n |= 1 << 31
	}
	return base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, n))
}

// Offers lists the offers of every database and container that has throughput.
func (e *Engine) Offers() []OfferInfo {
	e.mu.RLock()
	defer e.mu.RUnlock()
	var out []OfferInfo
	for _, id := range sortedKeys(e.dbs) {
		d := e.dbs[id]
		if d.rec.Throughput != nil {
			out = append(out, d.offer())
		}
		for _, cid := range sortedKeys(d.containers) {
			if c := d.containers[cid]; c.rec.Throughput != nil {
				out = append(out, c.offer())
			}
		}
	}
	return out
}

func (d *Database) offer() OfferInfo {
	res := databaseResource(d.rec)
	return OfferInfo{ID: offerID(false, d.rec.Num), ResourceRID: res.RID, ResourceSelf: res.Self,
		Throughput: *d.rec.Throughput, Version: d.rec.Version, TS: d.rec.TS}
}

func (c *Container) offer() OfferInfo {
	return OfferInfo{ID: offerID(true, c.rec.Num), ResourceRID: c.rid.String(),
		ResourceSelf: "dbs/" + c.db.rid.String() + "/colls/" + c.rid.String() + "/",
		Throughput:   *c.rec.Throughput, Version: c.rec.Version, TS: c.rec.TS}
}

// Offer returns one offer by id.
func (e *Engine) Offer(id string) (OfferInfo, error) {
	for _, o := range e.Offers() {
		if o.ID == id {
			return o, nil
		}
	}
	return OfferInfo{}, fault.New(fault.NotFound, "Offer %q does not exist", id)
}

// OfferReplace is an offer replace: the new throughput, and the checks that the offer
// replaced is the one the client read.
type OfferReplace struct {
	Throughput Throughput
	// Resource and ResourceRID, when not empty, must be the offer's resource (_self) and
	// offerResourceId: a body read from one offer cannot be put on another.
	Resource, ResourceRID string
	IfMatch               string // when not empty, the etag (unquoted) the offer must have
}

// ReplaceOffer changes the throughput of an offer. The kind (manual or autoscale) may change
// too; the Cosmos minimums apply.
func (e *Engine) ReplaceOffer(id string, r OfferReplace) (OfferInfo, error) {
	var o OfferInfo
	var c *Container
	err := e.freshWrite(func() (err error) {
		o, c, err = e.replaceOffer(id, r)
		return err
	})
	if err == nil && c != nil {
		// Raised throughput needs more partitions: split before answering, as Cosmos does
		// before it reports the new throughput as in effect.
		if err = e.splitForThroughput(c); err == nil {
			// A split changes the container's version, from which the offer's etag derives.
			e.mu.RLock()
			o = c.offer()
			e.mu.RUnlock()
		}
	}
	return o, err
}

// check refuses r for offer o.
func (r OfferReplace) check(o OfferInfo) error {
	if r.Resource != "" && r.Resource != o.ResourceSelf || r.ResourceRID != "" && r.ResourceRID != o.ResourceRID {
		return fault.New(fault.BadRequest, "The offer's resource (%q, %q) is not the resource of offer %q; replace an offer with the body read from it", r.Resource, r.ResourceRID, o.ID)
	}
	return checkVersion(fmt.Sprintf("offer %q", o.ID), o.Version, r.IfMatch)
}

func (e *Engine) replaceOffer(id string, r OfferReplace) (OfferInfo, *Container, error) {
	t := r.Throughput
	if t.IsZero() {
		return OfferInfo{}, nil, fault.New(fault.BadRequest, "The offer needs a throughput: content.offerThroughput or content.offerAutopilotSettings.maxThroughput")
	}
	if err := t.validate(); err != nil {
		return OfferInfo{}, nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, d := range e.dbs {
		if d.rec.Throughput != nil && offerID(false, d.rec.Num) == id {
			if err := r.check(d.offer()); err != nil {
				return OfferInfo{}, nil, err
			}
			rec := d.rec
			rec.Throughput, rec.Version = &t, e.nextVersion()
			if err := e.persist(catalog.Databases, rec.Num, rec); err != nil {
				return OfferInfo{}, nil, err
			}
			d.rec = rec
			e.refreshBudgets()
			return d.offer(), nil, nil
		}
		for _, c := range d.containers {
			if c.rec.Throughput != nil && offerID(true, c.rec.Num) == id {
				if err := r.check(c.offer()); err != nil {
					return OfferInfo{}, nil, err
				}
				rec := c.rec
				rec.Throughput, rec.Version = &t, e.nextVersion()
				if err := e.persist(catalog.Containers, rec.Num, rec); err != nil {
					return OfferInfo{}, nil, err
				}
				c.rec = rec
				e.refreshBudgets()
				return c.offer(), c, nil
			}
		}
	}
	return OfferInfo{}, nil, fault.New(fault.NotFound, "Offer %q does not exist", id)
}
