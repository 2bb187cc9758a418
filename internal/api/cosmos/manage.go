package cosmos

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/faultinject"
)

// Partita's management API: what tests use to steer a server, beside the Cosmos API on the
// same listener. Every request must be signed with the account's primary key (a master key
// signature, as for any Cosmos request); the read-only key may only read, and resource tokens
// are refused. Fault rules never apply to it.
//
//	GET    /_partita/cluster       this node, every     signed: type "cluster", link ""
//	                               node (down ones
//	                               marked), its
//	                               replicas             (engine.NodeStatus)
//	POST   /_partita/cluster/drain drain a node, or     signed: type "cluster", link "cluster/drain"
//	                               cancel its drain:
//	                               {"node": "<cluster address or hex id>", "cancel": false}
//	GET    /_partita/faults        list the rules       signed: type "faults", link ""
//	POST   /_partita/faults        add a rule (Spec)    signed: type "faults", link ""
//	DELETE /_partita/faults        remove every rule    signed: type "faults", link ""
//	GET    /_partita/faults/{id}   one rule             signed: type "faults", link "faults/{id}"
//	DELETE /_partita/faults/{id}   remove one rule      signed: type "faults", link "faults/{id}"
//
// The signature covers the path after /_partita as Cosmos's rules give it (a feed is typed by
// its last segment and linked to its parent, as /dbs is with link ""). The split of a
// partition lives with the container it changes:
//
//	POST /dbs/{db}/colls/{c}/partitions/{id}/split   body {"at": "<hex EPK>"} or none
//	     signed: type "split", link "dbs/{db}/colls/{c}/partitions/{id}"

// managementPrefix starts the paths of the management API.
const managementPrefix = "/_partita/"

// manage serves a request to the management API.
func (c *call) manage() {
	err := checkEnvelope(c.r)
	if err == nil {
		c.res, err = parseResource(strings.TrimPrefix(c.r.URL.EscapedPath(), "/_partita"))
	}
	if err == nil {
		err = c.requireMaster()
	}
	if err == nil {
		err = c.h.keys.authenticate(c.r, c.res, c.h.now())
	}
	if err == nil {
		err = c.dispatchManagement()
	}
	if err != nil {
		c.fail(err)
	}
}

// requireMaster refuses anything but a master key signature (resource tokens grant items of
// one container, never the management of the server); authenticate then checks it.
func (c *call) requireMaster() error {
	var buf [256]byte
	tok := appendUnescaped(buf[:0], c.r.Header.Get("Authorization"))
	for part := range bytes.SplitSeq(tok, []byte("&")) {
		if name, value, _ := bytes.Cut(part, []byte("=")); string(name) == "type" && string(value) != "master" {
			return fault.New(fault.Forbidden, "Partita's management API takes only the account key's signatures (type=master), not %q tokens", string(value))
		}
	}
	return nil
}

func (c *call) dispatchManagement() error {
	m := c.r.Method
	switch c.res.shape() {
	case "faults":
		switch m {
		case http.MethodGet:
			rules := c.h.faults.List()
			return c.replyJSON(http.StatusOK, struct {
				Rules []faultinject.Rule `json:"rules"`
				Count int                `json:"_count"`
			}{rules, len(rules)})
		case http.MethodPost:
			return c.addFaultRule()
		case http.MethodDelete:
			return c.replyJSON(http.StatusOK, struct {
				Removed int `json:"removed"`
			}{c.h.faults.Clear()})
		}
	case "faults/*":
		switch m {
		case http.MethodGet:
			r, err := c.h.faults.Get(c.res.segs[1])
			if err != nil {
				return err
			}
			return c.replyJSON(http.StatusOK, r)
		case http.MethodDelete:
			if err := c.h.faults.Remove(c.res.segs[1]); err != nil {
				return err
			}
			c.reply(http.StatusNoContent, nil)
			return nil
		}
	case "cluster":
		if m == http.MethodGet {
			return c.replyJSON(http.StatusOK, c.h.engine.Status())
		}
	case "cluster/*":
		if c.res.segs[1] != "drain" {
			return c.noManagement()
		}
		if m == http.MethodPost {
			return c.drain()
		}
	default:
		return c.noManagement()
	}
	return &methodNotAllowed{method: m, shape: "_partita/" + c.res.shape()}
}

func (c *call) noManagement() error {
	return fault.New(fault.NotFound, "Partita's management API has no %s; it serves /_partita/cluster, /_partita/cluster/drain, /_partita/faults and /_partita/faults/{id}", c.r.URL.Path)
}

// DrainRequest asks for a node to be drained, or no longer (Cancel).
type DrainRequest struct {
	Node   string `json:"node"` // its cluster address, or its id in hex
	Cancel bool   `json:"cancel,omitempty"`
}

func (c *call) drain() error {
	b, err := c.body()
	if err != nil {
		return err
	}
	var req DrainRequest
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&req); err != nil || req.Node == "" {
		return fault.New(fault.BadRequest, `A drain request is {"node": "<cluster address or hex id>", "cancel": false}: %v`, err)
	}
	n, err := c.h.engine.Drain(req.Node, !req.Cancel)
	if err != nil {
		return err
	}
	c.h.log.Info("node drain", "node", n.Addr, "draining", n.Draining)
	return c.replyJSON(http.StatusOK, n)
}

func (c *call) addFaultRule() error {
	b, err := c.body()
	if err != nil {
		return err
	}
	var spec faultinject.Spec
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields() // a misspelt selector would otherwise widen the rule silently
	if err := d.Decode(&spec); err != nil {
		return fault.New(fault.BadRequest, "The fault rule is not valid JSON of the expected shape: %v", err)
	}
	if d.More() {
		return fault.New(fault.BadRequest, "The fault rule body holds more than one JSON value")
	}
	r, err := c.h.faults.Add(spec)
	if err != nil {
		return err
	}
	c.h.log.Info("fault rule added", "rule", r.ID, "action", r.Action, "database", r.Database, "container", r.Container)
	return c.replyJSON(http.StatusCreated, r)
}

// SplitResponse is the answer to a split on demand: the partition that split and its two
// children.
type SplitResponse struct {
	Database  string       `json:"database"`
	Container string       `json:"container"`
	Parent    uint32       `json:"parent"`
	Children  []SplitChild `json:"children"`
}

// SplitChild is one child of a split.
type SplitChild struct {
	ID           uint32   `json:"id"`
	MinInclusive string   `json:"minInclusive"`
	MaxExclusive string   `json:"maxExclusive"`
	Parents      []uint32 `json:"parents"`
}

// splitPartition splits a chosen physical partition now.
func (c *call) splitPartition() error {
	if err := c.requireMaster(); err != nil {
		return err
	}
	id, err := strconv.ParseUint(c.res.segs[5], 10, 32)
	if err != nil {
		return fault.New(fault.BadRequest, "%q is not a partition key range id", c.res.segs[5])
	}
	b, err := c.body()
	if err != nil {
		return err
	}
	var at *epk.EPK
	if len(bytes.TrimSpace(b)) > 0 {
		var body struct {
			At string `json:"at"`
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		if err := d.Decode(&body); err != nil {
			return fault.New(fault.BadRequest, "The split body must be {\"at\": \"<hex EPK>\"} or empty: %v", err)
		}
		if body.At != "" {
			e, err := epk.ParseHex(body.At)
			if err != nil {
				return fault.New(fault.BadRequest, "The split point %q is not a hex EPK", body.At)
			}
			at = &e
		}
	}
	db, coll := c.res.segs[1], c.res.segs[3]
	children, err := c.h.engine.SplitPartition(db, coll, uint32(id), at)
	if err != nil {
		return err
	}
	resp := SplitResponse{Database: db, Container: coll, Parent: uint32(id)}
	for _, p := range children {
		resp.Children = append(resp.Children, SplitChild{ID: p.ID, MinInclusive: p.Range.Min.Hex(), MaxExclusive: p.Range.Max.Hex(), Parents: p.Parents})
	}
	c.h.log.Info("partition split on request", "database", db, "container", coll, "parent", id)
	return c.replyJSON(http.StatusOK, resp)
}
