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
	"github.com/partita-db/partita/internal/tracing"
)

// A forwarded write reads back from its typed message as it was sent: entries computed by the
// sender (even none) stay the sender's, and entries not sent stay for the leader to compute.
func TestTypedWriteRoundTrip(t *testing.T) {
	want := forwarded{Container: 7, EPK: []byte{0x05, 0xc1}, Admit: true, Trace: tracing.Carrier{"x-ms-activity-id": "a1"},
		Ops: []forwardedOp{
			{Kind: partition.Unchanged, LSN: 41},
			{Kind: partition.Create, ID: "i1", Body: []byte(`{"id":"i1","pk":"k"}`), Terms: [][]byte{[]byte("t1"), []byte("t2")}, Unique: [][]byte{}},
			{Kind: partition.Replace, ID: "i2", Body: []byte(`{"id":"i2"}`), IfMatch: `"00000001"`},
			{Kind: partition.Delete, ID: "i3"},
		}}
	b, err := typedWrite(&want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeWrite(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back as\n%+v\nwant\n%+v", got, want)
	}
}

// An answer reads back as it was given, its fault with it.
func TestTypedWriteAnswerRoundTrip(t *testing.T) {
	for _, want := range []forwardedAnswer{
		{Index: -1, Charge: 6.2, Charges: []float64{1, 5.2}, Results: []forwardedResult{{JSON: []byte(`{"id":"a"}`), LSN: 9, Created: true, IndexTerms: 4}, {LSN: 10, PrevBytes: 120}}},
		{Index: 1, Retry: true, Charge: 1, Err: &fault.Error{Kind: fault.Throttled, Message: "slow down", RetryAfter: 250e6, Reason: fault.RangeSplit, Pos: fault.Pos{Line: 1, Column: 2}}},
	} {
		wa := &nodemsg.WriteAnswer{Charges: want.Charges, Charge: want.Charge, Err: typedFault(want.Err), Index: int32(want.Index), Retry: want.Retry}
		for _, r := range want.Results {
			wa.Results = append(wa.Results, &nodemsg.Result{Json: r.JSON, Lsn: r.LSN, Created: r.Created, PrevBytes: int64(r.PrevBytes), IndexTerms: int64(r.IndexTerms)})
		}
		b, err := nodemsg.Encode(&nodemsg.Answer{Kind: &nodemsg.Answer_Write{Write: wa}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeWriteAnswer(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("read back as\n%+v\nwant\n%+v", got, want)
		}
	}
}

// Whatever bytes arrive as a typed write, reading them fails cleanly or gives a write that
// reads back the same once sent again.
func FuzzDecodeWrite(f *testing.F) {
	seed, _ := typedWrite(&forwarded{Container: 1, EPK: []byte{1}, Ops: []forwardedOp{{Kind: partition.Create, ID: "a", Body: []byte(`{}`), Terms: [][]byte{}}}})
	f.Add(seed)
	f.Add([]byte{nodemsg.Marker})
	f.Add([]byte{nodemsg.Marker, 0x12, 0x02, 0x1a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := decodeWrite(b)
		if err != nil {
			return
		}
		again, err := typedWrite(&req)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeWrite(again)
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
