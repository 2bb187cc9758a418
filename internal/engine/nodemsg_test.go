package engine

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/partita-db/partita/internal/clusterversion"
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
	// The kind without a message of its own yet goes as JSON.
	for _, req := range []forwarded{{Call: &delegatedCall{}}} {
		if b, err := typedRequest(&req); err != nil || nodemsg.Typed(b) {
			t.Fatalf("%+v: %q, %v; want JSON", req, b, err)
		}
	}
}

// Answers read back as they were given, in the kind of their request.
func TestTypedAnswersRoundTrip(t *testing.T) {
	write := forwarded{Ops: []forwardedOp{{Kind: partition.Create}}}
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
		{Read: &remoteRead{Ranges: [][2]string{{"", "FF"}}, Index: &query.IndexRange{Path: "/a", Lo: []byte{1}}}}} {
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
			case v >= clusterversion.NodeMessages && typed == 0:
				t.Fatalf("at %s: no typed request (%d JSON)", v, untyped)
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
