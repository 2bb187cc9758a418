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
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/tracing"
)

// Requests between nodes as typed messages (package nodemsg), once the cluster's version is
// clusterversion.NodeMessages; JSON before, which a node of the previous release reads. Both
// become the same forwarded request on the node that serves it (serveForwarded), and the same
// answer on the node that asked: one path, two encodings. Every kind is typed: writes, splits,
// budget shares, remote reads, load figures, and delegated calls (callmsg.go).

// encodeRequest is req as this cluster's nodes read it.
func (e *Engine) encodeRequest(req *forwarded) ([]byte, error) {
	if e.cluster.active() < clusterversion.NodeMessages {
		return json.Marshal(req)
	}
	return typedRequest(req)
}

// typedRequest is req as a typed message, or as JSON for a kind that has none yet.
func typedRequest(req *forwarded) ([]byte, error) {
	m := &nodemsg.Request{Trace: req.Trace}
	switch {
	case req.Split != nil:
		m.Kind = &nodemsg.Request_Split{Split: &nodemsg.Split{Container: req.Container, Parent: req.Split.Parent, At: req.Split.At}}
	case req.Shares != nil:
		a := &nodemsg.ShareAsk{From: uint64(req.Shares.From), Groups: make([]*nodemsg.GroupAsk, len(req.Shares.Groups))}
		for i, g := range req.Shares.Groups {
			a.Groups[i] = &nodemsg.GroupAsk{Group: uint64(g.Group), From: g.From, To: g.To, Promise: g.Promise, Want: g.Want, Hungry: g.Hungry}
		}
		m.Kind = &nodemsg.Request_Shares{Shares: a}
	case req.Read != nil:
		m.Kind = &nodemsg.Request_Read{Read: typedRead(req.Container, req.Read)}
	case req.Figures:
		m.Kind = &nodemsg.Request_Figures{Figures: &nodemsg.Figures{}}
	case req.Call != nil:
		if err := typedCall(m, req.Container, req.Call); err != nil {
			return nil, err
		}
	default:
		w := &nodemsg.Write{Container: req.Container, Epk: req.EPK, Admit: req.Admit, Ops: make([]*nodemsg.Op, len(req.Ops))}
		for i, op := range req.Ops {
			w.Ops[i] = &nodemsg.Op{Kind: uint32(op.Kind), Id: op.ID, Body: op.Body, IfMatch: op.IfMatch,
				Terms: op.Terms, HasTerms: op.Terms != nil, Unique: op.Unique, HasUnique: op.Unique != nil, Lsn: op.LSN}
		}
		m.Kind = &nodemsg.Request_Write{Write: w}
	}
	return nodemsg.Encode(m)
}

// decodeRequest reads a typed request as the forwarded request it carries.
func decodeRequest(raw []byte) (forwarded, error) {
	r, err := nodemsg.DecodeRequest(raw)
	if err != nil {
		return forwarded{}, fault.New(fault.BadRequest, "A node-to-node request that does not decode: %v", err)
	}
	req := forwarded{Trace: tracing.Carrier(r.Trace)}
	if num, call, ok, err := callOf(r); ok {
		if err != nil {
			return forwarded{}, fault.New(fault.BadRequest, "A delegated call that does not decode: %v", err)
		}
		req.Container, req.Call = num, call
		return req, nil
	}
	switch k := r.Kind.(type) {
	case *nodemsg.Request_Write:
		w := k.Write
		req.Container, req.EPK, req.Admit, req.Ops = w.Container, w.Epk, w.Admit, make([]forwardedOp, len(w.Ops))
		for i, op := range w.Ops {
			if op == nil || op.Kind > math.MaxUint8 {
				return forwarded{}, fault.New(fault.BadRequest, "A forwarded write with an operation of no known kind")
			}
			f := forwardedOp{Kind: partition.OpKind(op.Kind), ID: op.Id, Body: op.Body, IfMatch: op.IfMatch, LSN: op.Lsn}
			if len(f.Body) == 0 {
				f.Body = nil // proto3 does not tell an empty body from none: a write without an item
			}
			if op.HasTerms {
				f.Terms = sent(op.Terms)
			}
			if op.HasUnique {
				f.Unique = sent(op.Unique)
			}
			req.Ops[i] = f
		}
	case *nodemsg.Request_Split:
		req.Container, req.Split = k.Split.Container, &forwardedSplit{Parent: k.Split.Parent, At: k.Split.At}
	case *nodemsg.Request_Shares:
		req.Shares = &shareAsk{From: replication.NodeID(k.Shares.From), Groups: make([]groupAsk, len(k.Shares.Groups))}
		for i, g := range k.Shares.Groups {
			if g == nil {
				return forwarded{}, fault.New(fault.BadRequest, "A budget share's ask with an empty partition")
			}
			req.Shares.Groups[i] = groupAsk{Group: replication.GroupID(g.Group), From: g.From, To: g.To, Promise: g.Promise, Want: g.Want, Hungry: g.Hungry}
		}
	case *nodemsg.Request_Read:
		rc, err := consistencyOf(k.Read.Consistency)
		if err != nil {
			return forwarded{}, err
		}
		req.Container, req.Read = k.Read.Container, readOf(k.Read)
		req.Read.Consistency = rc
	case *nodemsg.Request_Figures:
		req.Figures = true
	default:
		// A kind of a later release, which a cluster at this release's version never sends.
		return forwarded{}, fault.New(fault.BadRequest, "A node-to-node request of a kind this release does not know")
	}
	return req, nil
}

// typedRead is rd, a read of container num, as a typed message.
func typedRead(num uint32, rd *remoteRead) *nodemsg.Read {
	m := &nodemsg.Read{Container: num, Partition: rd.Partition, All: rd.All, Count: rd.Count, Start: rd.Start,
		Ranges: make([]*nodemsg.HexRange, len(rd.Ranges))}
	for i, r := range rd.Ranges {
		m.Ranges[i] = &nodemsg.HexRange{Lo: r[0], Hi: r[1]}
	}
	if ir := rd.Index; ir != nil {
		m.Index = &nodemsg.IndexRange{Path: ir.Path, Lo: ir.Lo, HasLo: ir.Lo != nil, Hi: ir.Hi, HasHi: ir.Hi != nil, Values: ir.Values}
	}
	if r := rd.Rows; r != nil {
		m.Rows = &nodemsg.RowsRead{LoEpk: r.LoEPK, LoId: r.LoID, HiEpk: r.HiEPK, HiId: r.HiID, Reverse: r.Reverse}
	}
	if g := rd.Get; g != nil {
		m.Get = &nodemsg.ItemGet{Epk: g.EPK, Id: g.ID}
	}
	m.Consistency = typedConsistency(rd.Consistency)
	return m
}

// readOf reads a typed read back.
func readOf(m *nodemsg.Read) *remoteRead {
	rd := &remoteRead{Partition: m.Partition, All: m.All, Count: m.Count, Start: m.Start}
	for _, r := range m.Ranges {
		rd.Ranges = append(rd.Ranges, [2]string{r.GetLo(), r.GetHi()})
	}
	if ir := m.Index; ir != nil {
		rd.Index = &query.IndexRange{Path: ir.Path, Values: ir.Values}
		if ir.HasLo {
			rd.Index.Lo = sent(ir.Lo)
		}
		if ir.HasHi {
			rd.Index.Hi = sent(ir.Hi)
		}
	}
	if r := m.Rows; r != nil {
		rd.Rows = &rowsRead{LoEPK: r.LoEpk, LoID: r.LoId, HiEPK: r.HiEpk, HiID: r.HiId, Reverse: r.Reverse}
	}
	if g := m.Get; g != nil {
		rd.Get = &itemGet{EPK: g.Epk, ID: g.Id}
	}
	return rd // its consistency read by decodeRequest
}

// serveTyped serves a typed request and answers in kind.
func (e *Engine) serveTyped(raw []byte) []byte {
	req, err := decodeRequest(raw)
	var ans forwardedAnswer
	if err != nil {
		e.served.Add(1)
		ans = failedForward(err)
	} else {
		ans = e.serveForwarded(req)
	}
	b, err := nodemsg.Encode(typedAnswer(req, ans))
	if err != nil {
		b, _ = nodemsg.Encode(typedAnswer(req, failedForward(fault.New(fault.Internal, "%v", err))))
	}
	return b
}

// typedAnswer is ans, the answer to req, as a typed message of req's kind.
func typedAnswer(req forwarded, ans forwardedAnswer) *nodemsg.Answer {
	switch {
	case req.Call != nil:
		return typedCallAnswer(req.Call, ans)
	case req.Split != nil:
		return &nodemsg.Answer{Kind: &nodemsg.Answer_Split{Split: &nodemsg.SplitAnswer{Err: typedFault(ans.Err), Retry: ans.Retry, Moved: ans.Moved}}}
	case req.Shares != nil:
		a := &nodemsg.ShareAnswer{Err: typedFault(ans.Err)}
		if ans.Shares != nil {
			for _, g := range ans.Shares.Grants {
				a.Grants = append(a.Grants, &nodemsg.Grant{Group: uint64(g.Group), Second: g.Second, PerSecond: g.PerSecond})
			}
		}
		return &nodemsg.Answer{Kind: &nodemsg.Answer_Shares{Shares: a}}
	case req.Figures:
		a := &nodemsg.FiguresAnswer{Err: typedFault(ans.Err), Figures: make([]*nodemsg.ReplicaFigure, len(ans.Figures))}
		for i, f := range ans.Figures {
			t := &nodemsg.ReplicaFigure{Group: uint64(f.Group), Bytes: f.Bytes, Ru: f.RU, Full: f.Full, Leading: f.Leading, Items: f.Items,
				Lsn: f.LSN, Total: f.Total, Throttled: f.Throttled}
			for _, sp := range f.Seconds {
				t.Seconds = append(t.Seconds, &nodemsg.SecondSpent{Second: sp.Second, Ru: sp.RU})
			}
			for _, p := range f.Trend {
				t.Trend = append(t.Trend, &nodemsg.TrendPoint{Start: p.Start, PeakRu: p.PeakRU, Normalized: p.Normalized})
			}
			for _, h := range f.Hottest {
				t.Hottest = append(t.Hottest, &nodemsg.LogicalFigure{Epk: h.EPK, Ru: h.RU, Key: h.Key})
			}
			a.Figures[i] = t
		}
		return &nodemsg.Answer{Kind: &nodemsg.Answer_Figures{Figures: a}}
	case req.Read != nil:
		a := &nodemsg.ReadAnswer{Err: typedFault(ans.Err), Retry: ans.Retry, Moved: ans.Moved}
		if r := ans.Read; r != nil {
			a.More, a.Lsn, a.Count, a.Counted = r.More, r.LSN, r.Count, r.Counted
			a.Docs = make([]*nodemsg.Doc, len(r.Docs))
			for i, d := range r.Docs {
				a.Docs[i] = &nodemsg.Doc{Seq: d.Seq, Json: d.JSON, Epk: d.EPK, Id: d.ID}
			}
		}
		return &nodemsg.Answer{Kind: &nodemsg.Answer_Read{Read: a}}
	}
	wa := &nodemsg.WriteAnswer{Charges: ans.Charges, Charge: ans.Charge, Err: typedFault(ans.Err), Index: int32(ans.Index), Retry: ans.Retry}
	for _, r := range ans.Results {
		wa.Results = append(wa.Results, &nodemsg.Result{Json: r.JSON, Lsn: r.LSN, Created: r.Created,
			PrevBytes: int64(r.PrevBytes), IndexTerms: int64(r.IndexTerms)})
	}
	return &nodemsg.Answer{Kind: &nodemsg.Answer_Write{Write: wa}}
}

// decodeAnswer reads a node's answer, in either framing: a node answers a typed request with
// JSON when its engine is not open yet (NotReady).
func decodeAnswer(raw []byte) (forwardedAnswer, error) {
	ans := forwardedAnswer{Index: -1}
	if !nodemsg.Typed(raw) {
		return ans, json.Unmarshal(raw, &ans)
	}
	a, err := nodemsg.DecodeAnswer(raw)
	if err != nil {
		return ans, err
	}
	switch k := a.Kind.(type) {
	case *nodemsg.Answer_Write:
		w := k.Write
		ans = forwardedAnswer{Charges: w.Charges, Charge: w.Charge, Err: faultOf(w.Err), Index: int(w.Index), Retry: w.Retry}
		for _, r := range w.Results {
			if r == nil {
				return ans, errors.New("a write's answer with an empty result")
			}
			ans.Results = append(ans.Results, forwardedResult{JSON: r.Json, LSN: r.Lsn, Created: r.Created,
				PrevBytes: int(r.PrevBytes), IndexTerms: int(r.IndexTerms)})
		}
	case *nodemsg.Answer_Split:
		ans.Err, ans.Retry, ans.Moved = faultOf(k.Split.Err), k.Split.Retry, k.Split.Moved
	case *nodemsg.Answer_Shares:
		ans.Err, ans.Shares = faultOf(k.Shares.Err), &shareAnswer{}
		for _, g := range k.Shares.Grants {
			if g == nil {
				return ans, errors.New("a budget share's answer with an empty grant")
			}
			ans.Shares.Grants = append(ans.Shares.Grants, groupGrant{Group: replication.GroupID(g.Group), Second: g.Second, PerSecond: g.PerSecond})
		}
	case *nodemsg.Answer_Read:
		r := k.Read
		ans.Err, ans.Retry, ans.Moved = faultOf(r.Err), r.Retry, r.Moved
		if ans.Err == nil && !ans.Moved {
			ans.Read = &readAnswer{More: r.More, LSN: r.Lsn, Count: r.Count, Counted: r.Counted, Docs: make([]remoteDoc, len(r.Docs))}
			for i, d := range r.Docs {
				if d == nil {
					return ans, errors.New("a read's answer with an empty item")
				}
				ans.Read.Docs[i] = remoteDoc{Seq: d.Seq, JSON: d.Json, EPK: d.Epk, ID: d.Id}
			}
		}
	case *nodemsg.Answer_Figures:
		ans.Err = faultOf(k.Figures.Err)
		for _, t := range k.Figures.Figures {
			if t == nil {
				return ans, errors.New("a figures answer with an empty replica")
			}
			f := replicaFigure{Group: replication.GroupID(t.Group), Bytes: t.Bytes, RU: t.Ru, Full: t.Full, Leading: t.Leading, Items: t.Items,
				LSN: t.Lsn, Total: t.Total, Throttled: t.Throttled}
			for _, sp := range t.Seconds {
				f.Seconds = append(f.Seconds, ru.SecondSpent{Second: sp.GetSecond(), RU: sp.GetRu()})
			}
			for _, p := range t.Trend {
				f.Trend = append(f.Trend, trendFigure{Start: p.GetStart(), PeakRU: p.GetPeakRu(), Normalized: p.GetNormalized()})
			}
			for _, h := range t.Hottest {
				f.Hottest = append(f.Hottest, logicalFigure{EPK: h.GetEpk(), RU: h.GetRu(), Key: h.GetKey()})
			}
			ans.Figures = append(ans.Figures, f)
		}
	default:
		var ok bool
		if ans, ok, err = callAnswerOf(a); !ok {
			return ans, errors.New("a typed answer of no kind this release knows")
		}
		return ans, err
	}
	return ans, nil
}

// sent is s, never nil: what was sent, even empty, is the sender's (a bound, or entries),
// where nil means none was sent.
func sent[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func typedFault(f *fault.Error) *nodemsg.Fault {
	if f == nil {
		return nil
	}
	return &nodemsg.Fault{Kind: uint32(f.Kind), Message: f.Message, RetryAfterNanos: int64(f.RetryAfter), Reason: uint32(f.Reason),
		Line: int32(f.Pos.Line), Column: int32(f.Pos.Column)}
}

// faultOf reads a typed fault back; a kind beyond any release's is an Internal one, with
// its message.
func faultOf(f *nodemsg.Fault) *fault.Error {
	if f == nil {
		return nil
	}
	kind := fault.Kind(f.Kind)
	if f.Kind > math.MaxUint8 {
		kind = fault.Internal
	}
	return &fault.Error{Kind: kind, Message: f.Message, RetryAfter: time.Duration(f.RetryAfterNanos), Reason: fault.Reason(f.Reason),
		Pos: fault.Pos{Line: int(f.Line), Column: int(f.Column)}}
}
