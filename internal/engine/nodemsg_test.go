package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/nodemsg"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/tracing"
)

// Requests read back from their typed messages as they were sent: a write's entries computed
// by the sender (even none) stay the sender's, and entries not sent stay for the leader to
// compute.
func TestTypedRequestsRoundTrip(t *testing.T) {
	for _, want := range []forwarded{
		{Container: 7, EPK: []byte{0x05, 0xc1}, Admit: true, Trace: tracing.Carrier{"x-ms-activity-id": "a1"},
			Ops: []forwardedOp{
				{Kind: partition.Unchanged, LSN: 41},
				{Kind: partition.Create, ID: "i1", Body: []byte(`{"id":"i1","pk":"k"}`), Terms: [][]byte{[]byte("t1"), []byte("t2")}, Unique: [][]byte{}},
				{Kind: partition.Replace, ID: "i2", Body: []byte(`{"id":"i2"}`), IfMatch: `"00000001"`},
				{Kind: partition.Delete, ID: "i3"},
			}},
		{Container: 3, Split: &forwardedSplit{Parent: 2, At: []byte{0x1f, 0xff}}},
		{Shares: &shareAsk{From: 0x91df, Groups: []groupAsk{{Group: 1<<32 | 4, From: 100, To: 101, Promise: 12.5, Want: 40, Hungry: true}, {Group: 9}}}},
		{Container: 5, Read: &remoteRead{Partition: 3, Get: &itemGet{EPK: "05C1", ID: "a"}, Consistency: ReadConsistency{Level: Session, Session: map[uint32]uint64{3: 17, AnyRange: 2}}}},
		{Container: 5, Read: &remoteRead{Partition: 1, Ranges: [][2]string{{"", "3F"}, {"40", "FF"}}, Start: 9,
			Index: &query.IndexRange{Path: "/a", Lo: []byte{}, Hi: []byte{0x10}}, Consistency: ReadConsistency{Level: Strong}}},
		{Container: 5, Read: &remoteRead{Ranges: [][2]string{{"", "FF"}}, Index: &query.IndexRange{Path: "/t", Values: [][]byte{[]byte("x"), []byte("y")}}}},
		{Container: 5, Read: &remoteRead{Rows: &rowsRead{LoEPK: "01", LoID: "a", HiEPK: "02", Reverse: true}}},
		{Container: 5, Read: &remoteRead{Ranges: [][2]string{{"", "FF"}}, Count: true, All: true}},
		{Figures: true},
	} {
		b, err := typedRequest(&want)
		if err != nil {
			t.Fatal(err)
		}
		if !nodemsg.Typed(b) {
			t.Fatalf("%+v is sent as JSON", want)
		}
		got, err := decodeRequest(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("read back as\n%+v\nwant\n%+v", got, want)
		}
	}
}

// Delegated calls, one message for each kind, read back as they were sent; and in the JSON of
// the previous release, which names their kinds as it did.
func TestTypedCallsRoundTrip(t *testing.T) {
	k := epk.Key{epk.String("k"), epk.Number(math.Copysign(0, -1)), epk.Undefined()}
	patch := &wirePatch{Ops: []document.PatchOp{{Op: "incr", Path: "/n", Value: []byte("1")}, {Op: "move", Path: "/b", From: "/a"}}, Condition: "FROM c WHERE c.n > 1"}
	since := time.Unix(0, 1700000000123456789)
	for _, call := range []*delegatedCall{
		{Method: callRead, Key: k, ID: "a", Consistency: ReadConsistency{Level: Session, Session: map[uint32]uint64{2: 9}}},
		{Method: callRead, Key: epk.Key{}, ID: "a"},
		{Method: callWrite, Key: k, ID: "a", Kind: OpUpsert, Body: []byte(`{"id":"a"}`), IfMatch: `"0001"`, IndexingDirective: "Exclude",
			PreTriggers: []string{"t1"}, PostTriggers: []string{"t2", "t3"}, Headers: map[string]string{"x-ms-a": "b"}},
		{Method: callDelete, Key: k, ID: "a", IfMatch: `"0002"`, PostTriggers: []string{"t"}},
		{Method: callPatch, Key: k, ID: "a", Patch: patch},
		{Method: callBatch, Key: k, Batch: []wireBatchOp{{Kind: OpCreate, ID: "a", Body: []byte(`{"id":"a"}`)}, {Kind: OpRead, ID: "b"},
			{Kind: OpPatch, ID: "c", IfMatch: `"3"`, Patch: patch}}},
		{Method: callProcedure, Key: k, ID: "bump", Args: []byte(`["a"]`), Log: true, Headers: map[string]string{"h": "v"}},
		{Method: callFeed, Feed: &wireFeedQuery{From: "", To: "3F", Start: FeedStart{After: 41, HasAfter: true}, AllVersions: true, Max: 100},
			Consistency: ReadConsistency{Level: Strong}},
		{Method: callFeed, Feed: &wireFeedQuery{From: "3F", To: "FF", Start: FeedStart{Since: since}}},
	} {
		want := forwarded{Container: 9, Call: call, Trace: tracing.Carrier{"traceparent": "00-1"}}
		b, err := typedRequest(&want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeRequest(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%v read back as\n%+v\nwant\n%+v", call.Method, got.Call, want.Call)
		}
		js, err := json.Marshal(&want)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(js), `"method":"`+callMethods[call.Method]+`"`) {
			t.Fatalf("%v as JSON: %s", call.Method, js)
		}
		var back forwarded
		if err := json.Unmarshal(js, &back); err != nil || back.Call.Method != call.Method {
			t.Fatalf("%v read back from JSON as %v, %v", call.Method, back.Call, err)
		}
	}
	var unknown delegatedCall
	if err := json.Unmarshal([]byte(`{"method":"merge"}`), &unknown); err != nil || unknown.Method != callUnknown {
		t.Fatalf(`a call of method "merge" reads as %v, %v`, unknown.Method, err)
	}
}

// Answers read back as they were given, in the kind of their request (a delegated call's in
// its call's kind).
func TestTypedAnswersRoundTrip(t *testing.T) {
	write := forwarded{Ops: []forwardedOp{{Kind: partition.Create}}}
	call := func(k callKind) forwarded { return forwarded{Call: &delegatedCall{Method: k}} }
	item := ItemResult{Doc: []byte(`{"id":"a"}`), ETag: "0003", LSN: 12, ItemLSN: 11, PartitionID: 2, Created: true, Charge: 6.3}
	for _, c := range []struct {
		req  forwarded
		want forwardedAnswer
	}{
		{write, forwardedAnswer{Index: -1, Charge: 6.2, Charges: []float64{1, 5.2}, Results: []forwardedResult{{JSON: []byte(`{"id":"a"}`), LSN: 9, Created: true, IndexTerms: 4}, {LSN: 10, PrevBytes: 120}}}},
		{write, forwardedAnswer{Index: 1, Retry: true, Charge: 1, Err: &fault.Error{Kind: fault.Throttled, Message: "slow down", RetryAfter: 250e6, Reason: fault.RangeSplit, Pos: fault.Pos{Line: 1, Column: 2}}}},
		{forwarded{Split: &forwardedSplit{}}, forwardedAnswer{Index: -1, Moved: true}},
		{forwarded{Split: &forwardedSplit{}}, forwardedAnswer{Index: -1, Retry: true, Err: &fault.Error{Kind: fault.Unavailable, Message: "no lease"}}},
		{forwarded{Shares: &shareAsk{}}, forwardedAnswer{Index: -1, Shares: &shareAnswer{Grants: []groupGrant{{Group: 4, Second: 1700000000, PerSecond: 133.3}}}}},
		{forwarded{Read: &remoteRead{}}, forwardedAnswer{Index: -1, Read: &readAnswer{More: true, LSN: 44, Docs: []remoteDoc{{Seq: 1, JSON: []byte(`{"id":"a"}`)}, {Seq: 2, JSON: []byte(`{}`), EPK: "0A", ID: "b"}}}}},
		{forwarded{Read: &remoteRead{}}, forwardedAnswer{Index: -1, Read: &readAnswer{Count: 12, Counted: true, LSN: 3, Docs: []remoteDoc{}}}},
		{forwarded{Read: &remoteRead{}}, forwardedAnswer{Index: -1, Moved: true}},
		{forwarded{Figures: true}, forwardedAnswer{Index: -1, Figures: []replicaFigure{{Group: 7, Bytes: 1 << 20, RU: 30},
			{Group: 1<<32 | 2, Bytes: 5, RU: 1.5, Full: true, Leading: true, Items: 12, LSN: 99, Total: 4000, Throttled: 3,
				Seconds: []ru.SecondSpent{{Second: 1700000000, RU: 2}}, Trend: []trendFigure{{Start: 1700000000, PeakRU: 9, Normalized: 0.5}},
				Hottest: []logicalFigure{{EPK: "05C1", RU: 1}}}}}},
		{forwarded{Read: &remoteRead{}}, forwardedAnswer{Index: -1, Retry: true, Err: &fault.Error{Kind: fault.Unavailable, Message: "behind"}}},
		{call(callRead), forwardedAnswer{Index: -1, Call: &callAnswer{Item: item}}},
		{call(callDelete), forwardedAnswer{Index: -1, Call: &callAnswer{Item: ItemResult{LSN: 3, Charge: 1}}, Err: &fault.Error{Kind: fault.NotFound, Message: "gone"}}},
		{call(callWrite), forwardedAnswer{Index: -1, Moved: true}},
		{call(callBatch), forwardedAnswer{Index: -1, Call: &callAnswer{Failed: 1, Batch: []wireOpResult{{Created: true, Charge: 5, ETag: "1", Doc: []byte(`{}`)},
			{Err: &fault.Error{Kind: fault.Conflict, Message: "exists"}, Charge: 1}}}}},
		{call(callProcedure), forwardedAnswer{Index: -1, Call: &callAnswer{Procedure: &ProcedureResult{Body: []byte{}, Log: "hi", Charge: 9, LSN: 4, PartitionID: 1}}}},
		{call(callProcedure), forwardedAnswer{Index: -1, Call: &callAnswer{Procedure: &ProcedureResult{}}, Err: &fault.Error{Kind: fault.BadRequest, Message: "threw"}}},
		{call(callFeed), forwardedAnswer{Index: -1, Call: &callAnswer{Feed: &FeedPage{Through: 40, Partition: 3, LSN: 41, Charge: 2, Changes: []FeedChange{
			{LSN: 39, Op: ChangeCreate, TS: 1700000000, ID: "a", JSON: []byte(`{"id":"a"}`)},
			{LSN: 40, Op: ChangeDelete, TS: 1700000001, ID: "a", PrevLSN: 39, Prev: []byte(`{"id":"a"}`), Key: epk.Key{epk.String("k")}, Expired: true},
		}}}}},
		{call(callFeed), forwardedAnswer{Index: -1, Call: &callAnswer{Feed: &FeedPage{Partition: 3, Changes: []FeedChange{}}}}},
	} {
		b, err := nodemsg.Encode(typedAnswer(c.req, c.want))
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeAnswer(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Fatalf("read back as\n%+v\nwant\n%+v", got, c.want)
		}
	}
}

// Whatever bytes arrive as a typed request, reading them fails cleanly or gives a request that
// reads back the same once sent again.
func FuzzDecodeRequest(f *testing.F) {
	seed, _ := typedRequest(&forwarded{Container: 1, EPK: []byte{1}, Ops: []forwardedOp{{Kind: partition.Create, ID: "a", Body: []byte(`{}`), Terms: [][]byte{}}}})
	f.Add(seed)
	f.Add([]byte{nodemsg.Marker})
	f.Add([]byte{nodemsg.Marker, 0x12, 0x02, 0x1a, 0x00})
	for _, req := range []forwarded{{Split: &forwardedSplit{Parent: 1, At: []byte{2}}}, {Shares: &shareAsk{From: 1, Groups: []groupAsk{{Group: 2, Want: 3}}}},
		{Read: &remoteRead{Ranges: [][2]string{{"", "FF"}}, Index: &query.IndexRange{Path: "/a", Lo: []byte{1}}}},
		{Call: &delegatedCall{Method: callWrite, Key: epk.Key{epk.String("k")}, ID: "a", Kind: OpCreate, Body: []byte(`{}`), Headers: map[string]string{"a": "b"}}},
		{Call: &delegatedCall{Method: callBatch, Key: epk.Key{}, Batch: []wireBatchOp{{Kind: OpPatch, Patch: &wirePatch{Ops: []document.PatchOp{{Op: "remove"}}}}}}},
		{Call: &delegatedCall{Method: callFeed, Feed: &wireFeedQuery{To: "FF", Start: FeedStart{Now: true}}}}} {
		b, _ := typedRequest(&req)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := decodeRequest(b)
		if err != nil {
			return
		}
		again, err := typedRequest(&req)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeRequest(again)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normalized(back), normalized(req)) {
			t.Fatalf("%+v read back as %+v", req, back)
		}
	})
}

// normalized is req with empty collections as nil where the encoding does not tell them
// apart (the entries' own bytes, the trace).
func normalized(req forwarded) forwarded {
	if len(req.Trace) == 0 {
		req.Trace = nil
	}
	if len(req.EPK) == 0 {
		req.EPK = nil
	}
	for i := range req.Ops {
		for _, es := range [][][]byte{req.Ops[i].Terms, req.Ops[i].Unique} {
			for j := range es {
				if len(es[j]) == 0 {
					es[j] = nil
				}
			}
		}
	}
	return req
}

// Writes through a node that does not lead their partition travel as JSON while the cluster's
// version is the previous release's (its nodes read nothing else), and as typed messages once
// it is this release's; both are applied alike.
func TestForwardedWritesByClusterVersion(t *testing.T) {
	for _, v := range []clusterversion.Version{clusterversion.V2, clusterversion.NodeMessages} {
		t.Run(v.String(), func(t *testing.T) {
			tc := newTestCluster(t, 3)
			tc.active = v
			for id := 1; id <= 3; id++ {
				tc.start(id)
			}
			tc.createContainer(nil)
			var cs []*Container
			for id := 1; id <= 3; id++ {
				c, err := tc.node(id).Container("db", "c")
				if err != nil {
					t.Fatal(err)
				}
				cs = append(cs, c)
			}
			for i := range 30 {
				eventually(t, fmt.Sprint("create ", i), func() error {
					_, err := cs[i%3].CreateItem(item(fmt.Sprint(i), fmt.Sprint("k", i%5), ""), ItemOptions{})
					if errors.Is(err, fault.Conflict) {
						return nil
					}
					return err
				})
			}
			for i := range 30 {
				if _, err := cs[(i+1)%3].ReadItem(key(fmt.Sprint("k", i%5)), fmt.Sprint(i)); err != nil {
					t.Fatalf("item %d: %v", i, err)
				}
			}
			typed, untyped := tc.typed.Load(), tc.untyped.Load()
			switch {
			case v < clusterversion.NodeMessages && (typed > 0 || untyped == 0):
				t.Fatalf("at %s: %d typed and %d JSON requests, want JSON only", v, typed, untyped)
			case v >= clusterversion.NodeMessages && (typed == 0 || untyped > 0):
				t.Fatalf("at %s: %d typed and %d JSON requests, want typed only", v, typed, untyped)
			}
			t.Logf("at %s: %d typed and %d JSON requests", v, typed, untyped)
		})
	}
}

// A remote read at a consistency level no release knows is refused, not read at the node's
// default, which could be weaker than the client asked for.
func TestTypedReadOfUnknownLevelRefused(t *testing.T) {
	b, err := nodemsg.Encode(&nodemsg.Request{Kind: &nodemsg.Request_Read{Read: &nodemsg.Read{Container: 1,
		Get: &nodemsg.ItemGet{Epk: "00", Id: "a"}, Consistency: &nodemsg.Consistency{Level: 300}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeRequest(b); fault.KindOf(err) != fault.BadRequest {
		t.Fatalf("read at level 300: %v, want a BadRequest", err)
	}
}

// Every kind of delegated call, made through a node that holds no replica of its partition,
// does what it does locally, whether it travels as JSON (a cluster of the previous release's
// version) or as a typed message.
func TestDelegatedCallsByClusterVersion(t *testing.T) {
	for _, v := range []clusterversion.Version{clusterversion.V2, clusterversion.NodeMessages} {
		t.Run(v.String(), func(t *testing.T) {
			tc := newTestCluster(t, 4)
			tc.active, tc.replicas = v, 3
			for id := 1; id <= 4; id++ {
				tc.start(id)
			}
			tc.createContainer(nil)
			c1 := tc.containerOn(1)
			for _, s := range []Script{
				{Kind: ProcedureScript, ID: "bump", Body: bumpProcedure},
				{Kind: TriggerScript, ID: "stamp", TriggerType: "Pre", TriggerOperation: "All", Body: `function () {
					var r = getContext().getRequest(); if (r.getOperationType() != "Delete") { var d = r.getBody(); d.stamped = 1; r.setBody(d); } }`},
			} {
				if _, err := c1.CreateScript(s); err != nil {
					t.Fatal(err)
				}
			}
			// A node and a partition key whose partition it holds no replica of.
			var c *Container
			var pk string
			eventually(t, "a node without a replica of some partition", func() error {
				for id := 1; id <= 4; id++ {
					cn := tc.containerOn(id)
					for k := range 20 {
						e, err := cn.EPK(key(fmt.Sprint("k", k)))
						if err != nil {
							return err
						}
						if _, ok := cn.remoteOf(e); ok {
							c, pk = cn, fmt.Sprint("k", k)
							return nil
						}
					}
				}
				return errors.New("every node holds every partition")
			})
			tc.typed.Store(0)
			tc.untyped.Store(0)
			incr := Patch{Ops: []document.PatchOp{{Op: "incr", Path: "/n", Value: []byte("1")}}}
			steps := []struct {
				name string
				do   func() error
			}{
				{"create with a trigger", func() error {
					r, err := c.CreateItem(item("a", pk, `,"n":0`), ItemOptions{PreTriggers: []string{"stamp"}})
					if err == nil && (!r.Created || !strings.Contains(string(r.Doc), `"stamped":1`)) {
						err = fmt.Errorf("created %v: %s", r.Created, r.Doc)
					}
					return err
				}},
				{"read", func() error {
					_, err := c.ReadItem(key(pk), "a")
					return err
				}},
				{"patch", func() error {
					_, err := c.PatchItem(key(pk), "a", incr, ItemOptions{})
					return err
				}},
				{"procedure", func() error {
					r, err := c.ExecuteProcedure("bump", []byte(`["a"]`), ProcedureOptions{PartitionKey: key(pk)})
					if err == nil && r.LSN == 0 {
						err = errors.New("no LSN")
					}
					return err
				}},
				{"batch", func() error {
					res, failed, err := c.ExecuteBatch(context.Background(), key(pk), []BatchOp{{Kind: OpPatch, ID: "a", Patch: incr}, {Kind: OpRead, ID: "a"}})
					if err == nil && failed >= 0 {
						err = res[failed].Err
					}
					if err == nil && !strings.Contains(string(res[1].Doc), `"n":3`) {
						err = fmt.Errorf("the batch read %s, want n 3", res[1].Doc)
					}
					return err
				}},
				{"change feed", func() error {
					e, _ := c.EPK(key(pk))
					page, err := c.ChangeFeed(FeedQuery{Range: epk.Range{Min: e, Max: e + "\x00"}})
					if err == nil && (len(page.Changes) != 1 || !strings.Contains(string(page.Changes[0].JSON), `"n":3`)) {
						err = fmt.Errorf("the feed has %d changes", len(page.Changes))
					}
					return err
				}},
				{"delete with a trigger", func() error {
					_, err := c.DeleteItem(key(pk), "a", ItemOptions{PreTriggers: []string{"stamp"}})
					return err
				}},
			}
			for _, s := range steps {
				eventually(t, s.name, s.do)
			}
			if _, err := c.ReadItem(key(pk), "a"); !errors.Is(err, fault.NotFound) {
				t.Fatalf("read after the delete: %v", err)
			}
			typed, untyped := tc.typed.Load(), tc.untyped.Load()
			if v < clusterversion.NodeMessages && typed > 0 || v >= clusterversion.NodeMessages && untyped > 0 {
				t.Fatalf("at %s: %d typed and %d JSON requests", v, typed, untyped)
			}
			t.Logf("at %s: %d typed and %d JSON requests", v, typed, untyped)
		})
	}
}
