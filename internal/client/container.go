package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strconv"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
)

// ErrStop, returned by a page callback, ends a query early without an error.
var ErrStop = errors.New("stop")

// Container is what the tools need to know of a container: its partition key definition,
// from which an item's effective partition key is computed as the SDKs compute it.
type Container struct {
	Link         string // "dbs/<db>/colls/<id>"
	PartitionKey struct {
		Paths   []string `json:"paths"`
		Kind    string   `json:"kind"`
		Version int      `json:"version"`
		// SystemKey marks a container created without a partition key: its items without
		// a _partitionKey value, or with a null one, are one logical partition, the
		// undefined key.
		SystemKey bool `json:"systemKey"`
	}
	paths  [][]string // PartitionKey.Paths, split into segments
	scheme epk.Scheme
}

// ReadContainer reads the container id of database db.
func (c *Client) ReadContainer(ctx context.Context, db, id string) (*Container, error) {
	link := "dbs/" + db + "/colls/" + id
	resp, err := c.Do(ctx, Request{Method: http.MethodGet, Type: "colls", Link: link})
	if err != nil {
		return nil, err
	}
	ct := &Container{Link: link}
	var body struct {
		PartitionKey json.RawMessage `json:"partitionKey"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil || json.Unmarshal(body.PartitionKey, &ct.PartitionKey) != nil {
		return nil, &Error{Status: resp.Status, Code: "BadResponse", Message: "the container has no readable partitionKey"}
	}
	for _, p := range ct.PartitionKey.Paths {
		segs, err := document.SplitKeyPath(p)
		if err != nil {
			return nil, err
		}
		ct.paths = append(ct.paths, segs)
	}
	// As the service: MultiHash is always version 2, Hash is version 1 unless told.
	switch {
	case ct.PartitionKey.Kind == "MultiHash" || len(ct.paths) > 1:
		ct.scheme = epk.SchemeMulti
	case ct.PartitionKey.Version == 2:
		ct.scheme = epk.SchemeV2
	default:
		ct.scheme = epk.SchemeV1
	}
	return ct, nil
}

// ItemKey validates an item body as the server will (a JSON object, a string id, a partition
// key value within limits) and returns its id, its partition key as the JSON array the
// partition key header and bulk operations carry, and its effective partition key.
func (ct *Container) ItemKey(body []byte) (id, key string, e epk.EPK, err error) {
	item, k, err := document.Parse(body, ct.paths)
	if err != nil {
		return "", "", "", err
	}
	if ct.PartitionKey.SystemKey {
		k = epk.SystemNone(k) // as the server reads it
	}
	return item.ID, string(k.AppendJSON(nil)), ct.scheme.Hash(k), nil
}

// Range is one partition key range: the physical partition serving [Min, Max).
type Range struct {
	ID       string
	Min, Max epk.EPK
}

// Ranges reads the container's partition key ranges, ordered by EPK.
func (c *Client) Ranges(ctx context.Context, ct *Container) ([]Range, error) {
	resp, err := c.Do(ctx, Request{Method: http.MethodGet, Type: "pkranges", Link: ct.Link, Feed: true})
	if err != nil {
		return nil, err
	}
	var body struct {
		Ranges []struct {
			ID           string `json:"id"`
			MinInclusive string `json:"minInclusive"`
			MaxExclusive string `json:"maxExclusive"`
		} `json:"PartitionKeyRanges"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		return nil, &Error{Status: resp.Status, Code: "BadResponse", Message: "the partition key ranges are not readable: " + err.Error()}
	}
	out := make([]Range, 0, len(body.Ranges))
	for _, r := range body.Ranges {
		lo, err1 := epk.ParseHex(r.MinInclusive)
		hi, err2 := epk.ParseHex(r.MaxExclusive)
		if err1 != nil || err2 != nil {
			return nil, &Error{Status: resp.Status, Code: "BadResponse", Message: "a partition key range has a bad bound"}
		}
		out = append(out, Range{ID: r.ID, Min: lo, Max: hi})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Min < out[j].Min })
	return out, nil
}

// RangeOf is the range of rs (ordered by EPK) that holds e, or nil.
func RangeOf(rs []Range, e epk.EPK) *Range {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Max > e })
	if i < len(rs) && rs[i].Min <= e {
		return &rs[i]
	}
	return nil
}

// CreateContainer creates the container id in database db (and the database, when it does
// not exist yet) with a hash partition key on paths (one path, or up to three for a
// hierarchical key) and, when throughput is positive, that many manual RU/s. A container that
// already exists is left as it is and not an error.
func (c *Client) CreateContainer(ctx context.Context, db, id string, paths []string, throughput int) error {
	dbBody, _ := json.Marshal(map[string]string{"id": db})
	if _, err := c.Do(ctx, Request{Method: http.MethodPost, Type: "dbs", Feed: true, Body: dbBody}); err != nil && StatusOf(err) != http.StatusConflict {
		return err
	}
	pk := map[string]any{"paths": paths, "kind": "Hash", "version": 2}
	if len(paths) > 1 {
		pk["kind"] = "MultiHash"
	}
	body, _ := json.Marshal(map[string]any{"id": id, "partitionKey": pk})
	h := http.Header{}
	if throughput > 0 {
		h.Set("x-ms-offer-throughput", strconv.Itoa(throughput))
	}
	_, err := c.Do(ctx, Request{Method: http.MethodPost, Type: "colls", Link: "dbs/" + db, Feed: true, Header: h, Body: body})
	if err != nil && StatusOf(err) != http.StatusConflict {
		return err
	}
	return nil
}
