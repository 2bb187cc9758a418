package nodemsg

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/ru"
)

// Operation kinds as package partition numbers them (nodecall.Op.Kind).
const (
	opCreate    = 1
	opReplace   = 3
	opDelete    = 4
	opUnchanged = 8
)

// roundTrip sends req as a typed message and reads it back.
func roundTrip(t *testing.T, req *nodecall.Request) nodecall.Request {
	t.Helper()
	b, err := Marshal(req, clusterversion.NodeMessages)
	if err != nil {
		t.Fatal(err)
	}
	if !Typed(b) {
		t.Fatalf("%+v is sent as JSON", req)
	}
	got, err := requestOf(b)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Requests read back from their typed messages as they were sent: a write's entries computed
// by the sender (even none) stay the sender's, and entries not sent stay for the leader to
// compute.
func TestTypedRequestsRoundTrip(t *testing.T) {
	for _, want := range []nodecall.Request{
		{Container: 7, EPK: []byte{0x05, 0xc1}, Admit: true, Trace: map[string]string{"x-ms-activity-id": "a1"},
			Ops: []nodecall.Op{
				{Kind: opUnchanged, LSN: 41},
				{Kind: opCreate, ID: "i1", Body: []byte(`{"id":"i1","pk":"k"}`), Terms: [][]byte{[]byte("t1"), []byte("t2")}, Unique: [][]byte{}},
				{Kind: opReplace, ID: "i2", Body: []byte(`{"id":"i2"}`), IfMatch: `"00000001"`},
				{Kind: opDelete, ID: "i3"},
			}},
		{Container: 3, Split: &nodecall.Split{Parent: 2, At: []byte{0x1f, 0xff}}},
		{Shares: &nodecall.ShareAsk{From: 0x91df, Groups: []nodecall.GroupAsk{{Group: 1<<32 | 4, From: 100, To: 101, Promise: 12.5, Want: 40, Hungry: true}, {Group: 9}}}},
		{Container: 5, Read: &nodecall.Read{Partition: 3, Get: &nodecall.Get{EPK: "05C1", ID: "a"}, Consistency: nodecall.Consistency{Level: 3, Session: map[uint32]uint64{3: 17, math.MaxUint32: 2}}}},
		{Container: 5, Read: &nodecall.Read{Partition: 1, Ranges: [][2]string{{"", "3F"}, {"40", "FF"}}, Start: 9,
			Index: &nodecall.IndexRange{Path: "/a", Lo: []byte{}, Hi: []byte{0x10}}, Consistency: nodecall.Consistency{Level: 1}}},
		{Container: 5, Read: &nodecall.Read{Ranges: [][2]string{{"", "FF"}}, Index: &nodecall.IndexRange{Path: "/t", Values: [][]byte{[]byte("x"), []byte("y")}}}},
		{Container: 5, Read: &nodecall.Read{Rows: &nodecall.Rows{LoEPK: "01", LoID: "a", HiEPK: "02", Reverse: true}}},
		{Container: 5, Read: &nodecall.Read{Ranges: [][2]string{{"", "FF"}}, Count: true, All: true}},
		{Container: 5, Read: &nodecall.Read{Ranges: [][2]string{{"", "FF"}}, All: true}, Low: true},
		{Container: 7, EPK: []byte{1}, Admit: true, Ops: []nodecall.Op{{Kind: opDelete, ID: "a"}}, Low: true},
		{Figures: true},
	} {
		if got := roundTrip(t, &want); !reflect.DeepEqual(got, want) {
			t.Fatalf("read back as\n%+v\nwant\n%+v", got, want)
		}
	}
}

// Delegated calls, one message for each kind, read back as they were sent; and in the JSON of
// the releases before the typed messages, which names their kinds as they did.
func TestTypedCallsRoundTrip(t *testing.T) {
	k := epk.Key{epk.String("k"), epk.Number(math.Copysign(0, -1)), epk.Undefined()}
	patch := &nodecall.Patch{Ops: []document.PatchOp{{Op: "incr", Path: "/n", Value: []byte("1")}, {Op: "move", Path: "/b", From: "/a"}}, Condition: "FROM c WHERE c.n > 1"}
	since := time.Unix(0, 1700000000123456789)
	for _, call := range []*nodecall.Call{
		{Method: nodecall.CallRead, Key: k, ID: "a", Consistency: nodecall.Consistency{Level: 3, Session: map[uint32]uint64{2: 9}}},
		{Method: nodecall.CallRead, Key: epk.Key{}, ID: "a"},
		{Method: nodecall.CallWrite, Key: k, ID: "a", Kind: "Upsert", Body: []byte(`{"id":"a"}`), IfMatch: `"0001"`, IndexingDirective: "Exclude",
			PreTriggers: []string{"t1"}, PostTriggers: []string{"t2", "t3"}, Headers: map[string]string{"x-ms-a": "b"}},
		{Method: nodecall.CallDelete, Key: k, ID: "a", IfMatch: `"0002"`, PostTriggers: []string{"t"}},
		{Method: nodecall.CallPatch, Key: k, ID: "a", Patch: patch},
		{Method: nodecall.CallBatch, Key: k, Batch: []nodecall.BatchOp{{Kind: "Create", ID: "a", Body: []byte(`{"id":"a"}`)}, {Kind: "Read", ID: "b"},
			{Kind: "Patch", ID: "c", IfMatch: `"3"`, Patch: patch}}},
		{Method: nodecall.CallProcedure, Key: k, ID: "bump", Args: []byte(`["a"]`), Log: true, Headers: map[string]string{"h": "v"}},
		{Method: nodecall.CallFeed, Feed: &nodecall.FeedQuery{From: "", To: "3F", Start: nodecall.FeedStart{After: 41, HasAfter: true}, AllVersions: true, Max: 100},
			Consistency: nodecall.Consistency{Level: 1}},
		{Method: nodecall.CallFeed, Feed: &nodecall.FeedQuery{From: "3F", To: "FF", Start: nodecall.FeedStart{Since: since}}},
	} {
		want := nodecall.Request{Container: 9, Call: call, Trace: map[string]string{"traceparent": "00-1"}}
		if got := roundTrip(t, &want); !reflect.DeepEqual(got, want) {
			t.Fatalf("%v read back as\n%+v\nwant\n%+v", call.Method, got.Call, want.Call)
		}
		js, err := Marshal(&want, clusterversion.V2)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(js), `"method":"`+call.Method.String()+`"`) {
			t.Fatalf("%v as JSON: %s", call.Method, js)
		}
		var back nodecall.Request
		if err := json.Unmarshal(js, &back); err != nil || back.Call.Method != call.Method {
			t.Fatalf("%v read back from JSON as %v, %v", call.Method, back.Call, err)
		}
	}
	var unknown nodecall.Call
	if err := json.Unmarshal([]byte(`{"method":"merge"}`), &unknown); err != nil || unknown.Method != nodecall.CallUnknown {
		t.Fatalf(`a call of method "merge" reads as %v, %v`, unknown.Method, err)
	}
}

// Answers read back as they were given, in the kind of their request (a delegated call's in
// its call's kind), through Serve as a node answers.
func TestTypedAnswersRoundTrip(t *testing.T) {
	write := nodecall.Request{Ops: []nodecall.Op{{Kind: opCreate}}}
	call := func(k nodecall.CallKind) nodecall.Request { return nodecall.Request{Call: &nodecall.Call{Method: k}} }
	item := nodecall.ItemResult{Doc: []byte(`{"id":"a"}`), ETag: "0003", LSN: 12, ItemLSN: 11, PartitionID: 2, Created: true, Charge: 6.3}
	for _, c := range []struct {
		req  nodecall.Request
		want nodecall.Answer
	}{
		{write, nodecall.Answer{Index: -1, Charge: 6.2, Charges: []float64{1, 5.2}, Results: []nodecall.Result{{JSON: []byte(`{"id":"a"}`), LSN: 9, Created: true, IndexTerms: 4}, {LSN: 10, PrevBytes: 120}}}},
		{write, nodecall.Answer{Index: 1, Retry: true, Charge: 1, Err: &fault.Error{Kind: fault.Throttled, Message: "slow down", RetryAfter: 250e6, Reason: fault.RangeSplit, Pos: fault.Pos{Line: 1, Column: 2}}}},
		{nodecall.Request{Split: &nodecall.Split{}}, nodecall.Answer{Index: -1, Moved: true}},
		{nodecall.Request{Split: &nodecall.Split{}}, nodecall.Answer{Index: -1, Retry: true, Err: &fault.Error{Kind: fault.Unavailable, Message: "no lease"}}},
		{nodecall.Request{Shares: &nodecall.ShareAsk{}}, nodecall.Answer{Index: -1, Shares: &nodecall.ShareAnswer{Grants: []nodecall.Grant{{Group: 4, Second: 1700000000, PerSecond: 133.3}}}}},
		{nodecall.Request{Read: &nodecall.Read{}}, nodecall.Answer{Index: -1, Read: &nodecall.ReadAnswer{More: true, LSN: 44, Docs: []nodecall.Doc{{Seq: 1, JSON: []byte(`{"id":"a"}`)}, {Seq: 2, JSON: []byte(`{}`), EPK: "0A", ID: "b"}}}}},
		{nodecall.Request{Read: &nodecall.Read{}}, nodecall.Answer{Index: -1, Read: &nodecall.ReadAnswer{Count: 12, Counted: true, LSN: 3, Docs: []nodecall.Doc{}}}},
		{nodecall.Request{Read: &nodecall.Read{}}, nodecall.Answer{Index: -1, Moved: true}},
		{nodecall.Request{Figures: true}, nodecall.Answer{Index: -1, Figures: []nodecall.ReplicaFigure{{Group: 7, Bytes: 1 << 20, RU: 30},
			{Group: 1<<32 | 2, Bytes: 5, RU: 1.5, Full: true, Leading: true, Items: 12, LSN: 99, Total: 4000, Throttled: 3,
				Seconds: []ru.SecondSpent{{Second: 1700000000, RU: 2}}, Trend: []nodecall.TrendFigure{{Start: 1700000000, PeakRU: 9, Normalized: 0.5}},
				Hottest: []nodecall.LogicalFigure{{EPK: "05C1", RU: 1}}}}}},
		{nodecall.Request{Read: &nodecall.Read{}}, nodecall.Answer{Index: -1, Retry: true, Err: &fault.Error{Kind: fault.Unavailable, Message: "behind"}}},
		{call(nodecall.CallRead), nodecall.Answer{Index: -1, Call: &nodecall.CallAnswer{Item: item}}},
		{call(nodecall.CallDelete), nodecall.Answer{Index: -1, Call: &nodecall.CallAnswer{Item: nodecall.ItemResult{LSN: 3, Charge: 1}}, Err: &fault.Error{Kind: fault.NotFound, Message: "gone"}}},
		{call(nodecall.CallWrite), nodecall.Answer{Index: -1, Moved: true}},
		{call(nodecall.CallBatch), nodecall.Answer{Index: -1, Call: &nodecall.CallAnswer{Failed: 1, Batch: []nodecall.OpResult{{Created: true, Charge: 5, ETag: "1", Doc: []byte(`{}`)},
			{Err: &fault.Error{Kind: fault.Conflict, Message: "exists"}, Charge: 1}}}}},
		{call(nodecall.CallProcedure), nodecall.Answer{Index: -1, Call: &nodecall.CallAnswer{Procedure: &nodecall.ProcedureResult{Body: []byte{}, Log: "hi", Charge: 9, LSN: 4, PartitionID: 1}}}},
		{call(nodecall.CallProcedure), nodecall.Answer{Index: -1, Call: &nodecall.CallAnswer{Procedure: &nodecall.ProcedureResult{}}, Err: &fault.Error{Kind: fault.BadRequest, Message: "threw"}}},
		{call(nodecall.CallFeed), nodecall.Answer{Index: -1, Call: &nodecall.CallAnswer{Feed: &nodecall.FeedPage{Through: 40, Partition: 3, LSN: 41, Charge: 2, Changes: []nodecall.FeedChange{
			{LSN: 39, Op: 1, TS: 1700000000, ID: "a", JSON: []byte(`{"id":"a"}`)},
			{LSN: 40, Op: 3, TS: 1700000001, ID: "a", PrevLSN: 39, Prev: []byte(`{"id":"a"}`), Key: epk.Key{epk.String("k")}, Expired: true},
		}}}}},
		{call(nodecall.CallFeed), nodecall.Answer{Index: -1, Call: &nodecall.CallAnswer{Feed: &nodecall.FeedPage{Partition: 3, Changes: []nodecall.FeedChange{}}}}},
	} {
		if c.req.Call != nil && c.req.Call.Method == nodecall.CallFeed {
			c.req.Call.Feed = &nodecall.FeedQuery{}
		}
		raw, err := Marshal(&c.req, clusterversion.NodeMessages)
		if err != nil {
			t.Fatal(err)
		}
		out := Serve(raw, func(nodecall.Request) nodecall.Answer { return c.want })
		if !Typed(out) {
			t.Fatalf("a typed request answered as %s", out)
		}
		got, err := UnmarshalAnswer(out)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Fatalf("read back as\n%+v\nwant\n%+v", got, c.want)
		}
	}
}

// The JSON framing is the one the releases before v3 send and read, byte for byte
// (testdata/json-framing.txt, written by the engine before these types moved here); and what
// it holds reads back as the values written.
func TestJSONFraming(t *testing.T) {
	f, err := os.Open("testdata/json-framing.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k := epk.Key{epk.String("k"), epk.Number(2)}
	patch := &nodecall.Patch{Ops: []document.PatchOp{{Op: "incr", Path: "/n", Value: []byte("1")}}, Condition: "FROM c WHERE c.n > 1"}
	reqs := []nodecall.Request{
		{Container: 7, EPK: []byte{0x05, 0xc1}, Admit: true, Trace: map[string]string{"x-ms-activity-id": "a1"},
			Ops: []nodecall.Op{{Kind: opUnchanged, LSN: 41}, {Kind: opCreate, ID: "i1", Body: []byte(`{"id":"i1"}`), Terms: [][]byte{[]byte("t1")}, Unique: [][]byte{}}}},
		{Container: 3, Split: &nodecall.Split{Parent: 2, At: []byte{0x1f}}},
		{Shares: &nodecall.ShareAsk{From: 0x91df, Groups: []nodecall.GroupAsk{{Group: 1<<32 | 4, From: 100, To: 101, Promise: 12.5, Want: 40, Hungry: true}}}},
		{Container: 5, Read: &nodecall.Read{Partition: 3, Get: &nodecall.Get{EPK: "05C1", ID: "a"}, Consistency: nodecall.Consistency{Level: 3, Session: map[uint32]uint64{3: 17}}}},
		{Container: 5, Read: &nodecall.Read{Partition: 1, Ranges: [][2]string{{"", "3F"}}, Start: 9, Index: &nodecall.IndexRange{Path: "/a", Lo: []byte{}, Hi: []byte{0x10}, Values: [][]byte{[]byte("x")}},
			Rows: &nodecall.Rows{LoEPK: "01", LoID: "a", HiEPK: "02", Reverse: true}, Count: true, All: true}},
		{Figures: true},
		{Container: 9, Call: &nodecall.Call{Method: nodecall.CallWrite, Key: k, ID: "a", Kind: "Upsert", Body: []byte(`{"id":"a"}`), IfMatch: `"1"`, IndexingDirective: "Exclude",
			PreTriggers: []string{"t1"}, PostTriggers: []string{"t2"}, Headers: map[string]string{"x-ms-a": "b"}, Patch: patch, Log: true, Args: []byte(`[1]`),
			Batch:       []nodecall.BatchOp{{Kind: "Patch", ID: "c", Body: []byte(`{}`), IfMatch: `"3"`, Patch: patch}},
			Feed:        &nodecall.FeedQuery{From: "", To: "3F", Start: nodecall.FeedStart{After: 41, HasAfter: true, Now: true, Since: time.Unix(1700000000, 5).UTC()}, AllVersions: true, Max: 100},
			Consistency: nodecall.Consistency{Level: 1}}},
	}
	anss := []nodecall.Answer{
		{Index: 1, Retry: true, Charge: 6.2, Charges: []float64{1, 5.2}, Moved: true, Results: []nodecall.Result{{JSON: []byte(`{"id":"a"}`), LSN: 9, Created: true, PrevBytes: 3, IndexTerms: 4}},
			Err: &fault.Error{Kind: fault.Throttled, Message: "slow down", RetryAfter: 250e6, Reason: fault.RangeSplit, Pos: fault.Pos{Line: 1, Column: 2}}},
		{Index: -1, Shares: &nodecall.ShareAnswer{Grants: []nodecall.Grant{{Group: 4, Second: 1700000000, PerSecond: 133.3}}},
			Read: &nodecall.ReadAnswer{More: true, LSN: 44, Count: 2, Counted: true, Docs: []nodecall.Doc{{Seq: 2, JSON: []byte(`{}`), EPK: "0A", ID: "b"}}},
			Figures: []nodecall.ReplicaFigure{{Group: 1<<32 | 2, Bytes: 5, RU: 1.5, Full: true, Leading: true, Items: 12, LSN: 99, Total: 4000, Throttled: 3,
				Seconds: []ru.SecondSpent{{Second: 1700000000, RU: 2}}, Trend: []nodecall.TrendFigure{{Start: 1700000000, PeakRU: 9, Normalized: 0.5}},
				Hottest: []nodecall.LogicalFigure{{EPK: "05C1", RU: 1, Key: json.RawMessage(`["k"]`)}}}}},
		{Index: -1, Call: &nodecall.CallAnswer{Item: nodecall.ItemResult{Doc: []byte(`{"id":"a"}`), ETag: "0003", LSN: 12, ItemLSN: 11, PartitionID: 2, Created: true, Charge: 6.3},
			Failed: 1, Batch: []nodecall.OpResult{{Created: true, Charge: 5, ETag: "1", Doc: []byte(`{}`), Err: &fault.Error{Kind: fault.Conflict, Message: "exists"}}},
			Procedure: &nodecall.ProcedureResult{Body: []byte(`{}`), Log: "hi", Charge: 9, LSN: 4, PartitionID: 1},
			Feed: &nodecall.FeedPage{Through: 40, Partition: 3, LSN: 41, Charge: 2, Changes: []nodecall.FeedChange{
				{LSN: 40, Op: 3, TS: 1700000001, ID: "a", JSON: []byte(`{}`), PrevLSN: 39, Prev: []byte(`{"id":"a"}`), Key: epk.Key{epk.String("k")}, Expired: true}}}}},
		{Index: -1},
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if len(lines) != len(reqs)+len(anss)+1 {
		t.Fatalf("%d lines in the golden file, want %d", len(lines), len(reqs)+len(anss)+1)
	}
	check := func(kind string, i int, v any, back any) {
		t.Helper()
		want, ok := strings.CutPrefix(lines[i], kind+" ")
		if !ok {
			t.Fatalf("line %d is not %s: %s", i, kind, lines[i])
		}
		got, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("%s %d framed as\n%s\nwant\n%s", kind, i, got, want)
		}
		if err := json.Unmarshal([]byte(want), back); err != nil {
			t.Fatal(err)
		}
	}
	for i := range reqs {
		var back nodecall.Request
		b, err := Marshal(&reqs[i], clusterversion.V2)
		if err != nil || Typed(b) {
			t.Fatalf("at v2 %+v framed as %q, %v", reqs[i], b, err)
		}
		check("REQ", i, &reqs[i], &back)
		if !reflect.DeepEqual(back, reqs[i]) {
			t.Fatalf("request %d read back as\n%+v\nwant\n%+v", i, back, reqs[i])
		}
	}
	for i := range anss {
		back := nodecall.Answer{Index: -1}
		check("ANS", len(reqs)+i, &anss[i], &back)
		if !reflect.DeepEqual(back, anss[i]) {
			t.Fatalf("answer %d read back as\n%+v\nwant\n%+v", i, back, anss[i])
		}
	}
	if got, want := "NOTREADY "+string(NotReady()), lines[len(lines)-1]; got != want {
		t.Fatalf("NotReady is\n%s\nwant\n%s", got, want)
	}
}

// A request in either framing is answered in its own; one that does not decode is answered
// with a BadRequest and never served.
func TestServeFraming(t *testing.T) {
	served := 0
	serve := func(nodecall.Request) nodecall.Answer { served++; return nodecall.Answer{Index: -1, Charge: 2} }
	req := &nodecall.Request{Container: 1, Ops: []nodecall.Op{{Kind: opDelete, ID: "a"}}}
	for _, v := range []clusterversion.Version{clusterversion.V2, clusterversion.NodeMessages} {
		raw, err := Marshal(req, v)
		if err != nil {
			t.Fatal(err)
		}
		out := Serve(raw, serve)
		if Typed(out) != Typed(raw) {
			t.Fatalf("at %s a request answered in the other framing", v)
		}
		if ans, err := UnmarshalAnswer(out); err != nil || ans.Charge != 2 {
			t.Fatalf("at %s: %+v, %v", v, ans, err)
		}
	}
	for _, raw := range [][]byte{[]byte(`{"container":`), {Marker, 0xff, 0xff}} {
		ans, err := UnmarshalAnswer(Serve(raw, serve))
		if err != nil || fault.KindOf(ans.Err) != fault.BadRequest {
			t.Fatalf("%q answered %+v, %v", raw, ans, err)
		}
	}
	if served != 2 {
		t.Fatalf("served %d requests, want 2", served)
	}
	if _, err := UnmarshalAnswer([]byte{Marker, 0xff}); err == nil {
		t.Fatal("an answer that does not decode read back")
	}
}

// A remote read at a consistency level no release knows is refused, not read at the node's
// default, which could be weaker than the client asked for.
func TestTypedReadOfUnknownLevelRefused(t *testing.T) {
	b, err := Encode(&Request{Kind: &Request_Read{Read: &Read{Container: 1,
		Get: &ItemGet{Epk: "00", Id: "a"}, Consistency: &Consistency{Level: 300}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := requestOf(b); fault.KindOf(err) != fault.BadRequest {
		t.Fatalf("read at level 300: %v, want a BadRequest", err)
	}
}

// Whatever bytes arrive as a typed request, reading them fails cleanly or gives a request that
// reads back the same once sent again.
func FuzzDecodeRequest(f *testing.F) {
	for _, req := range []nodecall.Request{
		{Container: 1, EPK: []byte{1}, Ops: []nodecall.Op{{Kind: opCreate, ID: "a", Body: []byte(`{}`), Terms: [][]byte{}}}},
		{Split: &nodecall.Split{Parent: 1, At: []byte{2}}}, {Shares: &nodecall.ShareAsk{From: 1, Groups: []nodecall.GroupAsk{{Group: 2, Want: 3}}}},
		{Read: &nodecall.Read{Ranges: [][2]string{{"", "FF"}}, Index: &nodecall.IndexRange{Path: "/a", Lo: []byte{1}}}},
		{Call: &nodecall.Call{Method: nodecall.CallWrite, Key: epk.Key{epk.String("k")}, ID: "a", Kind: "Create", Body: []byte(`{}`), Headers: map[string]string{"a": "b"}}},
		{Call: &nodecall.Call{Method: nodecall.CallBatch, Key: epk.Key{}, Batch: []nodecall.BatchOp{{Kind: "Patch", Patch: &nodecall.Patch{Ops: []document.PatchOp{{Op: "remove"}}}}}}},
		{Call: &nodecall.Call{Method: nodecall.CallFeed, Feed: &nodecall.FeedQuery{To: "FF", Start: nodecall.FeedStart{Now: true}}}},
	} {
		b, _ := Marshal(&req, clusterversion.NodeMessages)
		f.Add(b)
	}
	f.Add([]byte{Marker})
	f.Add([]byte{Marker, 0x12, 0x02, 0x1a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := requestOf(b)
		if err != nil {
			return
		}
		back := roundTrip(t, &req)
		if !reflect.DeepEqual(normalized(back), normalized(req)) {
			t.Fatalf("%+v read back as %+v", req, back)
		}
	})
}

// normalized is req with empty collections as nil where the encoding does not tell them
// apart (the entries' own bytes, the trace).
func normalized(req nodecall.Request) nodecall.Request {
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
