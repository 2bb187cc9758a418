package engine

import (
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/nodemsg"
)

// Delegated calls (remote.go) as typed messages: one message for each kind of call, and one
// answer for item calls, batches, procedures and change feed pages. decodeRequest reads them
// back into the delegatedCall that serveCall runs, which the JSON of a cluster before
// clusterversion.NodeMessages becomes as well.

// typedCall sets m's kind to call, on container num.
func typedCall(m *nodemsg.Request, num uint32, call *delegatedCall) error {
	key := typedKey(call.Key)
	switch call.Method {
	case callRead:
		m.Kind = &nodemsg.Request_ItemRead{ItemRead: &nodemsg.ItemRead{Container: num, Key: key, Id: call.ID,
			Consistency: typedConsistency(call.Consistency)}}
	case callWrite:
		m.Kind = &nodemsg.Request_ItemWrite{ItemWrite: &nodemsg.ItemWrite{Container: num, Key: key, Id: call.ID, Kind: string(call.Kind),
			Body: call.Body, IfMatch: call.IfMatch, IndexingDirective: call.IndexingDirective, Triggers: typedTriggers(call)}}
	case callDelete:
		m.Kind = &nodemsg.Request_ItemDelete{ItemDelete: &nodemsg.ItemDelete{Container: num, Key: key, Id: call.ID, IfMatch: call.IfMatch,
			Triggers: typedTriggers(call)}}
	case callPatch:
		m.Kind = &nodemsg.Request_ItemPatch{ItemPatch: &nodemsg.ItemPatch{Container: num, Key: key, Id: call.ID, IfMatch: call.IfMatch,
			Patch: typedPatch(call.Patch)}}
	case callBatch:
		b := &nodemsg.Batch{Container: num, Key: key, Ops: make([]*nodemsg.BatchOp, len(call.Batch))}
		for i, op := range call.Batch {
			b.Ops[i] = &nodemsg.BatchOp{Kind: string(op.Kind), Id: op.ID, Body: op.Body, IfMatch: op.IfMatch, Patch: typedPatch(op.Patch)}
		}
		m.Kind = &nodemsg.Request_Batch{Batch: b}
	case callProcedure:
		m.Kind = &nodemsg.Request_Procedure{Procedure: &nodemsg.Procedure{Container: num, Key: key, Id: call.ID, Args: call.Args,
			Log: call.Log, Triggers: typedTriggers(call)}}
	case callFeed:
		f := call.Feed
		if f == nil {
			return errors.New("a delegated change feed read without its query")
		}
		fr := &nodemsg.FeedRead{Container: num, Lo: f.From, Hi: f.To, After: f.Start.After, HasAfter: f.Start.HasAfter,
			Now: f.Start.Now, AllVersions: f.AllVersions, Max: int64(f.Max), Consistency: typedConsistency(call.Consistency)}
		if !f.Start.Since.IsZero() {
			fr.SinceNanos = f.Start.Since.UnixNano()
		}
		m.Kind = &nodemsg.Request_Feed{Feed: fr}
	default:
		return errors.New("a delegated call of no kind")
	}
	return nil
}

// callOf reads a typed call back, with its container; ok is false for a request of another
// kind.
func callOf(r *nodemsg.Request) (num uint32, call *delegatedCall, ok bool, err error) {
	call = &delegatedCall{}
	var key *nodemsg.PartitionKey
	switch k := r.Kind.(type) {
	case *nodemsg.Request_ItemRead:
		m := k.ItemRead
		num, key, call.Method, call.ID = m.Container, m.Key, callRead, m.Id
		call.Consistency, err = consistencyOf(m.Consistency)
	case *nodemsg.Request_ItemWrite:
		m := k.ItemWrite
		num, key, call.Method, call.ID, call.Kind = m.Container, m.Key, callWrite, m.Id, OpKind(m.Kind)
		call.Body, call.IfMatch, call.IndexingDirective = m.Body, m.IfMatch, m.IndexingDirective
		triggersOf(call, m.Triggers)
	case *nodemsg.Request_ItemDelete:
		m := k.ItemDelete
		num, key, call.Method, call.ID, call.IfMatch = m.Container, m.Key, callDelete, m.Id, m.IfMatch
		triggersOf(call, m.Triggers)
	case *nodemsg.Request_ItemPatch:
		m := k.ItemPatch
		num, key, call.Method, call.ID, call.IfMatch, call.Patch = m.Container, m.Key, callPatch, m.Id, m.IfMatch, patchOf(m.Patch)
	case *nodemsg.Request_Batch:
		m := k.Batch
		num, key, call.Method, call.Batch = m.Container, m.Key, callBatch, make([]wireBatchOp, len(m.Ops))
		for i, op := range m.Ops {
			if op == nil {
				return 0, nil, true, errors.New("a batch with an empty operation")
			}
			call.Batch[i] = wireBatchOp{Kind: OpKind(op.Kind), ID: op.Id, Body: op.Body, IfMatch: op.IfMatch, Patch: patchOf(op.Patch)}
		}
	case *nodemsg.Request_Procedure:
		m := k.Procedure
		num, key, call.Method, call.ID, call.Args, call.Log = m.Container, m.Key, callProcedure, m.Id, m.Args, m.Log
		triggersOf(call, m.Triggers)
	case *nodemsg.Request_Feed:
		m := k.Feed
		num, call.Method = m.Container, callFeed
		call.Feed = &wireFeedQuery{From: m.Lo, To: m.Hi, Start: FeedStart{After: m.After, HasAfter: m.HasAfter, Now: m.Now},
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

// typedCallAnswer is ans, the answer to call, as a typed answer of call's kind.
func typedCallAnswer(call *delegatedCall, ans forwardedAnswer) *nodemsg.Answer {
	var a callAnswer
	if ans.Call != nil {
		a = *ans.Call
	}
	err := typedFault(ans.Err)
	switch call.Method {
	case callBatch:
		b := &nodemsg.BatchAnswer{Failed: int32(a.Failed), Err: err, Moved: ans.Moved, Results: make([]*nodemsg.BatchResult, len(a.Batch))}
		for i, r := range a.Batch {
			b.Results[i] = &nodemsg.BatchResult{Err: typedFault(r.Err), Created: r.Created, Charge: r.Charge, Etag: r.ETag, Doc: r.Doc}
		}
		return &nodemsg.Answer{Kind: &nodemsg.Answer_Batch{Batch: b}}
	case callProcedure:
		p := &nodemsg.ProcedureAnswer{Err: err, Moved: ans.Moved}
		if r := a.Procedure; r != nil {
			p.Body, p.HasBody, p.Log, p.Charge, p.Lsn, p.Partition = r.Body, r.Body != nil, r.Log, r.Charge, r.LSN, r.PartitionID
		}
		return &nodemsg.Answer{Kind: &nodemsg.Answer_Procedure{Procedure: p}}
	case callFeed:
		f := &nodemsg.FeedAnswer{Err: err, Moved: ans.Moved}
		if pg := a.Feed; pg != nil {
			f.Through, f.Partition, f.Lsn, f.Charge = pg.Through, pg.Partition, pg.LSN, pg.Charge
			f.Changes = make([]*nodemsg.Change, len(pg.Changes))
			for i, ch := range pg.Changes {
				f.Changes[i] = &nodemsg.Change{Lsn: ch.LSN, Op: uint32(ch.Op), Ts: ch.TS, Id: ch.ID, Json: ch.JSON, HasJson: ch.JSON != nil,
					PrevLsn: ch.PrevLSN, Prev: ch.Prev, HasPrev: ch.Prev != nil, Key: typedKey(ch.Key), Expired: ch.Expired}
			}
		}
		return &nodemsg.Answer{Kind: &nodemsg.Answer_Feed{Feed: f}}
	}
	r := a.Item
	return &nodemsg.Answer{Kind: &nodemsg.Answer_Item{Item: &nodemsg.ItemAnswer{Err: err, Moved: ans.Moved,
		Item: &nodemsg.ItemResult{Doc: r.Doc, Etag: r.ETag, Lsn: r.LSN, ItemLsn: r.ItemLSN, Partition: r.PartitionID, Created: r.Created, Charge: r.Charge}}}}
}

// callAnswerOf reads a typed answer to a delegated call back; ok is false for an answer of
// another kind.
func callAnswerOf(m *nodemsg.Answer) (ans forwardedAnswer, ok bool, err error) {
	ans = forwardedAnswer{Index: -1}
	var a callAnswer
	switch k := m.Kind.(type) {
	case *nodemsg.Answer_Item:
		ans.Err, ans.Moved = faultOf(k.Item.Err), k.Item.Moved
		if r := k.Item.Item; r != nil {
			a.Item = ItemResult{Doc: r.Doc, ETag: r.Etag, LSN: r.Lsn, ItemLSN: r.ItemLsn, PartitionID: r.Partition, Created: r.Created, Charge: r.Charge}
		}
	case *nodemsg.Answer_Batch:
		b := k.Batch
		ans.Err, ans.Moved, a.Failed = faultOf(b.Err), b.Moved, int(b.Failed)
		for _, r := range b.Results {
			if r == nil {
				return ans, true, errors.New("a batch's answer with an empty result")
			}
			a.Batch = append(a.Batch, wireOpResult{Err: faultOf(r.Err), Created: r.Created, Charge: r.Charge, ETag: r.Etag, Doc: r.Doc})
		}
	case *nodemsg.Answer_Procedure:
		p := k.Procedure
		ans.Err, ans.Moved = faultOf(p.Err), p.Moved
		a.Procedure = &ProcedureResult{Log: p.Log, Charge: p.Charge, LSN: p.Lsn, PartitionID: p.Partition}
		if p.HasBody {
			a.Procedure.Body = sent(p.Body)
		}
	case *nodemsg.Answer_Feed:
		f := k.Feed
		ans.Err, ans.Moved = faultOf(f.Err), f.Moved
		a.Feed = &FeedPage{Through: f.Through, Partition: f.Partition, LSN: f.Lsn, Charge: f.Charge, Changes: make([]FeedChange, len(f.Changes))}
		for i, ch := range f.Changes {
			if ch == nil || ch.Op > uint32(ChangeDelete) {
				return ans, true, errors.New("a change feed page with a change of no known kind")
			}
			c := FeedChange{LSN: ch.Lsn, Op: ChangeOp(ch.Op), TS: ch.Ts, ID: ch.Id, PrevLSN: ch.PrevLsn, Expired: ch.Expired}
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
func typedKey(k epk.Key) *nodemsg.PartitionKey {
	if k == nil {
		return nil
	}
	out := &nodemsg.PartitionKey{Values: make([]*nodemsg.KeyValue, len(k))}
	for i, v := range k {
		out.Values[i] = &nodemsg.KeyValue{Kind: uint32(v.Kind), Num: v.Num, Str: v.Str}
	}
	return out
}

// keyOf reads a typed partition key back.
func keyOf(m *nodemsg.PartitionKey) (epk.Key, error) {
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

func typedTriggers(call *delegatedCall) *nodemsg.Triggers {
	if call.PreTriggers == nil && call.PostTriggers == nil && call.Headers == nil {
		return nil
	}
	return &nodemsg.Triggers{Pre: call.PreTriggers, Post: call.PostTriggers, Headers: call.Headers}
}

func triggersOf(call *delegatedCall, m *nodemsg.Triggers) {
	if m != nil {
		call.PreTriggers, call.PostTriggers, call.Headers = m.Pre, m.Post, m.Headers
	}
}

func typedPatch(p *wirePatch) *nodemsg.Patch {
	if p == nil {
		return nil
	}
	m := &nodemsg.Patch{Condition: p.Condition, Ops: make([]*nodemsg.PatchOp, len(p.Ops))}
	for i, op := range p.Ops {
		m.Ops[i] = &nodemsg.PatchOp{Op: op.Op, Path: op.Path, Value: op.Value, From: op.From}
	}
	return m
}

func patchOf(m *nodemsg.Patch) *wirePatch {
	if m == nil {
		return nil
	}
	p := &wirePatch{Condition: m.Condition, Ops: make([]document.PatchOp, len(m.Ops))}
	for i, op := range m.Ops { // an empty one has no op, which the patch refuses as any unknown one
		p.Ops[i] = document.PatchOp{Op: op.GetOp(), Path: op.GetPath(), From: op.GetFrom()}
		if v := op.GetValue(); len(v) > 0 {
			p.Ops[i].Value = json.RawMessage(v)
		}
	}
	return p
}

// typedConsistency is a read's consistency as a typed message's; nil for the default.
func typedConsistency(rc ReadConsistency) *nodemsg.Consistency {
	if rc.Level == 0 && rc.Session == nil {
		return nil
	}
	return &nodemsg.Consistency{Level: uint32(rc.Level), Session: rc.Session}
}

// consistencyOf reads a typed consistency back. A level this release does not know is
// refused: read at the node's default instead, it could be weaker than the client asked.
func consistencyOf(m *nodemsg.Consistency) (ReadConsistency, error) {
	if m == nil {
		return ReadConsistency{}, nil
	}
	if m.Level > uint32(Eventual) {
		return ReadConsistency{}, fault.New(fault.BadRequest, "A read at a consistency level this release does not know")
	}
	return ReadConsistency{Level: Level(m.Level), Session: m.Session}, nil
}
