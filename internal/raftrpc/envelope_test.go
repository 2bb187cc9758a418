package raftrpc

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/storage"
)

func sampleEnvelopes() []*replication.Envelope {
	from := replication.Member{Replica: 1, Node: 1, Store: 11}
	to := replication.Member{Replica: 3, Node: 4, Store: 41}
	return []*replication.Envelope{
		{From: replication.Member{Node: 1, Store: 11}, To: replication.Member{Node: 2, Store: 21}}, // a heartbeat
		{Group: 7<<32 | 2, From: from, To: to, Quiesce: true, Term: 5, Commit: 90},
		{Group: 7<<32 | 2, From: from, To: to, Msg: &pb.Message{Type: pb.MessageType_MsgApp.Enum(), To: proto.Uint64(3),
			From: proto.Uint64(1), Term: proto.Uint64(5), LogTerm: proto.Uint64(4), Index: proto.Uint64(88), Commit: proto.Uint64(87),
			Entries: []*pb.Entry{{Term: proto.Uint64(5), Index: proto.Uint64(89), Data: []byte("a command")}}}},
		{Group: 9, From: from, To: to, Msg: &pb.Message{Type: pb.MessageType_MsgSnap.Enum()},
			Snapshot: &replication.SnapshotData{Meta: []byte(`{"id":2}`),
				Spans: []storage.Span{{Start: []byte("a"), End: []byte("b")}, {Start: []byte("c"), End: []byte("d")}},
				SSTs:  [][]byte{bytes.Repeat([]byte{1}, 3000), {}}}},
	}
}

// equalEnvelopes compares two envelopes, their Raft messages as protobuf messages.
func equalEnvelopes(a, b *replication.Envelope) bool {
	if (a.Msg == nil) != (b.Msg == nil) || a.Msg != nil && !proto.Equal(a.Msg, b.Msg) {
		return false
	}
	x, y := *a, *b
	x.Msg, y.Msg = nil, nil
	return reflect.DeepEqual(normalize(&x), normalize(&y))
}

// normalize makes empty byte strings nil, which the encoding does not tell apart.
func normalize(e *replication.Envelope) *replication.Envelope {
	if s := e.Snapshot; s != nil {
		c := &replication.SnapshotData{Meta: nilIfEmpty(s.Meta)}
		for i := range s.Spans {
			c.Spans = append(c.Spans, storage.Span{Start: nilIfEmpty(s.Spans[i].Start), End: nilIfEmpty(s.Spans[i].End)})
			c.SSTs = append(c.SSTs, nilIfEmpty(s.SSTs[i]))
		}
		e.Snapshot = c
	}
	return e
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

func TestEnvelopeRoundTrip(t *testing.T) {
	for i, env := range sampleEnvelopes() {
		b, err := appendEnvelope(nil, env)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeEnvelope(b)
		if err != nil {
			t.Fatalf("envelope %d: %v", i, err)
		}
		if !equalEnvelopes(got, env) {
			t.Fatalf("envelope %d: got %+v, want %+v", i, got, env)
		}
		// Every cut of it is refused, as is anything appended.
		for n := range len(b) {
			if _, err := decodeEnvelope(b[:n]); !errors.Is(err, ErrMalformed) {
				t.Fatalf("envelope %d cut to %d bytes: %v", i, n, err)
			}
		}
		if _, err := decodeEnvelope(append(b, 0)); !errors.Is(err, ErrMalformed) {
			t.Fatalf("envelope %d with a byte more: %v", i, err)
		}
	}
	if _, err := decodeEnvelope([]byte{2}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("version 2: %v", err)
	}
}

// Envelopes come from the network: whatever the bytes, decoding never panics, and what it
// accepts encodes and decodes to the same envelope.
func FuzzEnvelope(f *testing.F) {
	for _, env := range sampleEnvelopes() {
		b, err := appendEnvelope(nil, env)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		env, err := decodeEnvelope(b)
		if err != nil {
			return
		}
		again, err := appendEnvelope(nil, env)
		if err != nil {
			t.Fatalf("decoded %+v, which does not encode: %v", env, err)
		}
		back, err := decodeEnvelope(again)
		if err != nil || !equalEnvelopes(back, env) {
			t.Fatalf("%+v encodes to what decodes as %+v, %v", env, back, err)
		}
	})
}
