package engine

import (
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/nodemsg"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/tracing"
)

// Forwarded writes as typed messages (package nodemsg), once the cluster's version is
// clusterversion.NodeMessages; JSON before, which a node of the previous release reads. Both
// become the same forwarded write on the node that serves it (serveForwarded), and the same
// answer on the node that asked: one path, two encodings.

// encodeWrite is req, a forwarded write, as this cluster's nodes read it.
func (e *Engine) encodeWrite(req *forwarded) ([]byte, error) {
	if e.cluster.active() < clusterversion.NodeMessages {
		return json.Marshal(req)
	}
	return typedWrite(req)
}

// typedWrite is req as a typed message.
func typedWrite(req *forwarded) ([]byte, error) {
	w := &nodemsg.Write{Container: req.Container, Epk: req.EPK, Admit: req.Admit, Ops: make([]*nodemsg.Op, len(req.Ops))}
	for i, op := range req.Ops {
		w.Ops[i] = &nodemsg.Op{Kind: uint32(op.Kind), Id: op.ID, Body: op.Body, IfMatch: op.IfMatch,
			Terms: op.Terms, HasTerms: op.Terms != nil, Unique: op.Unique, HasUnique: op.Unique != nil, Lsn: op.LSN}
	}
	return nodemsg.Encode(&nodemsg.Request{Trace: req.Trace, Kind: &nodemsg.Request_Write{Write: w}})
}

// decodeWriteAnswer reads a node's answer to a forwarded write, in either framing: a node
// answers a typed request with a JSON one when its engine is not open yet (NotReady).
func decodeWriteAnswer(raw []byte) (forwardedAnswer, error) {
	var ans forwardedAnswer
	if !nodemsg.Typed(raw) {
		return ans, json.Unmarshal(raw, &ans)
	}
	a, err := nodemsg.DecodeAnswer(raw)
	if err != nil {
		return ans, err
	}
	w := a.GetWrite()
	if w == nil {
		return ans, errors.New("a typed answer that is not a write's")
	}
	ans = forwardedAnswer{Charges: w.Charges, Charge: w.Charge, Err: faultOf(w.Err), Index: int(w.Index), Retry: w.Retry}
	for _, r := range w.Results {
		ans.Results = append(ans.Results, forwardedResult{JSON: r.Json, LSN: r.Lsn, Created: r.Created,
			PrevBytes: int(r.PrevBytes), IndexTerms: int(r.IndexTerms)})
	}
	return ans, nil
}

// serveTyped serves a typed request and answers in kind.
func (e *Engine) serveTyped(raw []byte) []byte {
	var ans forwardedAnswer
	if req, err := decodeWrite(raw); err != nil {
		e.served.Add(1)
		ans = failedForward(err)
	} else {
		ans = e.serveForwarded(req)
	}
	wa := &nodemsg.WriteAnswer{Charges: ans.Charges, Charge: ans.Charge, Err: typedFault(ans.Err), Index: int32(ans.Index), Retry: ans.Retry}
	for _, r := range ans.Results {
		wa.Results = append(wa.Results, &nodemsg.Result{Json: r.JSON, Lsn: r.LSN, Created: r.Created,
			PrevBytes: int64(r.PrevBytes), IndexTerms: int64(r.IndexTerms)})
	}
	b, err := nodemsg.Encode(&nodemsg.Answer{Kind: &nodemsg.Answer_Write{Write: wa}})
	if err != nil {
		b, _ = nodemsg.Encode(&nodemsg.Answer{Kind: &nodemsg.Answer_Write{Write: &nodemsg.WriteAnswer{Index: -1,
			Err: typedFault(fault.New(fault.Internal, "%v", err))}}})
	}
	return b
}

// decodeWrite reads a typed request as the forwarded write it carries.
func decodeWrite(raw []byte) (forwarded, error) {
	r, err := nodemsg.DecodeRequest(raw)
	if err != nil {
		return forwarded{}, fault.New(fault.BadRequest, "A forwarded write that does not decode: %v", err)
	}
	w := r.GetWrite()
	if w == nil {
		// A kind of a later release, which a cluster at this release's version never sends.
		return forwarded{}, fault.New(fault.BadRequest, "A node-to-node request of a kind this release does not know")
	}
	req := forwarded{Container: w.Container, EPK: w.Epk, Admit: w.Admit, Trace: tracing.Carrier(r.Trace), Ops: make([]forwardedOp, len(w.Ops))}
	for i, op := range w.Ops {
		if op == nil || op.Kind > math.MaxUint8 {
			return forwarded{}, fault.New(fault.BadRequest, "A forwarded write with an operation of no known kind")
		}
		f := forwardedOp{Kind: partition.OpKind(op.Kind), ID: op.Id, Body: op.Body, IfMatch: op.IfMatch, LSN: op.Lsn}
		if len(f.Body) == 0 {
			f.Body = nil // proto3 does not tell an empty body from none: a write without an item
		}
		if op.HasTerms {
			f.Terms = nonNil(op.Terms)
		}
		if op.HasUnique {
			f.Unique = nonNil(op.Unique)
		}
		req.Ops[i] = f
	}
	return req, nil
}

// nonNil is entries, never nil: entries that were sent, even none, are the sender's.
func nonNil(entries [][]byte) [][]byte {
	if entries == nil {
		return [][]byte{}
	}
	return entries
}

func typedFault(f *fault.Error) *nodemsg.Fault {
	if f == nil {
		return nil
	}
	return &nodemsg.Fault{Kind: uint32(f.Kind), Message: f.Message, RetryAfterNanos: int64(f.RetryAfter), Reason: uint32(f.Reason),
		Line: int32(f.Pos.Line), Column: int32(f.Pos.Column)}
}

func faultOf(f *nodemsg.Fault) *fault.Error {
	if f == nil {
		return nil
	}
	return &fault.Error{Kind: fault.Kind(f.Kind), Message: f.Message, RetryAfter: time.Duration(f.RetryAfterNanos), Reason: fault.Reason(f.Reason),
		Pos: fault.Pos{Line: int(f.Line), Column: int(f.Column)}}
}
