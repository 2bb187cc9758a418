package nodemsg

import (
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/ru"
)

// The typed messages to and from the calls of package nodecall: one message per kind of
// request, and its answer. What decodes is checked as far as a node can without its state:
// kinds of operations, changes, partition key values and consistency levels it does not know
// are refused, not guessed.

// typedRequest is req as a typed message.
func typedRequest(req *nodecall.Request) (*Request, error) {
	m := &Request{Trace: req.Trace, Low: req.Low}
	switch {
	case req.Split != nil:
		m.Kind = &Request_Split{Split: &Split{Container: req.Container, Parent: req.Split.Parent, At: req.Split.At}}
	case req.Shares != nil:
		a := &ShareAsk{From: req.Shares.From, Groups: make([]*GroupAsk, len(req.Shares.Groups))}
		for i, g := range req.Shares.Groups {
			a.Groups[i] = &GroupAsk{Group: g.Group, From: g.From, To: g.To, Promise: g.Promise, Want: g.Want, Hungry: g.Hungry}
		}
		m.Kind = &Request_Shares{Shares: a}
	case req.Read != nil:
		m.Kind = &Request_Read{Read: typedRead(req.Container, req.Read)}
	case req.Figures:
		m.Kind = &Request_Figures{Figures: &Figures{}}
	case req.Call != nil:
		if err := typedCall(m, req.Container, req.Call); err != nil {
			return nil, err
		}
	default:
		w := &Write{Container: req.Container, Epk: req.EPK, Admit: req.Admit, Ops: make([]*Op, len(req.Ops))}
		for i, op := range req.Ops {
			w.Ops[i] = &Op{Kind: uint32(op.Kind), Id: op.ID, Body: op.Body, IfMatch: op.IfMatch,
				Terms: op.Terms, HasTerms: op.Terms != nil, Unique: op.Unique, HasUnique: op.Unique != nil, Lsn: op.LSN}
		}
		m.Kind = &Request_Write{Write: w}
	}
	return m, nil
}

// requestOf reads a typed request back.
func requestOf(raw []byte) (nodecall.Request, error) {
	r, err := DecodeRequest(raw)
	if err != nil {
		return nodecall.Request{}, fault.New(fault.BadRequest, "A node-to-node request that does not decode: %v", err)
	}
	req := nodecall.Request{Trace: r.Trace, Low: r.Low}
	if num, call, ok, err := callOf(r); ok {
		if err != nil {
			return nodecall.Request{}, fault.New(fault.BadRequest, "A delegated call that does not decode: %v", err)
		}
		req.Container, req.Call = num, call
		return req, nil
	}
	switch k := r.Kind.(type) {
	case *Request_Write:
		w := k.Write
		req.Container, req.EPK, req.Admit, req.Ops = w.Container, w.Epk, w.Admit, make([]nodecall.Op, len(w.Ops))
		for i, op := range w.Ops {
			if op == nil || op.Kind > math.MaxUint8 {
				return nodecall.Request{}, fault.New(fault.BadRequest, "A forwarded write with an operation of no known kind")
			}
			f := nodecall.Op{Kind: uint8(op.Kind), ID: op.Id, Body: op.Body, IfMatch: op.IfMatch, LSN: op.Lsn}
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
	case *Request_Split:
		req.Container, req.Split = k.Split.Container, &nodecall.Split{Parent: k.Split.Parent, At: k.Split.At}
	case *Request_Shares:
		req.Shares = &nodecall.ShareAsk{From: k.Shares.From, Groups: make([]nodecall.GroupAsk, len(k.Shares.Groups))}
		for i, g := range k.Shares.Groups {
			if g == nil {
				return nodecall.Request{}, fault.New(fault.BadRequest, "A budget share's ask with an empty partition")
			}
			req.Shares.Groups[i] = nodecall.GroupAsk{Group: g.Group, From: g.From, To: g.To, Promise: g.Promise, Want: g.Want, Hungry: g.Hungry}
		}
	case *Request_Read:
		rc, err := consistencyOf(k.Read.Consistency)
		if err != nil {
			return nodecall.Request{}, err
		}
		req.Container, req.Read = k.Read.Container, readOf(k.Read)
		req.Read.Consistency = rc
	case *Request_Figures:
		req.Figures = true
	default:
		// A kind of a later release, which a cluster at this release's version never sends.
		return nodecall.Request{}, fault.New(fault.BadRequest, "A node-to-node request of a kind this release does not know")
	}
	return req, nil
}

// typedRead is rd, a read of container num, as a typed message.
func typedRead(num uint32, rd *nodecall.Read) *Read {
	m := &Read{Container: num, Partition: rd.Partition, All: rd.All, Count: rd.Count, Start: rd.Start,
		Ranges: make([]*HexRange, len(rd.Ranges))}
	for i, r := range rd.Ranges {
		m.Ranges[i] = &HexRange{Lo: r[0], Hi: r[1]}
	}
	if ir := rd.Index; ir != nil {
		m.Index = &IndexRange{Path: ir.Path, Lo: ir.Lo, HasLo: ir.Lo != nil, Hi: ir.Hi, HasHi: ir.Hi != nil, Values: ir.Values}
	}
	if r := rd.Rows; r != nil {
		m.Rows = &RowsRead{LoEpk: r.LoEPK, LoId: r.LoID, HiEpk: r.HiEPK, HiId: r.HiID, Reverse: r.Reverse}
	}
	if g := rd.Get; g != nil {
		m.Get = &ItemGet{Epk: g.EPK, Id: g.ID}
	}
	m.Consistency = typedConsistency(rd.Consistency)
	return m
}

// readOf reads a typed read back, but for its consistency (requestOf checks it).
func readOf(m *Read) *nodecall.Read {
	rd := &nodecall.Read{Partition: m.Partition, All: m.All, Count: m.Count, Start: m.Start}
	for _, r := range m.Ranges {
		rd.Ranges = append(rd.Ranges, [2]string{r.GetLo(), r.GetHi()})
	}
	if ir := m.Index; ir != nil {
		rd.Index = &nodecall.IndexRange{Path: ir.Path, Values: ir.Values}
		if ir.HasLo {
			rd.Index.Lo = sent(ir.Lo)
		}
		if ir.HasHi {
			rd.Index.Hi = sent(ir.Hi)
		}
	}
	if r := m.Rows; r != nil {
		rd.Rows = &nodecall.Rows{LoEPK: r.LoEpk, LoID: r.LoId, HiEPK: r.HiEpk, HiID: r.HiId, Reverse: r.Reverse}
	}
	if g := m.Get; g != nil {
		rd.Get = &nodecall.Get{EPK: g.Epk, ID: g.Id}
	}
	return rd
}

// typedAnswer is ans, the answer to req, as a typed message of req's kind.
func typedAnswer(req *nodecall.Request, ans nodecall.Answer) *Answer {
	switch {
	case req.Call != nil:
		return typedCallAnswer(req.Call, ans)
	case req.Split != nil:
		return &Answer{Kind: &Answer_Split{Split: &SplitAnswer{Err: typedFault(ans.Err), Retry: ans.Retry, Moved: ans.Moved}}}
	case req.Shares != nil:
		a := &ShareAnswer{Err: typedFault(ans.Err)}
		if ans.Shares != nil {
			for _, g := range ans.Shares.Grants {
				a.Grants = append(a.Grants, &Grant{Group: g.Group, Second: g.Second, PerSecond: g.PerSecond})
			}
		}
		return &Answer{Kind: &Answer_Shares{Shares: a}}
	case req.Figures:
		a := &FiguresAnswer{Err: typedFault(ans.Err), Figures: make([]*ReplicaFigure, len(ans.Figures))}
		for i, f := range ans.Figures {
			t := &ReplicaFigure{Group: f.Group, Bytes: f.Bytes, Ru: f.RU, Full: f.Full, Leading: f.Leading, Items: f.Items,
				Lsn: f.LSN, Total: f.Total, Throttled: f.Throttled}
			for _, sp := range f.Seconds {
				t.Seconds = append(t.Seconds, &SecondSpent{Second: sp.Second, Ru: sp.RU})
			}
			for _, p := range f.Trend {
				t.Trend = append(t.Trend, &TrendPoint{Start: p.Start, PeakRu: p.PeakRU, Normalized: p.Normalized})
			}
			for _, h := range f.Hottest {
				t.Hottest = append(t.Hottest, &LogicalFigure{Epk: h.EPK, Ru: h.RU, Key: h.Key})
			}
			a.Figures[i] = t
		}
		return &Answer{Kind: &Answer_Figures{Figures: a}}
	case req.Read != nil:
		a := &ReadAnswer{Err: typedFault(ans.Err), Retry: ans.Retry, Moved: ans.Moved}
		if r := ans.Read; r != nil {
			a.More, a.Lsn, a.Count, a.Counted = r.More, r.LSN, r.Count, r.Counted
			a.Docs = make([]*Doc, len(r.Docs))
			for i, d := range r.Docs {
				a.Docs[i] = &Doc{Seq: d.Seq, Json: d.JSON, Epk: d.EPK, Id: d.ID}
			}
		}
		return &Answer{Kind: &Answer_Read{Read: a}}
	}
	wa := &WriteAnswer{Charges: ans.Charges, Charge: ans.Charge, Err: typedFault(ans.Err), Index: int32(ans.Index), Retry: ans.Retry}
	for _, r := range ans.Results {
		wa.Results = append(wa.Results, &Result{Json: r.JSON, Lsn: r.LSN, Created: r.Created,
			PrevBytes: int64(r.PrevBytes), IndexTerms: int64(r.IndexTerms)})
	}
	return &Answer{Kind: &Answer_Write{Write: wa}}
}

// answerOf reads a typed answer back.
func answerOf(a *Answer) (nodecall.Answer, error) {
	ans := nodecall.Answer{Index: -1}
	switch k := a.Kind.(type) {
	case *Answer_Write:
		w := k.Write
		ans = nodecall.Answer{Charges: w.Charges, Charge: w.Charge, Err: faultOf(w.Err), Index: int(w.Index), Retry: w.Retry}
		for _, r := range w.Results {
			if r == nil {
				return ans, errors.New("a write's answer with an empty result")
			}
			ans.Results = append(ans.Results, nodecall.Result{JSON: r.Json, LSN: r.Lsn, Created: r.Created,
				PrevBytes: int(r.PrevBytes), IndexTerms: int(r.IndexTerms)})
		}
	case *Answer_Split:
		ans.Err, ans.Retry, ans.Moved = faultOf(k.Split.Err), k.Split.Retry, k.Split.Moved
	case *Answer_Shares:
		ans.Err, ans.Shares = faultOf(k.Shares.Err), &nodecall.ShareAnswer{}
		for _, g := range k.Shares.Grants {
			if g == nil {
				return ans, errors.New("a budget share's answer with an empty grant")
			}
			ans.Shares.Grants = append(ans.Shares.Grants, nodecall.Grant{Group: g.Group, Second: g.Second, PerSecond: g.PerSecond})
		}
	case *Answer_Read:
		r := k.Read
		ans.Err, ans.Retry, ans.Moved = faultOf(r.Err), r.Retry, r.Moved
		if ans.Err == nil && !ans.Moved {
			ans.Read = &nodecall.ReadAnswer{More: r.More, LSN: r.Lsn, Count: r.Count, Counted: r.Counted, Docs: make([]nodecall.Doc, len(r.Docs))}
			for i, d := range r.Docs {
				if d == nil {
					return ans, errors.New("a read's answer with an empty item")
				}
				ans.Read.Docs[i] = nodecall.Doc{Seq: d.Seq, JSON: d.Json, EPK: d.Epk, ID: d.Id}
			}
		}
	case *Answer_Figures:
		ans.Err = faultOf(k.Figures.Err)
		for _, t := range k.Figures.Figures {
			if t == nil {
				return ans, errors.New("a figures answer with an empty replica")
			}
			f := nodecall.ReplicaFigure{Group: t.Group, Bytes: t.Bytes, RU: t.Ru, Full: t.Full, Leading: t.Leading, Items: t.Items,
				LSN: t.Lsn, Total: t.Total, Throttled: t.Throttled}
			for _, sp := range t.Seconds {
				f.Seconds = append(f.Seconds, ru.SecondSpent{Second: sp.GetSecond(), RU: sp.GetRu()})
			}
			for _, p := range t.Trend {
				f.Trend = append(f.Trend, nodecall.TrendFigure{Start: p.GetStart(), PeakRU: p.GetPeakRu(), Normalized: p.GetNormalized()})
			}
			for _, h := range t.Hottest {
				f.Hottest = append(f.Hottest, nodecall.LogicalFigure{EPK: h.GetEpk(), RU: h.GetRu(), Key: h.GetKey()})
			}
			ans.Figures = append(ans.Figures, f)
		}
	default:
		ans, ok, err := callAnswerOf(a)
		if !ok {
			return ans, errors.New("a typed answer of no kind this release knows")
		}
		return ans, err
	}
	return ans, nil
}

// typedCall sets m's kind to call, on container num: one message for each kind of call.
func typedCall(m *Request, num uint32, call *nodecall.Call) error {
	key := typedKey(call.Key)
	switch call.Method {
	case nodecall.CallRead:
		m.Kind = &Request_ItemRead{ItemRead: &ItemRead{Container: num, Key: key, Id: call.ID,
			Consistency: typedConsistency(call.Consistency)}}
	case nodecall.CallWrite:
		m.Kind = &Request_ItemWrite{ItemWrite: &ItemWrite{Container: num, Key: key, Id: call.ID, Kind: call.Kind,
			Body: call.Body, IfMatch: call.IfMatch, IndexingDirective: call.IndexingDirective, Triggers: typedTriggers(call)}}
	case nodecall.CallDelete:
		m.Kind = &Request_ItemDelete{ItemDelete: &ItemDelete{Container: num, Key: key, Id: call.ID, IfMatch: call.IfMatch,
			Triggers: typedTriggers(call)}}
	case nodecall.CallPatch:
		m.Kind = &Request_ItemPatch{ItemPatch: &ItemPatch{Container: num, Key: key, Id: call.ID, IfMatch: call.IfMatch,
			Patch: typedPatch(call.Patch)}}
	case nodecall.CallBatch:
		b := &Batch{Container: num, Key: key, Ops: make([]*BatchOp, len(call.Batch))}
		for i, op := range call.Batch {
			b.Ops[i] = &BatchOp{Kind: op.Kind, Id: op.ID, Body: op.Body, IfMatch: op.IfMatch, Patch: typedPatch(op.Patch)}
		}
		m.Kind = &Request_Batch{Batch: b}
	case nodecall.CallProcedure:
		m.Kind = &Request_Procedure{Procedure: &Procedure{Container: num, Key: key, Id: call.ID, Args: call.Args,
			Log: call.Log, Triggers: typedTriggers(call)}}
	case nodecall.CallFeed:
		f := call.Feed
		if f == nil {
			return errors.New("a delegated change feed read without its query")
		}
		fr := &FeedRead{Container: num, Lo: f.From, Hi: f.To, After: f.Start.After, HasAfter: f.Start.HasAfter,
			Now: f.Start.Now, AllVersions: f.AllVersions, Max: int64(f.Max), Consistency: typedConsistency(call.Consistency)}
		if !f.Start.Since.IsZero() {
			fr.SinceNanos = f.Start.Since.UnixNano()
		}
		m.Kind = &Request_Feed{Feed: fr}
	default:
		return errors.New("a delegated call of no kind")
	}
	return nil
}

// callOf reads a typed call back, with its container; ok is false for a request of another
// kind.
func callOf(r *Request) (num uint32, call *nodecall.Call, ok bool, err error) {
	call = &nodecall.Call{}
	var key *PartitionKey
	switch k := r.Kind.(type) {
	case *Request_ItemRead:
		m := k.ItemRead
		num, key, call.Method, call.ID = m.Container, m.Key, nodecall.CallRead, m.Id
		call.Consistency, err = consistencyOf(m.Consistency)
	case *Request_ItemWrite:
		m := k.ItemWrite
		num, key, call.Method, call.ID, call.Kind = m.Container, m.Key, nodecall.CallWrite, m.Id, m.Kind
		call.Body, call.IfMatch, call.IndexingDirective = m.Body, m.IfMatch, m.IndexingDirective
		triggersOf(call, m.Triggers)
	case *Request_ItemDelete:
		m := k.ItemDelete
		num, key, call.Method, call.ID, call.IfMatch = m.Container, m.Key, nodecall.CallDelete, m.Id, m.IfMatch
		triggersOf(call, m.Triggers)
	case *Request_ItemPatch:
		m := k.ItemPatch
		num, key, call.Method, call.ID, call.IfMatch, call.Patch = m.Container, m.Key, nodecall.CallPatch, m.Id, m.IfMatch, patchOf(m.Patch)
	case *Request_Batch:
		m := k.Batch
		num, key, call.Method, call.Batch = m.Container, m.Key, nodecall.CallBatch, make([]nodecall.BatchOp, len(m.Ops))
		for i, op := range m.Ops {
			if op == nil {
				return 0, nil, true, errors.New("a batch with an empty operation")
			}
			call.Batch[i] = nodecall.BatchOp{Kind: op.Kind, ID: op.Id, Body: op.Body, IfMatch: op.IfMatch, Patch: patchOf(op.Patch)}
		}
	case *Request_Procedure:
		m := k.Procedure
		num, key, call.Method, call.ID, call.Args, call.Log = m.Container, m.Key, nodecall.CallProcedure, m.Id, m.Args, m.Log
		triggersOf(call, m.Triggers)
	case *Request_Feed:
		m := k.Feed
		num, call.Method = m.Container, nodecall.CallFeed
		call.Feed = &nodecall.FeedQuery{From: m.Lo, To: m.Hi, Start: nodecall.FeedStart{After: m.After, HasAfter: m.HasAfter, Now: m.Now},
			AllVersions: m.AllVersions, Max: int(min(max(m.Max, 0), math.MaxInt32))}
		if m.SinceNanos != 0 {
			call.Feed.Start.Since = time.Unix(0, m.SinceNanos)
		}
		call.Consistency, err = consistencyOf(m.Consistency)
	default:
		return 0, nil, false, nil
	}
	if err != nil {
		return 0, nil, true, err
	}
	call.Key, err = keyOf(key)
	return num, call, true, err
}

// typedCallAnswer is ans, the answer to call, as a typed answer of call's kind: one for item
// calls, and one each for batches, procedures and change feed pages.
func typedCallAnswer(call *nodecall.Call, ans nodecall.Answer) *Answer {
	var a nodecall.CallAnswer
	if ans.Call != nil {
		a = *ans.Call
	}
	err := typedFault(ans.Err)
	switch call.Method {
	case nodecall.CallBatch:
		b := &BatchAnswer{Failed: int32(a.Failed), Err: err, Moved: ans.Moved, Results: make([]*BatchResult, len(a.Batch))}
		for i, r := range a.Batch {
			b.Results[i] = &BatchResult{Err: typedFault(r.Err), Created: r.Created, Charge: r.Charge, Etag: r.ETag, Doc: r.Doc}
		}
		return &Answer{Kind: &Answer_Batch{Batch: b}}
	case nodecall.CallProcedure:
		p := &ProcedureAnswer{Err: err, Moved: ans.Moved}
		if r := a.Procedure; r != nil {
			p.Body, p.HasBody, p.Log, p.Charge, p.Lsn, p.Partition = r.Body, r.Body != nil, r.Log, r.Charge, r.LSN, r.PartitionID
		}
		return &Answer{Kind: &Answer_Procedure{Procedure: p}}
	case nodecall.CallFeed:
		f := &FeedAnswer{Err: err, Moved: ans.Moved}
		if pg := a.Feed; pg != nil {
			f.Through, f.Partition, f.Lsn, f.Charge = pg.Through, pg.Partition, pg.LSN, pg.Charge
			f.Changes = make([]*Change, len(pg.Changes))
			for i, ch := range pg.Changes {
				f.Changes[i] = &Change{Lsn: ch.LSN, Op: uint32(ch.Op), Ts: ch.TS, Id: ch.ID, Json: ch.JSON, HasJson: ch.JSON != nil,
					PrevLsn: ch.PrevLSN, Prev: ch.Prev, HasPrev: ch.Prev != nil, Key: typedKey(ch.Key), Expired: ch.Expired}
			}
		}
		return &Answer{Kind: &Answer_Feed{Feed: f}}
	}
	r := a.Item
	return &Answer{Kind: &Answer_Item{Item: &ItemAnswer{Err: err, Moved: ans.Moved,
		Item: &ItemResult{Doc: r.Doc, Etag: r.ETag, Lsn: r.LSN, ItemLsn: r.ItemLSN, Partition: r.PartitionID, Created: r.Created, Charge: r.Charge}}}}
}

// changeDelete is the last kind of change a page holds (1 create, 2 replace, 3 delete).
const changeDelete = 3

// callAnswerOf reads a typed answer to a call back; ok is false for an answer of another
// kind.
func callAnswerOf(m *Answer) (ans nodecall.Answer, ok bool, err error) {
	ans = nodecall.Answer{Index: -1}
	var a nodecall.CallAnswer
	switch k := m.Kind.(type) {
	case *Answer_Item:
		ans.Err, ans.Moved = faultOf(k.Item.Err), k.Item.Moved
		if r := k.Item.Item; r != nil {
			a.Item = nodecall.ItemResult{Doc: r.Doc, ETag: r.Etag, LSN: r.Lsn, ItemLSN: r.ItemLsn, PartitionID: r.Partition, Created: r.Created, Charge: r.Charge}
		}
	case *Answer_Batch:
		b := k.Batch
		ans.Err, ans.Moved, a.Failed = faultOf(b.Err), b.Moved, int(b.Failed)
		for _, r := range b.Results {
			if r == nil {
				return ans, true, errors.New("a batch's answer with an empty result")
			}
			a.Batch = append(a.Batch, nodecall.OpResult{Err: faultOf(r.Err), Created: r.Created, Charge: r.Charge, ETag: r.Etag, Doc: r.Doc})
		}
	case *Answer_Procedure:
		p := k.Procedure
		ans.Err, ans.Moved = faultOf(p.Err), p.Moved
		a.Procedure = &nodecall.ProcedureResult{Log: p.Log, Charge: p.Charge, LSN: p.Lsn, PartitionID: p.Partition}
		if p.HasBody {
			a.Procedure.Body = sent(p.Body)
		}
	case *Answer_Feed:
		f := k.Feed
		ans.Err, ans.Moved = faultOf(f.Err), f.Moved
		a.Feed = &nodecall.FeedPage{Through: f.Through, Partition: f.Partition, LSN: f.Lsn, Charge: f.Charge, Changes: make([]nodecall.FeedChange, len(f.Changes))}
		for i, ch := range f.Changes {
			if ch == nil || ch.Op > changeDelete {
				return ans, true, errors.New("a change feed page with a change of no known kind")
			}
			c := nodecall.FeedChange{LSN: ch.Lsn, Op: uint8(ch.Op), TS: ch.Ts, ID: ch.Id, PrevLSN: ch.PrevLsn, Expired: ch.Expired}
			if ch.HasJson {
				c.JSON = sent(ch.Json)
			}
			if ch.HasPrev {
				c.Prev = sent(ch.Prev)
			}
			if c.Key, err = keyOf(ch.Key); err != nil {
				return ans, true, err
			}
			a.Feed.Changes[i] = c
		}
	default:
		return ans, false, nil
	}
	if !ans.Moved {
		ans.Call = &a
	}
	return ans, true, nil
}

// typedKey is a partition key as a typed message's; nil for none.
func typedKey(k epk.Key) *PartitionKey {
	if k == nil {
		return nil
	}
	out := &PartitionKey{Values: make([]*KeyValue, len(k))}
	for i, v := range k {
		out.Values[i] = &KeyValue{Kind: uint32(v.Kind), Num: v.Num, Str: v.Str}
	}
	return out
}

// keyOf reads a typed partition key back.
func keyOf(m *PartitionKey) (epk.Key, error) {
	if m == nil {
		return nil, nil
	}
	k := make(epk.Key, len(m.Values))
	for i, v := range m.Values {
		if v == nil || v.Kind > math.MaxUint8 || !epk.Kind(v.Kind).Valid() {
			return nil, errors.New("a partition key with a component of no known kind")
		}
		k[i] = epk.Value{Kind: epk.Kind(v.Kind), Num: v.Num, Str: v.Str}
	}
	return k, nil
}

func typedTriggers(call *nodecall.Call) *Triggers {
	if call.PreTriggers == nil && call.PostTriggers == nil && call.Headers == nil {
		return nil
	}
	return &Triggers{Pre: call.PreTriggers, Post: call.PostTriggers, Headers: call.Headers}
}

func triggersOf(call *nodecall.Call, m *Triggers) {
	if m != nil {
		call.PreTriggers, call.PostTriggers, call.Headers = m.Pre, m.Post, m.Headers
	}
}

func typedPatch(p *nodecall.Patch) *Patch {
	if p == nil {
		return nil
	}
	m := &Patch{Condition: p.Condition, Ops: make([]*PatchOp, len(p.Ops))}
	for i, op := range p.Ops {
		m.Ops[i] = &PatchOp{Op: op.Op, Path: op.Path, Value: op.Value, From: op.From}
	}
	return m
}

func patchOf(m *Patch) *nodecall.Patch {
	if m == nil {
		return nil
	}
	p := &nodecall.Patch{Condition: m.Condition, Ops: make([]document.PatchOp, len(m.Ops))}
	for i, op := range m.Ops { // an empty one has no op, which the patch refuses as any unknown one
		p.Ops[i] = document.PatchOp{Op: op.GetOp(), Path: op.GetPath(), From: op.GetFrom()}
		if v := op.GetValue(); len(v) > 0 {
			p.Ops[i].Value = json.RawMessage(v)
		}
	}
	return p
}

// eventual is the weakest consistency level (1 Strong ... 5 Eventual).
const eventual = 5

// typedConsistency is a read's consistency as a typed message's; nil for the default.
func typedConsistency(rc nodecall.Consistency) *Consistency {
	if rc.Level == 0 && rc.Session == nil {
		return nil
	}
	return &Consistency{Level: uint32(rc.Level), Session: rc.Session}
}

// consistencyOf reads a typed consistency back. A level this release does not know is
// refused: read at the node's default instead, it could be weaker than the client asked.
func consistencyOf(m *Consistency) (nodecall.Consistency, error) {
	if m == nil {
		return nodecall.Consistency{}, nil
	}
	if m.Level > eventual {
		return nodecall.Consistency{}, fault.New(fault.BadRequest, "A read at a consistency level this release does not know")
	}
	return nodecall.Consistency{Level: uint8(m.Level), Session: m.Session}, nil
}

// sent is s, never nil: what was sent, even empty, is the sender's (a bound, or entries),
// where nil means none was sent.
func sent[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func typedFault(f *fault.Error) *Fault {
	if f == nil {
		return nil
	}
	return &Fault{Kind: uint32(f.Kind), Message: f.Message, RetryAfterNanos: int64(f.RetryAfter), Reason: uint32(f.Reason),
		Line: int32(f.Pos.Line), Column: int32(f.Pos.Column)}
}

// faultOf reads a typed fault back; a kind beyond any release's is an Internal one, with
// its message.
func faultOf(f *Fault) *fault.Error {
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
