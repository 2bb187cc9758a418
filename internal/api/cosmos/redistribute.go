package cosmos

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
)

// Per-partition throughput (engine/redistribute.go), in the shapes of the service's management
// API: GET .../partitions/throughput answers each physical partition's RU/s, as
// retrieve-partition-throughput does; POST to it redistributes, with the body of
// redistributeThroughput:
//
//	{"throughputPolicy": "custom",
//	 "targetPhysicalPartitionThroughputInfo": [{"id": "0", "throughput": 2000}],
//	 "sourcePhysicalPartitionThroughputInfo": [{"id": "1"}]}
//
// or {"throughputPolicy": "equal"} to divide the throughput evenly again.

// PartitionThroughputJSON is one physical partition's RU/s; ids are strings, as the
// service's.
type PartitionThroughputJSON struct {
	ID         string  `json:"id"`
	Throughput float64 `json:"throughput"`
}

// PartitionThroughputResponse is the answer to both methods.
type PartitionThroughputResponse struct {
	Partitions []PartitionThroughputJSON `json:"physicalPartitionThroughputInfo"`
}

// RedistributeRequest is the body of a redistribution.
type RedistributeRequest struct {
	Policy  string                    `json:"throughputPolicy"`
	Targets []PartitionThroughputJSON `json:"targetPhysicalPartitionThroughputInfo,omitempty"`
	Sources []PartitionThroughputJSON `json:"sourcePhysicalPartitionThroughputInfo,omitempty"`
}

// partitionThroughput answers GET and POST .../partitions/throughput (dispatch.go).
func (c *call) partitionThroughput() error {
	db, coll := c.res.segs[1], c.res.segs[3]
	var out []engine.PartitionThroughput
	var err error
	if c.r.Method == http.MethodGet {
		out, err = c.h.engine.PartitionThroughputs(db, coll)
	} else {
		if err := c.requireMaster(); err != nil {
			return err
		}
		var r engine.Redistribution
		if r, err = c.redistribution(); err != nil {
			return err
		}
		out, err = c.h.engine.RedistributeThroughput(db, coll, r)
	}
	if err != nil {
		return err
	}
	resp := PartitionThroughputResponse{Partitions: make([]PartitionThroughputJSON, len(out))}
	for i, p := range out {
		resp.Partitions[i] = PartitionThroughputJSON{ID: strconv.FormatUint(uint64(p.ID), 10), Throughput: p.RUPerSecond}
	}
	return c.replyJSON(http.StatusOK, resp)
}

// redistribution reads a redistribution's body.
func (c *call) redistribution() (engine.Redistribution, error) {
	b, err := c.body()
	if err != nil {
		return engine.Redistribution{}, err
	}
	var req RedistributeRequest
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&req); err != nil {
		return engine.Redistribution{}, fault.New(fault.BadRequest, "The redistribution body does not read: %v", err)
	}
	id := func(s string) (uint32, error) {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return 0, fault.New(fault.BadRequest, "%q is not a physical partition id", s)
		}
		return uint32(n), nil
	}
	// The engine checks what the partitions named must be (RedistributeThroughput).
	var r engine.Redistribution
	switch req.Policy {
	case "equal":
		r.Even = true
	case "custom":
	default:
		return r, fault.New(fault.BadRequest, "throughputPolicy must be custom or equal, not %q", req.Policy)
	}
	for _, t := range req.Targets {
		n, err := id(t.ID)
		if err != nil {
			return r, err
		}
		r.Targets = append(r.Targets, engine.PartitionThroughput{ID: n, RUPerSecond: t.Throughput})
	}
	for _, s := range req.Sources {
		n, err := id(s.ID)
		if err != nil {
			return r, err
		}
		r.Sources = append(r.Sources, n)
	}
	return r, nil
}
